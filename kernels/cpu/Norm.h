//===- Norm.h - Softmax and normalization kernels ---------------*- C++ -*-===//
#ifndef TPC_KERNELS_CPU_NORM_H
#define TPC_KERNELS_CPU_NORM_H

#include "kernels/cpu/Support.h"

namespace tpc::cpu {

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

void softmaxKernel(const SoftmaxParams &p, const void *in, void *out);

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
  double epsilon = 1e-5;
};

/// `bias`, `mean` and `invStdDev` may be nullptr; the statistics, when
/// wanted, are written per row in the input dtype (RMSNormalization writes no mean).
void normKernel(const NormParams &p, const void *x, const void *scale,
                const void *bias, void *y, void *mean, void *invStdDev);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_NORM_H
