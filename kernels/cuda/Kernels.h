//===- Kernels.h - CUDA launch functions ------------------------*- C++ -*-===//
//
// One launch function per kernel, the twin of the CPU kernel of the same
// name: the same params struct (from kernels/cpu/*.h) and operands, plus the
// stream to enqueue on. Each returns the launch error, if any. Pointers are
// device pointers, aligned to their element size. Besides the CPU dtypes,
// the arithmetic kernels take f16 and bf16 (computed in f32).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CUDA_KERNELS_H
#define TPC_KERNELS_CUDA_KERNELS_H

#include "kernels/Copy.h"
#include "kernels/Fused.h"
#include "kernels/Movement.h"
#include "kernels/Unary.h"
#include "kernels/cpu/Binary.h"
#include "kernels/cpu/Norm.h"
#include "kernels/cpu/Reduce.h"

#include <cuda_runtime_api.h>

namespace tpc::cuda {

/// Multiprocessors of the current device (cached per device; a failed
/// query gives a typical count, which only affects grid sizes).
int deviceSmCount();

// Elementwise.cu
cudaError_t binaryKernel(const BinaryParams &p, const void *lhs,
                         const void *rhs, void *out, cudaStream_t stream);
cudaError_t whereKernel(const WhereParams &p, const uint8_t *cond,
                        const void *x, const void *y, void *out,
                        cudaStream_t stream);
cudaError_t unaryKernel(const UnaryParams &p, const void *in, void *out,
                        cudaStream_t stream);
cudaError_t castKernel(const CastParams &p, const void *in, void *out,
                       cudaStream_t stream);
/// data[i] *= scale for `numel` floating-point elements (the Mean kernel).
cudaError_t scaleKernel(DType dtype, int64_t numel, double scale, void *data,
                        cudaStream_t stream);
/// out[i] = start + i * delta; start and delta are device scalars.
cudaError_t rangeKernel(DType dtype, int64_t numel, const void *start,
                        const void *delta, void *out, cudaStream_t stream);

/// Operands of sumAcross: up to kMaxSumOperands buffers of one dtype.
constexpr int kMaxSumOperands = 16;
/// For every i < count: s = sum over j of srcs[j][i], accumulated in f32
/// for f16/bf16 and wrapping for integers; then dsts[k][i] = s for every k.
/// A destination may be one of the sources (in place). The on-device
/// communicator's reduction.
cudaError_t sumAcross(DType dtype, size_t count, const void *const *srcs,
                      int numSrcs, void *const *dsts, int numDsts,
                      cudaStream_t stream);

// Norm.cu
cudaError_t softmaxKernel(const SoftmaxParams &p, const void *in,
                          void *out, cudaStream_t stream);
cudaError_t normKernel(const NormParams &p, const void *x,
                       const void *scale, const void *bias, void *y,
                       void *mean, void *invStdDev, cudaStream_t stream);
/// AddNormalization in one launch: sum = x + residual (rounded to the
/// dtype), y = norm(sum); `sum` may be x or residual.
cudaError_t addNormKernel(const NormParams &p, const void *x,
                          const void *residual, void *sum, const void *scale,
                          const void *bias, void *y, cudaStream_t stream);
cudaError_t reduceKernel(const ReduceParams &p, const void *in,
                         void *out, cudaStream_t stream);
/// ArgMax / ArgMin into i64, with the CPU kernel's tie and NaN rules.
cudaError_t argReduceKernel(const ArgReduceParams &p, const void *in,
                            int64_t *out, cudaStream_t stream);
/// Running sums with the CPU kernel's accumulation types; integer sums wrap.
/// Rows longer than a warp (inner == 1) are scanned by a block in tree
/// order, so float sums may round differently from the CPU's.
cudaError_t cumSumKernel(const CumSumParams &p, const void *in, void *out,
                         cudaStream_t stream);

// TopK.cu
/// TopK in the CPU kernel's order (NaN above every number, ties by lower
/// index), values copied bit for bit: a block per line picks the k
/// elements one after the other, so the result equals the CPU's.
cudaError_t topKKernel(const TopKParams &p, const void *in, void *values,
                       int64_t *indices, cudaStream_t stream);

// Movement.cu
cudaError_t stridedCopy(const StridedCopyParams &p, const void *in, void *out,
                        cudaStream_t stream);
cudaError_t concatKernel(const ConcatParams &p, const void *const *inputs,
                         void *out, cudaStream_t stream);
/// Copies the update's rows into `state` at entry *position (read on the
/// device); nothing is written when the position is outside
/// [0, length - n].
cudaError_t cacheWriteKernel(const CacheWriteParams &p, const void *update,
                             const int64_t *position, void *state,
                             cudaStream_t stream);
cudaError_t splitKernel(const ConcatParams &p, const void *in,
                        void *const *outputs, cudaStream_t stream);
cudaError_t gatherKernel(const GatherParams &p, const void *data,
                         const void *indices, void *out, cudaStream_t stream);
cudaError_t gatherElementsKernel(const GatherElementsParams &p,
                                 const void *data, const void *indices,
                                 void *out, cudaStream_t stream);
cudaError_t gatherNDKernel(const GatherNDParams &p, const void *data,
                           const void *indices, void *out, cudaStream_t stream);
cudaError_t triluKernel(const TriluParams &p, const void *in, void *out,
                        cudaStream_t stream);
/// Copies data to out (unless they are one buffer), then scatters with the
/// CPU kernel's index rules (out-of-range tuples skipped). Reduction none
/// writes a thread per element, so duplicate tuples race (ONNX leaves them
/// undefined); reductions walk the tuples in order per slice element, which
/// is deterministic and matches the CPU bit for bit.
cudaError_t scatterNDKernel(const ScatterNDParams &p, const void *data,
                            const void *indices, const void *updates, void *out,
                            cudaStream_t stream);

/// Copies data to out (unless they are one buffer), then a thread per line
/// along the axis applies the line's updates in order, skipping elements
/// whose index is out of range: every reduction, and reduction none with
/// duplicate indices (the last wins), matches the CPU bit for bit.
cudaError_t scatterElementsKernel(const ScatterElementsParams &p,
                                  const void *data, const void *indices,
                                  const void *updates, void *out,
                                  cudaStream_t stream);

/// Fills `numel` elements of `elemSize` bytes with the pattern at host
/// address `value` (passed to the kernel by value).
cudaError_t fillKernel(size_t elemSize, int64_t numel, const void *value,
                       void *out, cudaStream_t stream);

// Fused.cu
/// Keys one Attention row may have in the row kernel (f64, heads over 128
/// wide): its scores live in shared memory (48 KiB with the reduction
/// scratch, f64 included). The tiled kernel has no such bound.
constexpr int64_t kMaxAttentionKeys = 6016;
/// Whether attentionKernel runs `p` with the tiled kernel (online softmax,
/// any number of keys) rather than one block per query row.
bool attentionUsesTiles(const AttentionParams &p);
/// Dynamic shared memory of attentionKernel's blocks.
size_t attentionSharedBytes(const AttentionParams &p);
/// Y = softmax(scale * Q K^T + mask) V per (batch, head), as the CPU kernel;
/// `kvLengths` (device int64 [batch], nonpad_kv_seqlen) may be nullptr.
cudaError_t attentionKernel(const AttentionParams &p, const void *q,
                            const void *k, const void *v, const void *mask,
                            const int64_t *kvLengths, void *y,
                            cudaStream_t stream);
/// Y = A x dequantize(B)^T for block-quantized B (MatMulNBitsParams);
/// `zero` is null for the default zero point.
cudaError_t matMulNBitsKernel(const MatMulNBitsParams &p, const void *a,
                              const void *codes, const void *scales,
                              const void *zero, void *y, cudaStream_t stream);
/// y = gate * sigmoid(gate) * up over `numel` floats.
cudaError_t swigluKernel(DType dtype, int64_t numel, const void *gate,
                         const void *up, void *y, cudaStream_t stream);

/// Dims a GatherND or ScatterND tuple may address on the GPU.
constexpr int kMaxGatherNDDepth = 8;

} // namespace tpc::cuda

#endif // TPC_KERNELS_CUDA_KERNELS_H
