//===- Norm.h - Softmax and normalization kernels ---------------*- C++ -*-===//
#ifndef TPC_KERNELS_CPU_NORM_H
#define TPC_KERNELS_CPU_NORM_H

#include "kernels/Norm.h"
#include "kernels/cpu/Support.h"

namespace tpc::cpu {

// The params (SoftmaxParams, NormParams) and their builders are
// backend-neutral: kernels/Norm.h.

void softmaxKernel(const SoftmaxParams &p, const void *in, void *out);

/// `bias`, `mean` and `invStdDev` may be nullptr; the statistics, when
/// wanted, are written per row in the input dtype (RMSNormalization writes no mean).
void normKernel(const NormParams &p, const void *x, const void *scale,
                const void *bias, void *y, void *mean, void *invStdDev);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_NORM_H
