//===- Reduce.h - Reductions, arg-reductions, TopK and CumSum ---*- C++ -*-===//
#ifndef TPC_KERNELS_CPU_REDUCE_H
#define TPC_KERNELS_CPU_REDUCE_H

#include "kernels/cpu/Support.h"

namespace tpc::cpu {

enum class ReduceOp { Sum, Mean, Max, Min, Prod, L2, SumSquare };

/// Reduces any set of axes. The input is walked in memory order; the output
/// (which doubles as the accumulator, so no scratch is needed; f16/bf16
/// accumulate in a per-thread float buffer instead) has stride 0
/// along reduced dims. After collapsing, reducing trailing dims gives rows
/// reduced to one value each and reducing leading dims gives rows
/// accumulated into a contiguous output row: both vectorize.
struct ReduceParams {
  ReduceOp op = ReduceOp::Sum;
  DType dtype = DType::F32;
  int64_t outNumel = 0;
  /// Input elements folded into each output element.
  int64_t count = 0;
  /// Operands: 0 output, 1 input (dense).
  StridedLayout<2> layout;
};

/// Max/Min propagate NaN; reducing an empty set gives the identity (0 for
/// sums, 1 for Prod, -inf/+inf or the integer limits for Max/Min, NaN for
/// Mean of floats).
void reduceKernel(const ReduceParams &p, const void *in, void *out);

/// ArgMax / ArgMin of [outer, axisDim, inner] along the middle dim into i64
/// [outer, inner]. Ties go to the first index, or the last with selectLast.
struct ArgReduceParams {
  DType dtype = DType::F32;
  bool isMax = true;
  bool selectLast = false;
  int64_t outer = 0;
  int64_t axisDim = 0;
  int64_t inner = 0;
};

void argReduceKernel(const ArgReduceParams &p, const void *in, int64_t *out);

/// TopK of [outer, axisDim, inner] along the middle dim: the first k
/// elements of each line in the order largest first (smallest first
/// without `largest`), equal values by lower index, NaN above every number
/// (so first when largest, last when not, as in onnxruntime). Values keep
/// the input's dtype and bits, indices are i64; both are [outer, k, inner],
/// always sorted (ONNX leaves the order free with sorted = 0).
struct TopKParams {
  DType dtype = DType::F32;
  bool largest = true;
  int64_t outer = 0;
  int64_t axisDim = 0;
  int64_t inner = 0;
  int64_t k = 0;
};

#ifdef __CUDACC__
#define TPC_HOST_DEVICE __host__ __device__
#else
#define TPC_HOST_DEVICE
#endif

/// Whether (a, ia) comes before (b, ib) in TopK's order: NaN above every
/// number (NaNs equal among themselves), equal values by lower index. `A`
/// is what the kernels compare (float for f16/bf16); the CUDA kernel uses
/// the same function.
template <class A>
TPC_HOST_DEVICE inline bool topKBefore(bool largest, A a, int64_t ia, A b,
                                       int64_t ib) {
  bool an = false, bn = false;
  if constexpr (std::is_floating_point_v<A>) {
    an = a != a; // NaN
    bn = b != b;
  }
  if (an != bn)
    return largest ? an : bn;
  if (!an && a != b)
    return largest ? a > b : a < b;
  return ia < ib;
}

#undef TPC_HOST_DEVICE

/// The params of TopK on input X and outputs (Values, Indices), with
/// attributes k (required: the compiler resolves the K input), axis
/// (default -1), largest and sorted (0 or 1, default 1). Checks every
/// operand and attribute; shared by the CPU and CUDA adapters.
Status makeTopKParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      TopKParams &p);

void topKKernel(const TopKParams &p, const void *in, void *values,
                int64_t *indices);

/// CumSum of [outer, axisDim, inner] along the middle dim; the output has
/// the input's dtype and shape. f32 sums in f32 in axis order, as
/// onnxruntime does, f64 in f64; f16/bf16 sum in float and round each
/// output once; integers wrap.
struct CumSumParams {
  DType dtype = DType::F32;
  /// Leave each element out of its own sum (the first sum is 0).
  bool exclusive = false;
  /// Sum from the end of the axis.
  bool reverse = false;
  int64_t outer = 0;
  int64_t axisDim = 0;
  int64_t inner = 0;
};

/// The params of input `in` for attributes axis (required), exclusive and
/// reverse (0 or 1, default 0). Shared by the CPU and CUDA adapters; checks
/// only what the params depend on.
Status makeCumSumParams(const TensorDesc &in, const Attrs &attrs,
                        CumSumParams &p);

void cumSumKernel(const CumSumParams &p, const void *in, void *out);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_REDUCE_H
