//===- Fused.cu - Kernels of the fused ops (Attention, SwiGLU) ------------===//
//
// Attention has two kernels.
//
// attentionTiles (f32, f16, bf16; head sizes up to 128): a block takes 16
// query rows of one (batch, head) and sweeps the keys in tiles of 32: the
// tile's keys and values are staged in shared memory once for all 16 rows,
// each lane scores one key against four rows, and the softmax is online
// (running max and sum per row, earlier partial sums rescaled), so any
// number of keys fits and K and V are read from memory once per 16 rows
// instead of once per row. Causal blocks stop at their last row's key.
//
// attentionRows (the rest: f64, larger heads): each query row to one block;
// its scores over every key live in shared memory (so kvLen is bounded,
// kMaxAttentionKeys), each warp computes whole dot products with a shuffle
// reduction, the block finds the row's max and sum, and the threads then
// sweep the value rows across vDim. It also serves single-row (decode)
// queries, where a 16-row tile would idle.
//
// Both accumulate in f32 (f64 for f64); a row whose every key is masked
// gives NaN, as on the CPU. Both stop at the batch's nonpad_kv_seqlen (the
// filled positions of a KV cache), read on the device, so a graph replay
// reads the keys the step has. SwiGLU is one elementwise pass.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/DeviceUtil.cuh"
#include "kernels/cuda/Kernels.h"

#include <algorithm>
#include <limits>
#include <type_traits>

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
                              const void *mask, const int64_t *kvLengths,
                              T *y) {
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
    // Keys at or past the batch's valid length are never read.
    const int64_t keys = validKeyCount(p, kvLengths, b);
    const T *qr = q + row * p.headDim;
    const T *kb = k + kvh * p.kvLen * p.headDim;
    const T *vb = v + kvh * p.kvLen * p.vDim;
    const int64_t maskRow =
        b * p.maskStrides[0] + h * p.maskStrides[1] + i * p.maskStrides[2];
    for (int64_t j = warp; j < keys; j += warps) {
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
    for (int64_t j = threadIdx.x; j < keys; j += blockDim.x)
      mx = fmax(mx, s[j]);
    mx = blockMax(mx, red);
    A sum = 0;
    for (int64_t j = threadIdx.x; j < keys; j += blockDim.x) {
      const A e = exp(s[j] - mx); // a fully masked row gives NaN, as on CPU
      s[j] = e;
      sum += e;
    }
    sum = blockSum(sum, red); // its barriers also publish s[]
    const A inv = A(1) / sum;
    const bool zero = p.nanToZero && !(sum > A(0));
    for (int64_t d = threadIdx.x; d < p.vDim; d += blockDim.x) {
      A acc = 0;
      for (int64_t j = 0; j < keys; ++j)
        acc += s[j] * toCompute(vb[j * p.vDim + d]);
      y[row * p.vDim + d] = fromCompute<T>(zero ? A(0) : acc * inv);
    }
    __syncthreads(); // s[] is rewritten for the next row
  }
}

constexpr int kTileQ = 16, kTileK = 32, kTileDim = 128, kTileThreads = 128;
constexpr int kTileRowsPerWarp = kTileQ / (kTileThreads / 32);
constexpr int kTileChunks = kTileDim / 32;

__device__ __forceinline__ float warpMaxF(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

template <class T>
__global__ void __launch_bounds__(kTileThreads)
    attentionTiles(const __grid_constant__ AttentionParams p, const T *q,
                   const T *k, const T *v, const void *mask,
                   const int64_t *kvLengths, T *y) {
  __shared__ float qs[kTileQ][kTileDim];
  __shared__ float ks[kTileK][kTileDim + 1]; // +1: lane j reads row j
  __shared__ float vs[kTileK][kTileDim];
  __shared__ float ps[kTileQ][kTileK];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int hd = int(p.headDim), vd = int(p.vDim);
  const int64_t bh = blockIdx.y; // b * qHeads + h
  const int64_t h = bh % p.qHeads, b = bh / p.qHeads;
  const int64_t kvh = b * p.kvHeads + h / (p.qHeads / p.kvHeads);
  const int64_t i0 = int64_t(blockIdx.x) * kTileQ;
  const T *kb = k + kvh * p.kvLen * p.headDim;
  const T *vb = v + kvh * p.kvLen * p.vDim;
  const float scale = float(p.scale);
  const float negInf = -std::numeric_limits<float>::infinity();

  for (int e = threadIdx.x; e < kTileQ * hd; e += kTileThreads) {
    const int r = e / hd, d = e % hd;
    const int64_t i = i0 + r;
    qs[r][d] =
        i < p.qLen ? float(toCompute(q[(bh * p.qLen + i) * hd + d])) : 0.f;
  }
  float m[kTileRowsPerWarp], l[kTileRowsPerWarp];
  float acc[kTileRowsPerWarp][kTileChunks];
#pragma unroll
  for (int rr = 0; rr < kTileRowsPerWarp; ++rr) {
    m[rr] = negInf;
    l[rr] = 0.f;
#pragma unroll
    for (int c = 0; c < kTileChunks; ++c)
      acc[rr][c] = 0.f;
  }
  // With is_causal, key j > i is masked: no row of this block sees a key
  // past its last row; keys at or past the valid length are never read.
  const int64_t valid = validKeyCount(p, kvLengths, b);
  const int64_t kvEnd =
      p.causal ? std::min<int64_t>(valid, i0 + kTileQ) : valid;
  for (int64_t j0 = 0; j0 < kvEnd; j0 += kTileK) {
    __syncthreads(); // the previous tile is read (and qs written)
    for (int e = threadIdx.x; e < kTileK * hd; e += kTileThreads) {
      const int jj = e / hd, d = e % hd;
      const int64_t j = j0 + jj;
      ks[jj][d] = j < kvEnd ? float(toCompute(kb[j * hd + d])) : 0.f;
    }
    for (int e = threadIdx.x; e < kTileK * vd; e += kTileThreads) {
      const int jj = e / vd, d = e % vd;
      const int64_t j = j0 + jj;
      vs[jj][d] = j < kvEnd ? float(toCompute(vb[j * vd + d])) : 0.f;
    }
    __syncthreads();
    // Lane `lane` scores key j against this warp's rows.
    const int64_t j = j0 + lane;
    float dot[kTileRowsPerWarp] = {};
    for (int d = 0; d < hd; ++d) {
      const float kd = ks[lane][d];
#pragma unroll
      for (int rr = 0; rr < kTileRowsPerWarp; ++rr)
        dot[rr] += qs[warp * kTileRowsPerWarp + rr][d] * kd;
    }
#pragma unroll
    for (int rr = 0; rr < kTileRowsPerWarp; ++rr) {
      const int r = warp * kTileRowsPerWarp + rr;
      const int64_t i = i0 + r;
      float sc = negInf;
      if (j < kvEnd && i < p.qLen) {
        sc = dot[rr] * scale;
        const int64_t mi = b * p.maskStrides[0] + h * p.maskStrides[1] +
                           i * p.maskStrides[2] + j * p.maskStrides[3];
        if (p.mask == AttentionParams::Mask::Float)
          sc += float(toCompute(static_cast<const T *>(mask)[mi]));
        else if (p.mask == AttentionParams::Mask::Bool &&
                 !static_cast<const uint8_t *>(mask)[mi])
          sc = negInf;
        if (p.causal && j > i)
          sc = negInf;
      }
      const float mNew = fmaxf(m[rr], warpMaxF(sc));
      // Until a row meets a key that is not masked, nothing accumulates.
      const float pj = mNew == negInf ? 0.f : expf(sc - mNew);
      const float corr = mNew == negInf ? 1.f : expf(m[rr] - mNew);
      l[rr] = l[rr] * corr + warpSum(pj);
      m[rr] = mNew;
      ps[r][lane] = pj;
#pragma unroll
      for (int c = 0; c < kTileChunks; ++c)
        acc[rr][c] *= corr;
    }
    __syncwarp();
    const int keys = int(std::min<int64_t>(kTileK, kvEnd - j0));
    for (int jj = 0; jj < keys; ++jj) {
#pragma unroll
      for (int c = 0; c < kTileChunks; ++c) {
        const int d = c * 32 + lane;
        const float vj = d < vd ? vs[jj][d] : 0.f;
#pragma unroll
        for (int rr = 0; rr < kTileRowsPerWarp; ++rr)
          acc[rr][c] += ps[warp * kTileRowsPerWarp + rr][jj] * vj;
      }
    }
    __syncwarp(); // ps is rewritten by the next tile
  }
#pragma unroll
  for (int rr = 0; rr < kTileRowsPerWarp; ++rr) {
    const int64_t i = i0 + warp * kTileRowsPerWarp + rr;
    if (i >= p.qLen)
      continue;
    const float inv = 1.f / l[rr]; // l == 0 (every key masked): NaN below
    const bool zero = p.nanToZero && !(l[rr] > 0.f);
#pragma unroll
    for (int c = 0; c < kTileChunks; ++c) {
      const int d = c * 32 + lane;
      if (d < vd)
        y[(bh * p.qLen + i) * vd + d] =
            fromCompute<T>(zero ? 0.f : acc[rr][c] * inv);
    }
  }
}

template <class T>
__global__ void swigluTyped(const T *gate, const T *up, T *y, int64_t n) {
  using A = Compute<T>;
  for (int64_t i = threadIndex(); i < n; i += gridThreads()) {
    const A g = toCompute(gate[i]);
    // Never exponentiate a positive number (as the Sigmoid kernel).
    const A sig = g >= 0 ? A(1) / (A(1) + exp(-g)) : exp(g) / (A(1) + exp(g));
    y[i] = fromCompute<T>(g * sig * toCompute(up[i]));
  }
}

constexpr int kAttentionThreads = 128;

} // namespace

size_t attentionSharedBytes(const AttentionParams &p) {
  return size_t(p.kvLen) * (p.dtype == DType::F64 ? 8 : 4);
}

bool attentionUsesTiles(const AttentionParams &p) {
  return p.dtype != DType::F64 && p.headDim <= kTileDim && p.vDim <= kTileDim &&
         p.batch * p.qHeads <= 65535 &&
         (p.qLen > 1 || p.kvLen > kMaxAttentionKeys);
}

cudaError_t attentionKernel(const AttentionParams &p, const void *q,
                            const void *k, const void *v, const void *mask,
                            const int64_t *kvLengths, void *y,
                            cudaStream_t stream) {
  const int64_t rows = p.batch * p.qHeads * p.qLen;
  if (rows == 0 || p.vDim == 0)
    return cudaSuccess;
  if (p.kvHeads <= 0 || p.qHeads % p.kvHeads != 0)
    return cudaErrorInvalidValue;
  if (attentionUsesTiles(p)) {
    const dim3 grid(unsigned((p.qLen + kTileQ - 1) / kTileQ),
                    unsigned(p.batch * p.qHeads));
    return visitFloat(p.dtype, [&](auto tag) -> cudaError_t {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, double>) {
        return cudaErrorInvalidValue;
      } else {
        attentionTiles<T><<<grid, kTileThreads, 0, stream>>>(
            p, static_cast<const T *>(q), static_cast<const T *>(k),
            static_cast<const T *>(v), mask, kvLengths, static_cast<T *>(y));
        return cudaGetLastError();
      }
    });
  }
  if (p.kvLen > kMaxAttentionKeys)
    return cudaErrorInvalidValue;
  const unsigned blocks = unsigned(std::min<int64_t>(rows, 1 << 20));
  const size_t smem = std::max<size_t>(attentionSharedBytes(p), 8);
  return visitFloat(p.dtype, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    attentionRows<T><<<blocks, kAttentionThreads, smem, stream>>>(
        p, static_cast<const T *>(q), static_cast<const T *>(k),
        static_cast<const T *>(v), mask, kvLengths, static_cast<T *>(y));
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
