//===- Fused.cu - Kernels of the fused ops (Attention, SwiGLU) ------------===//
//
// Attention gives each query row to one block: its scores over every key
// live in shared memory (so kvLen is bounded, kMaxAttentionKeys), each warp
// computes whole dot products with a shuffle reduction, the block finds the
// row's max and sum, and the threads then sweep the value rows across vDim
// (coalesced). Accumulation is f32 (f64 for f64). Simple rather than fast:
// the reference for a tiled kernel. SwiGLU is one elementwise pass.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/DeviceUtil.cuh"
#include "kernels/cuda/Kernels.h"

#include <algorithm>
#include <limits>

namespace tpc::cuda {
namespace {

template <class A> __device__ A blockMax(A v, A *smem) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads(); // smem may still be read by a previous reduction
  if (lane == 0)
    smem[warp] = v;
  __syncthreads();
  v = lane < warps ? smem[lane] : -std::numeric_limits<A>::infinity();
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

template <class T>
__global__ void attentionRows(const __grid_constant__ AttentionParams p,
                              const T *q, const T *k, const T *v,
                              const void *mask, T *y) {
  using A = Compute<T>;
  extern __shared__ unsigned char smemRaw[];
  A *s = reinterpret_cast<A *>(smemRaw);
  __shared__ A red[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = blockDim.x >> 5;
  const int64_t rows = p.batch * p.qHeads * p.qLen;
  const int64_t group = p.qHeads / p.kvHeads;
  const A negInf = -std::numeric_limits<A>::infinity();
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t i = row % p.qLen, bh = row / p.qLen;
    const int64_t h = bh % p.qHeads, b = bh / p.qHeads;
    const int64_t kvh = b * p.kvHeads + h / group;
    const T *qr = q + row * p.headDim;
    const T *kb = k + kvh * p.kvLen * p.headDim;
    const T *vb = v + kvh * p.kvLen * p.vDim;
    const int64_t maskRow =
        b * p.maskStrides[0] + h * p.maskStrides[1] + i * p.maskStrides[2];
    for (int64_t j = warp; j < p.kvLen; j += warps) {
      A acc = 0;
      for (int64_t d = lane; d < p.headDim; d += 32)
        acc += toCompute(qr[d]) * toCompute(kb[j * p.headDim + d]);
      acc = warpSum(acc);
      if (lane == 0) {
        A sc = acc * A(p.scale);
        const int64_t m = maskRow + j * p.maskStrides[3];
        if (p.mask == AttentionParams::Mask::Float)
          sc += toCompute(static_cast<const T *>(mask)[m]);
        else if (p.mask == AttentionParams::Mask::Bool &&
                 !static_cast<const uint8_t *>(mask)[m])
          sc = negInf;
        if (p.causal && j > i)
          sc = negInf;
        s[j] = sc;
      }
    }
    __syncthreads();
    A mx = negInf;
    for (int64_t j = threadIdx.x; j < p.kvLen; j += blockDim.x)
      mx = fmax(mx, s[j]);
    mx = blockMax(mx, red);
    A sum = 0;
    for (int64_t j = threadIdx.x; j < p.kvLen; j += blockDim.x) {
      const A e = exp(s[j] - mx); // a fully masked row gives NaN, as on CPU
      s[j] = e;
      sum += e;
    }
    sum = blockSum(sum, red); // its barriers also publish s[]
    const A inv = A(1) / sum;
    for (int64_t d = threadIdx.x; d < p.vDim; d += blockDim.x) {
      A acc = 0;
      for (int64_t j = 0; j < p.kvLen; ++j)
        acc += s[j] * toCompute(vb[j * p.vDim + d]);
      y[row * p.vDim + d] = fromCompute<T>(acc * inv);
    }
    __syncthreads(); // s[] is rewritten for the next row
  }
}

template <class T>
__global__ void swigluTyped(const T *gate, const T *up, T *y, int64_t n) {
  using A = Compute<T>;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const A g = toCompute(gate[i]);
    // Never exponentiate a positive number (as the Sigmoid kernel).
    const A sig = g >= 0 ? A(1) / (A(1) + exp(-g)) : exp(g) / (A(1) + exp(g));
    y[i] = fromCompute<T>(g * sig * toCompute(up[i]));
  }
}

template <class F> cudaError_t visitFloat(DType t, F &&f) {
  switch (t) {
  case DType::F32: return f(float{});
  case DType::F64: return f(double{});
  case DType::F16: return f(__half{});
  case DType::BF16: return f(__nv_bfloat16{});
  default: return cudaErrorInvalidValue;
  }
}

constexpr int kAttentionThreads = 128;

} // namespace

size_t attentionSharedBytes(const AttentionParams &p) {
  return size_t(p.kvLen) * (p.dtype == DType::F64 ? 8 : 4);
}

cudaError_t attentionKernel(const AttentionParams &p, const void *q,
                            const void *k, const void *v, const void *mask,
                            void *y, cudaStream_t stream) {
  const int64_t rows = p.batch * p.qHeads * p.qLen;
  if (rows == 0 || p.vDim == 0)
    return cudaSuccess;
  if (p.kvLen > kMaxAttentionKeys || p.kvHeads <= 0)
    return cudaErrorInvalidValue;
  const unsigned blocks = unsigned(std::min<int64_t>(rows, 1 << 20));
  const size_t smem = std::max<size_t>(attentionSharedBytes(p), 8);
  return visitFloat(p.dtype, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    attentionRows<T><<<blocks, kAttentionThreads, smem, stream>>>(
        p, static_cast<const T *>(q), static_cast<const T *>(k),
        static_cast<const T *>(v), mask, static_cast<T *>(y));
    return cudaGetLastError();
  });
}

cudaError_t swigluKernel(DType dtype, int64_t numel, const void *gate,
                         const void *up, void *y, cudaStream_t stream) {
  if (numel == 0)
    return cudaSuccess;
  return visitFloat(dtype, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    swigluTyped<T><<<blocksFor(numel), kThreads, 0, stream>>>(
        static_cast<const T *>(gate), static_cast<const T *>(up),
        static_cast<T *>(y), numel);
    return cudaGetLastError();
  });
}

} // namespace tpc::cuda
