//===- DeviceUtil.cuh - Helpers shared by the .cu files ---------*- C++ -*-===//
//
// Element types and their f32/f64 compute types, grid sizing, strided-layout
// offsets and block reductions. Internal to the CUDA kernel library.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CUDA_DEVICEUTIL_CUH
#define TPC_KERNELS_CUDA_DEVICEUTIL_CUH

#include "kernels/cpu/Support.h"
#include "kernels/cuda/Kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace tpc::cuda {

/// Threads per block of the elementwise kernels.
constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over `work` items with `threads` per block:
/// enough to fill the device a few times over, never more than the work.
inline unsigned blocksFor(int64_t work, int threads = kThreads) {
  if (work <= 0)
    return 1;
  int64_t need = (work + threads - 1) / threads;
  int64_t cap = int64_t(deviceSmCount()) * (4096 / threads);
  return unsigned(need < cap ? need : cap);
}

inline bool isAligned(const void *p, size_t n) {
  return reinterpret_cast<uintptr_t>(p) % n == 0;
}

/// This thread's index in a one-dimensional grid, and the grid's thread
/// count: the start and stride of a grid-stride loop.
__device__ __forceinline__ int64_t threadIndex() {
  return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t gridThreads() {
  return int64_t(gridDim.x) * blockDim.x;
}

/// The offset of the first element of column `c` of a dense [outer, axis,
/// inner] tensor, its (outer, inner) columns numbered c = o * inner + j.
__device__ __forceinline__ int64_t columnBase(int64_t c, int64_t axis,
                                              int64_t inner) {
  const int64_t o = c / inner;
  return o * axis * inner + (c - o * inner);
}

/// The type arithmetic is done in: f32 for the 16-bit floats.
template <class T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<__half> { using type = float; };
template <> struct ComputeOf<__nv_bfloat16> { using type = float; };
template <class T> using Compute = typename ComputeOf<T>::type;

template <class T> constexpr bool kIsHalfLike =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <class T> constexpr bool kIsFloat =
    std::is_floating_point_v<T> || kIsHalfLike<T>;

template <class T> __device__ __forceinline__ Compute<T> toCompute(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return v;
}

template <class T> __device__ __forceinline__ T fromCompute(Compute<T> v) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return v;
}

/// Whether `v` is a NaN (never, for integers).
template <class A> __device__ __forceinline__ bool nanOf(A v) {
  if constexpr (std::is_integral_v<A>)
    return false;
  else
    return isnan(v);
}

/// The type integer sums wrap in (unsigned); floats are themselves.
template <class T, bool = std::is_integral_v<T>> struct WrapOf {
  using type = T;
};
template <class T> struct WrapOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <class T> using Wrap = typename WrapOf<T>::type;

/// launch(T{}) for the arithmetic element types (reductions, ArgMax/ArgMin,
/// CumSum, ScatterND's reductions); cudaErrorInvalidValue for the others.
template <class F> cudaError_t launchNumeric(DType t, F &&launch) {
  switch (t) {
  case DType::F32: return launch(float{});
  case DType::F64: return launch(double{});
  case DType::F16: return launch(__half{});
  case DType::BF16: return launch(__nv_bfloat16{});
  case DType::I32: return launch(int32_t{});
  case DType::I64: return launch(int64_t{});
  default: return cudaErrorInvalidValue;
  }
}

/// `N` elements of T loaded or stored with one access of N * sizeof(T)
/// bytes; the address must be aligned to that.
template <class T, int N> struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

/// Quotient of non-negative `a` by positive `b`, in 32 bits when both fit.
__device__ __forceinline__ int64_t divq(int64_t a, int64_t b) {
  if (((a | b) >> 32) == 0)
    return int64_t(uint32_t(a) / uint32_t(b));
  return a / b;
}

/// Element offsets of flat iteration index `i` in `l` for every operand.
/// `l` should live in parameter space (a __grid_constant__ kernel
/// parameter) so that the dynamic indexing reads constant memory.
template <int N>
__device__ __forceinline__ void layoutOffsets(const cpu::StridedLayout<N> &l,
                                              int64_t i, int64_t (&off)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k)
    off[k] = 0;
  for (int d = l.rank - 1; d > 0; --d) {
    const int64_t n = l.shape[d];
    const int64_t q = divq(i, n);
    const int64_t r = i - q * n;
#pragma unroll
    for (int k = 0; k < N; ++k)
      off[k] += r * l.strides[k][d];
    i = q;
  }
#pragma unroll
  for (int k = 0; k < N; ++k)
    off[k] += i * l.strides[k][0];
}

/// Unsigned integer of `Size` bytes; 16 bytes is a uint4.
template <int Size> struct UnitOf;
template <> struct UnitOf<1> { using type = uint8_t; };
template <> struct UnitOf<2> { using type = uint16_t; };
template <> struct UnitOf<4> { using type = uint32_t; };
template <> struct UnitOf<8> { using type = uint64_t; };
template <> struct UnitOf<16> { using type = uint4; };

/// Calls f(std::integral_constant<int, S>) for the unit size S (1, 2, 4, 8
/// or 16).
template <class F> cudaError_t visitUnit(int size, F &&f) {
  switch (size) {
  case 1: return f(std::integral_constant<int, 1>{});
  case 2: return f(std::integral_constant<int, 2>{});
  case 4: return f(std::integral_constant<int, 4>{});
  case 8: return f(std::integral_constant<int, 8>{});
  case 16: return f(std::integral_constant<int, 16>{});
  default: return cudaErrorInvalidValue;
  }
}

/// Calls f(T{}) for the floating type T of `t` (f32, f64, f16, bf16).
template <class F> cudaError_t visitFloat(DType t, F &&f) {
  switch (t) {
  case DType::F32:
    return f(float{});
  case DType::F64:
    return f(double{});
  case DType::F16:
    return f(__half{});
  case DType::BF16:
    return f(__nv_bfloat16{});
  default:
    return cudaErrorInvalidValue;
  }
}

/// The largest of 16, 8, 4, 2, 1 that divides every byte count in `sizes`
/// and every address in `ptrs` (null pointers ignored).
inline int commonUnit(std::initializer_list<int64_t> sizes,
                      std::initializer_list<const void *> ptrs) {
  uint64_t bits = 16;
  for (int64_t s : sizes)
    bits |= uint64_t(s);
  for (const void *p : ptrs)
    if (p)
      bits |= uint64_t(reinterpret_cast<uintptr_t>(p));
  // The lowest set bit is the largest power of two dividing all of them.
  return int(bits & (~bits + 1));
}

/// Warp-wide sum / max with shuffles; every lane gets the result.
template <class T> __device__ __forceinline__ T warpSum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// Block-wide sum; every thread gets the result. `smem` holds 32 values.
/// Contains __syncthreads(), so every thread of the block must call it.
template <class T> __device__ T blockSum(T v, T *smem) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = warpSum(v);
  __syncthreads(); // smem may still be read by a previous reduction
  if (lane == 0)
    smem[warp] = v;
  __syncthreads();
  v = lane < warps ? smem[lane] : T(0);
  return warpSum(v);
}

/// Folds the other lanes' candidates (v, i) into each lane's by shuffles;
/// wins(v1, i1, v2, i2) says whether candidate 1 beats candidate 2 (index
/// -1 is no candidate).
template <class V, class Wins>
__device__ __forceinline__ void warpWinner(V &v, int64_t &i, Wins wins) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const V ov = __shfl_xor_sync(0xffffffffu, v, o);
    const int64_t oi = __shfl_xor_sync(0xffffffffu, i, o);
    if (wins(ov, oi, v, i)) {
      v = ov;
      i = oi;
    }
  }
}

/// The block-wide winner of every thread's candidate (v, i) under `wins`
/// (as warpWinner), in the threads of warp 0; `sv` and `si` hold 32
/// entries. Contains __syncthreads() before and after the exchange, so
/// every thread of the block must call it, and calls may follow each other.
template <class V, class Wins>
__device__ void blockWinner(V &v, int64_t &i, V *sv, int64_t *si, Wins wins) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  warpWinner(v, i, wins);
  __syncthreads(); // the previous exchange has been read
  if (lane == 0) {
    sv[warp] = v;
    si[warp] = i;
  }
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? sv[lane] : V(0);
    i = lane < warps ? si[lane] : int64_t(-1);
    warpWinner(v, i, wins);
  }
}

/// Threads per block for a row of `n` elements: about four per thread,
/// a power of two between 32 and `maxThreads`.
inline int rowThreads(int64_t n, int maxThreads = 1024) {
  int t = 32;
  while (t < maxThreads && int64_t(t) * 4 < n)
    t *= 2;
  return t;
}

} // namespace tpc::cuda

#endif // TPC_KERNELS_CUDA_DEVICEUTIL_CUH
