//===- Fused.h - Kernels of fused ops ---------------------------*- C++ -*-===//
//
// Reference kernels for the ops the fusion passes produce. They are plain
// loops that accumulate in double: exact rather than fast.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_FUSED_H
#define TPC_KERNELS_CPU_FUSED_H

#include "kernels/cpu/Support.h"

namespace tpc::cpu {

/// Scaled dot-product attention (ONNX Attention, opset 23, 4-D form):
///   Y[b,h,i,:] = softmax_j(scale * Q[b,h,i,:] . K[b,g,j,:] + mask[b,h,i,j])
///                . V[b,g,j,:]
/// with Q [batch, qHeads, qLen, headDim], K [batch, kvHeads, kvLen, headDim],
/// V [batch, kvHeads, kvLen, vDim], Y [batch, qHeads, qLen, vDim], dense and
/// row-major; f32, f64, f16 or bf16 (16-bit operands widen, results
/// round once). GQA: query head h reads kv head g = h / (qHeads / kvHeads).
/// A boolean mask keeps the scores where it is true (-inf elsewhere); a float
/// mask is added. `causal` also masks j > i (upper-left aligned, as ONNX).
/// A row with every score masked gives NaN, as the unfused softmax does.
struct AttentionParams {
  enum class Mask { None, Float, Bool };
  DType dtype = DType::F32;
  int64_t batch = 0;
  int64_t qHeads = 0;
  int64_t kvHeads = 0;
  int64_t qLen = 0;
  int64_t kvLen = 0;
  int64_t headDim = 0;
  int64_t vDim = 0;
  double scale = 1.0;
  bool causal = false;
  Mask mask = Mask::None;
  /// Element strides of the mask along [batch, qHeads, qLen, kvLen]; 0 where
  /// the mask broadcasts.
  int64_t maskStrides[4] = {0, 0, 0, 0};
};

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

/// SwiGLU: y = silu(gate) * up = gate * sigmoid(gate) * up, elementwise over
/// `numel` elements of two same-shape tensors.
struct SwiGLUParams {
  DType dtype = DType::F32;
  int64_t numel = 0;
};

void swigluKernel(const SwiGLUParams &p, const void *gate, const void *up,
                  void *y);

/// sum[i] = a[i] + b[i] for `numel` floats of `dtype`, rounded as the Add
/// kernel rounds; the residual half of AddNormalization.
void addKernel(DType dtype, int64_t numel, const void *a, const void *b,
               void *sum);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_FUSED_H
