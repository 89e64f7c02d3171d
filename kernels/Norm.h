//===- Norm.h - The normalization kernels, for every backend ----*- C++ -*-===//
//
// Softmax, LogSoftmax, LayerNormalization and RMSNormalization: the params
// both backends run from and their builders, which validate the operand
// descriptions and read the attributes. The attributes come from the plan,
// which carries each with the onnx dialect's default (ODS): a kernel states
// no default of its own.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_NORM_H
#define TPC_KERNELS_NORM_H

#include "kernels/Family.h"
#include "kernels/Layout.h"

#include <vector>

namespace tpc {

// X(Name, summary): the normalization kernels, which both kernel tables
// list; Name is the kernel and its NormOp.
#define TPC_NORM_KERNELS(X)                                                    \
  X(Softmax, "softmax along attr axis")                                        \
  X(LogSoftmax, "log of softmax along attr axis")                              \
  X(LayerNormalization, "normalize dims [axis, rank) then scale and shift")    \
  X(RMSNormalization, "x / rms(x) * scale over dims [axis, rank)")

TPC_DECLARE_KERNEL_FAMILY(NormOp, kNormKernels, TPC_NORM_KERNELS);

constexpr bool isSoftmax(NormOp op) {
  return op == NormOp::Softmax || op == NormOp::LogSoftmax;
}

/// Softmax or LogSoftmax of [outer, axis, inner] along the middle dim
/// (ONNX opset 13 semantics). -inf entries give 0 (-inf for LogSoftmax) as
/// long as one entry is finite; f16/bf16 are computed in float.
struct SoftmaxParams {
  DType dtype = DType::F32;
  bool log = false;
  int64_t outer = 0;
  int64_t axis = 0;
  int64_t inner = 0;
};

/// LayerNormalization or RMSNormalization of `outer` rows of `norm` elements:
///   layer: y = (x - mean) / sqrt(var + eps) * scale + bias
///   rms:   y = x / sqrt(mean(x^2) + eps) * scale
/// Row statistics accumulate in double; f16/bf16 outputs are computed in
/// float and rounded once.
struct NormParams {
  DType dtype = DType::F32;
  bool rms = false;
  int64_t outer = 0;
  int64_t norm = 0;
  double epsilon = 0;
  /// LayerNormalization's optional operands: input 2 (B), outputs 1 (Mean)
  /// and 2 (InvStdDev).
  bool hasBias = false;
  bool wantMean = false;
  bool wantInvStdDev = false;
};

/// Softmax (or LogSoftmax with `log`): one input and one output of a float
/// type; attribute `axis`.
Status makeSoftmaxParams(bool log, const std::vector<TensorDesc> &in,
                         const std::vector<TensorDesc> &out,
                         const Attrs &attrs, SoftmaxParams &p);

/// LayerNormalization (X, Scale, optional B -> Y, optional Mean and
/// InvStdDev) or, with `rms`, RMSNormalization (X, Scale -> Y); attributes
/// `axis` and `epsilon`.
Status makeNormParams(bool rms, const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      NormParams &p);

/// AddNormalization (A, B, Scale, optional Bias -> Y, Sum): Sum = A + B,
/// then LayerNormalization (attribute rms = 0) or RMSNormalization (rms = 1)
/// of Sum; attributes `axis`, `epsilon` and `rms`. A and B have one shape.
Status makeAddNormParams(const std::vector<TensorDesc> &in,
                         const std::vector<TensorDesc> &out,
                         const Attrs &attrs, NormParams &p);

} // namespace tpc

#endif // TPC_KERNELS_NORM_H
