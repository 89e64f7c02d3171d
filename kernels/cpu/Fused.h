//===- Fused.h - Kernels of fused ops ---------------------------*- C++ -*-===//
//
// The CPU kernels of the ops the fusion passes produce; their params and
// builders are backend-neutral (kernels/Fused.h).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_FUSED_H
#define TPC_KERNELS_CPU_FUSED_H

#include "kernels/Fused.h"
#include "kernels/cpu/Support.h"

namespace tpc::cpu {

/// `mask` is nullptr when p.mask is None; bool masks are one byte each.
/// f32 runs blocked on sgemm with `numThreads` threads (attentionF32), f16
/// and bf16 too after widening exactly (results rounded once); f64 on the
/// double-precision loop.
void attentionKernel(const AttentionParams &p, const void *q, const void *k,
                     const void *v, const void *mask, void *y,
                     int numThreads = 1);

/// The f32 kernel: scores one tile at a time with an online softmax.
void attentionF32(const AttentionParams &p, const float *q, const float *k,
                  const float *v, const void *mask, float *y, int numThreads);

void swigluKernel(const SwiGLUParams &p, const void *gate, const void *up,
                  void *y);

/// sum[i] = a[i] + b[i] for `numel` floats of `dtype`, rounded as the Add
/// kernel rounds; the residual half of AddNormalization.
void addKernel(DType dtype, int64_t numel, const void *a, const void *b,
               void *sum);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_FUSED_H
