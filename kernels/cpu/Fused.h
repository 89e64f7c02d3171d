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
/// `kvLengths` (nonpad_kv_seqlen, int64 [batch]) is nullptr when the op
/// has none. f32, f16 and bf16 run blocked on sgemm with `numThreads`
/// threads (attentionBlocked; 16-bit operands widened exactly, a block at a
/// time, results rounded once); f64 on the double-precision loop.
void attentionKernel(const AttentionParams &p, const void *q, const void *k,
                     const void *v, const void *mask,
                     const int64_t *kvLengths, void *y, int numThreads = 1);

/// The blocked kernel: scores one tile at a time with an online softmax,
/// for T = float, Half or BFloat16.
template <class T>
void attentionBlocked(const AttentionParams &p, const T *q, const T *k,
                      const T *v, const void *mask, const int64_t *kvLengths,
                      T *y, int numThreads);

void swigluKernel(const SwiGLUParams &p, const void *gate, const void *up,
                  void *y);

/// sum[i] = a[i] + b[i] for `numel` floats of `dtype`, rounded as the Add
/// kernel rounds; the residual half of AddNormalization.
void addKernel(DType dtype, int64_t numel, const void *a, const void *b,
               void *sum);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_FUSED_H
