//===- TopK.cu - TopK along one axis --------------------------------------===//
//
// A block per line (the axis for one (outer, inner) position) finds the k
// elements one after the other: round r scans the line for the first
// element, in TopK's order, after the one round r - 1 chose, with a
// block-wide exchange (blockWinner). The order (NaN above every
// number, equal values by lower index) is total, so each round has one
// answer and the result equals the CPU kernel's, values copied bit for
// bit. k rounds of n / blockDim comparisons a line: meant for the small k
// of top-k sampling and selection, not for sorting long axes.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/DeviceUtil.cuh"
#include "kernels/cuda/Kernels.h"

#include <algorithm>

namespace tpc::cuda {
namespace {

/// What elements are compared as: f32 for the 16-bit floats, i64 for every
/// integer (shuffles have no 8-bit overloads).
template <class T>
using TopKKey = std::conditional_t<std::is_integral_v<T>, int64_t, Compute<T>>;

template <class T> __device__ __forceinline__ TopKKey<T> topKKey(T v) {
  if constexpr (std::is_integral_v<T>)
    return int64_t(v);
  else
    return toCompute(v);
}

/// topKBefore, with index -1 for no element, which comes after every
/// element.
template <class K>
__device__ __forceinline__ bool candidateBefore(bool largest, K a, int64_t ia,
                                                K b, int64_t ib) {
  if (ib < 0)
    return ia >= 0;
  if (ia < 0)
    return false;
  return topKBefore(largest, a, ia, b, ib);
}

template <class T>
__global__ void topKLines(const TopKParams p, const T *x, T *values,
                          int64_t *indices) {
  using K = TopKKey<T>;
  __shared__ K sv[32];
  __shared__ int64_t si[32];
  __shared__ K chosenV;
  __shared__ int64_t chosenI;
  const bool largest = p.largest;
  auto before = [largest](K v1, int64_t i1, K v2, int64_t i2) {
    return candidateBefore(largest, v1, i1, v2, i2);
  };
  const int64_t lines = p.outer * p.inner;
  for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
    const int64_t o = line / p.inner, j = line - o * p.inner;
    const T *xl = x + o * p.axisDim * p.inner + j;
    const int64_t out = o * p.k * p.inner + j;
    K prevV = K(0);
    int64_t prevI = -1; // nothing chosen yet: every element comes after
    for (int64_t r = 0; r < p.k; ++r) {
      K bv = K(0);
      int64_t bi = -1;
      for (int64_t a = threadIdx.x; a < p.axisDim; a += blockDim.x) {
        const K v = topKKey(xl[a * p.inner]);
        if (prevI >= 0 && !topKBefore(p.largest, prevV, prevI, v, a))
          continue; // chosen in an earlier round
        if (candidateBefore(p.largest, v, a, bv, bi)) {
          bv = v;
          bi = a;
        }
      }
      blockWinner(bv, bi, sv, si, before);
      if (threadIdx.x == 0) {
        chosenV = bv;
        chosenI = bi;
        values[out + r * p.inner] = xl[bi * p.inner];
        indices[out + r * p.inner] = bi;
      }
      __syncthreads();
      prevV = chosenV;
      prevI = chosenI;
    }
  }
}

/// launch(T{}) for every dtype TopK takes.
template <class F> cudaError_t visitTopK(DType t, F &&launch) {
  switch (t) {
  case DType::I8: return launch(int8_t{});
  case DType::U8: return launch(uint8_t{});
  default: return launchNumeric(t, launch);
  }
}

} // namespace

cudaError_t topKKernel(const TopKParams &p, const void *in, void *values,
                       int64_t *indices, cudaStream_t stream) {
  if (p.outer * p.inner * p.k == 0)
    return cudaSuccess;
  return visitTopK(p.dtype, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    const unsigned blocks =
        unsigned(std::min<int64_t>(p.outer * p.inner, 1 << 20));
    topKLines<T><<<blocks, rowThreads(p.axisDim), 0, stream>>>(
        p, static_cast<const T *>(in), static_cast<T *>(values), indices);
    return cudaGetLastError();
  });
}

} // namespace tpc::cuda
