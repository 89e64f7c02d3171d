//===- Fused.h - The fused kernels, for every backend -----------*- C++ -*-===//
//
// The ops the fusion passes produce: MatMulBias, AddNormalization (its
// params are the norm's, kernels/Norm.h), Attention, SwiGLU and
// MatMulNBits. This header
// holds the list both kernel tables follow, the params both backends run
// from and their builders, which validate the operand descriptions and
// read the attributes: those the onnx dialect defaults (is_causal,
// activation) come from the plan; Attention's optional scale means
// 1/sqrt(head_dim) when absent, as in ONNX.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_FUSED_H
#define TPC_KERNELS_FUSED_H

#include "kernels/Family.h"
#include "kernels/HostDevice.h"
#include "kernels/Layout.h"

#include <vector>

namespace tpc {

// X(Name, summary): the fused kernels, in the order both kernel tables list
// them; Name is the kernel and its FusedOp.
#define TPC_FUSED_KERNELS(X)                                                   \
  X(MatMulBias,                                                                \
    "act(A x B + bias), B [K, N] (attr activation none, relu, gelu, "          \
    "gelu_tanh)")                                                              \
  X(AddNormalization,                                                          \
    "Sum = A + B, Y = layer or RMS norm of Sum (attrs axis, epsilon, rms)")    \
  X(Attention,                                                                 \
    "softmax(scale * Q K^T + mask) V, GQA, causal (attrs scale, is_causal)")   \
  X(SwiGLU, "silu(gate) * up")                                                 \
  X(MatMulNBits,                                                               \
    "A x dequantize(B)^T, B [N, blocks, bytes] of 4- or 8-bit codes per "      \
    "block of K, one scale and zero point per block (attrs bits, block_size)")

TPC_DECLARE_KERNEL_FAMILY(FusedOp, kFusedKernels, TPC_FUSED_KERNELS);

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
  /// Which input holds nonpad_kv_seqlen (int64 [batch]: keys at or past it
  /// are masked, and never read), or -1 where there is none.
  int kvLengthsInput = -1;
  /// A row whose softmax is NaN (every key masked, or a NaN score) gives
  /// zeros instead of NaN (the attribute nan_to_zero; the guard of
  /// PyTorch's SDPA export).
  bool nanToZero = false;
};

/// The keys batch b attends to, [0, validKeyCount): nonpad_kv_seqlen[b]
/// clamped to [0, kvLen], or every key without it.
TPC_HOST_DEVICE int64_t validKeyCount(const AttentionParams &p,
                                      const int64_t *kvLengths, int64_t b) {
  if (!kvLengths)
    return p.kvLen;
  const int64_t n = kvLengths[b];
  return n < 0 ? 0 : (n > p.kvLen ? p.kvLen : n);
}

/// Attention (Q, K, V, optional attn_mask of bool or Q's dtype, optional
/// nonpad_kv_seqlen of int64 [batch] -> Y; the two optional inputs are told
/// apart by their dtype); attributes is_causal and, optionally, scale.
Status makeAttentionParams(const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out,
                           const Attrs &attrs, AttentionParams &p);

/// SwiGLU: y = silu(gate) * up = gate * sigmoid(gate) * up, elementwise over
/// `numel` elements of two same-shape tensors.
struct SwiGLUParams {
  DType dtype = DType::F32;
  int64_t numel = 0;
};

/// SwiGLU (gate, up -> y), all of one float dtype and shape.
Status makeSwiGLUParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, SwiGLUParams &p);

/// The activation MatMulBias applies after the bias.
enum class BiasActivation { None, Relu, Gelu, GeluTanh };

/// MatMulBias: Y = act(A x B + bias) with A [..., K] seen as [rows, K],
/// B [K, N] and one bias value per column.
struct MatMulBiasParams {
  DType dtype = DType::F32;
  int64_t rows = 0;
  int64_t n = 0;
  int64_t k = 0;
  BiasActivation activation = BiasActivation::None;
};

/// MatMulBias (A, B, Bias -> Y) of one float dtype; attribute activation
/// (none, relu, gelu or gelu_tanh).
Status makeMatMulBiasParams(const std::vector<TensorDesc> &in,
                            const std::vector<TensorDesc> &out,
                            const Attrs &attrs, MatMulBiasParams &p);

/// MatMulNBits: Y [rows, N] = A [rows, K] x W^T with W [N, K] stored per
/// column in blocks of K of `blockSize` codes of `bits` bits, packed low
/// first into bytes (B [N, blocks, blockSize * bits / 8], uint8), and
/// W[n, k] = (code - zero) * scale of k's block. `zero` is the default
/// 2^(bits - 1), a packed uint8 code per block ([N, ceil(blocks * bits /
/// 8)]), a float per block, or one float for every block. The last block
/// is zero-padded past K. Scales and float zero points may be f32, f16 or
/// bf16; A and Y are one float type (f32, f16 or bf16).
struct MatMulNBitsParams {
  enum class Zero { Default, Packed, PerBlock, Scalar };
  DType dtype = DType::F32;
  int64_t rows = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t blocks = 0;
  int bits = 4;
  int64_t blockSize = 32;
  DType scaleType = DType::F32;
  Zero zero = Zero::Default;
  DType zeroType = DType::U8;
};

/// MatMulNBits (A, B, scales, optional zero_points -> Y); attributes bits
/// (4 or 8) and block_size (a power of two, 16 to 256).
Status makeMatMulNBitsParams(const std::vector<TensorDesc> &in,
                             const std::vector<TensorDesc> &out,
                             const Attrs &attrs, MatMulNBitsParams &p);

} // namespace tpc

#endif // TPC_KERNELS_FUSED_H
