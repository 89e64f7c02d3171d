//===- Reduce.h - Reductions, TopK and CumSum, for every backend -*- C++ -*-===//
//
// The params that the CPU and CUDA reduction kernels run from, and their
// builders, which validate the operand descriptions and read the
// attributes. Every attribute comes from the plan, which carries each with
// the onnx dialect's default (ODS): a kernel states no default of its own.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_REDUCE_H
#define TPC_KERNELS_REDUCE_H

#include "kernels/Family.h"
#include "kernels/Layout.h"

#include <type_traits>
#include <vector>

namespace tpc {

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

/// The Reduce* kernels.
using ReduceKernelInfo = FamilyKernel<ReduceOp>;

inline constexpr ReduceKernelInfo kReduceKernels[] = {
    {"ReduceSum", "sum over attr axes", ReduceOp::Sum},
    {"ReduceMean", "mean over attr axes", ReduceOp::Mean},
    {"ReduceMax", "max over attr axes (NaN propagates)", ReduceOp::Max},
    {"ReduceMin", "min over attr axes (NaN propagates)", ReduceOp::Min},
    {"ReduceProd", "product over attr axes", ReduceOp::Prod},
    {"ReduceL2", "sqrt of sum of squares over attr axes", ReduceOp::L2},
    {"ReduceSumSquare", "sum of squares over attr axes", ReduceOp::SumSquare},
};

// X(Name, summary): the kernels that reduce along one axis to indices, or
// scan it; Name is the kernel and its AxisOp.
#define TPC_AXIS_KERNELS(X)                                                    \
  X(ArgMax, "index of the max along attr axis -> i64")                         \
  X(ArgMin, "index of the min along attr axis -> i64")                         \
  X(TopK,                                                                      \
    "k largest (attr largest = 0: smallest) along attr axis, sorted; values"   \
    " and i64 indices")                                                        \
  X(CumSum, "running sums along attr axis (attrs exclusive, reverse)")

TPC_DECLARE_KERNEL_FAMILY(AxisOp, kAxisKernels, TPC_AXIS_KERNELS);

/// ONNX Reduce*: attributes axes (possibly empty), keepdims and
/// noop_with_empty_axes. Empty axes reduce everything unless
/// noop_with_empty_axes is set; then no axis is reduced, which maps each
/// element on its own (x for most ops, x*x for SumSquare, |x| for L2).
Status makeReduceParams(ReduceOp op, const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        ReduceParams &p);

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

/// ArgMax (`isMax`) or ArgMin: attributes axis, keepdims and
/// select_last_index.
Status makeArgReduceParams(bool isMax, const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out,
                           const Attrs &attrs, ArgReduceParams &p);

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
#define TPC_TOPK_HOST_DEVICE __host__ __device__
#else
#define TPC_TOPK_HOST_DEVICE
#endif

/// Whether (a, ia) comes before (b, ib) in TopK's order: NaN above every
/// number (NaNs equal among themselves), equal values by lower index. `A`
/// is what the kernels compare (float for f16/bf16); the CUDA kernel uses
/// the same function.
template <class A>
TPC_TOPK_HOST_DEVICE inline bool topKBefore(bool largest, A a, int64_t ia, A b,
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

#undef TPC_TOPK_HOST_DEVICE

/// The params of TopK on input X and outputs (Values, Indices), with
/// attributes k (the compiler resolves the K input), axis, largest and
/// sorted (0 or 1).
Status makeTopKParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      TopKParams &p);

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

/// CumSum: one input and one output of its dtype and shape; attributes
/// axis (the compiler resolves the axis input), exclusive and reverse (0
/// or 1).
Status makeCumSumParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        CumSumParams &p);

} // namespace tpc

#endif // TPC_KERNELS_REDUCE_H
