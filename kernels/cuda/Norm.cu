//===- Norm.cu - Softmax, norms, reductions and CumSum --------------------===//
//
// Row kernels give each row to one block (32 to 1024 threads, about four
// elements per thread), accumulate in f32 (f64 for f64 data) and combine
// with warp shuffles and one shared-memory exchange. Softmax reads a row
// twice (an online max/sum pass, then the write); the norms three times (mean,
// variance, write), rows being small enough to stay in L1/L2 between passes.
// A strided softmax axis and reductions over leading or interleaved axes use
// one thread per output column instead, so that neighbouring threads read
// neighbouring elements. CumSum scans long rows with a block, other axes
// with one thread per column.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/DeviceUtil.cuh"
#include "kernels/cuda/Kernels.h"

#include <algorithm>
#include <limits>

namespace tpc::cuda {
namespace {

template <class A> __device__ __forceinline__ A negInf() {
  return -std::numeric_limits<A>::infinity();
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// Running max `m` and sum `s` of exp(x - m); s == 0 means no element yet
/// (or only -inf ones, which contribute nothing).
template <class A> struct MaxSum {
  A m, s;
};

template <class A>
__device__ __forceinline__ MaxSum<A> combine(MaxSum<A> a, MaxSum<A> b) {
  if (isnan(a.m) || isnan(b.m))
    return {a.m + b.m, a.m + b.m}; // NaN
  if (b.s == A(0))
    return a;
  if (a.s == A(0))
    return b;
  const A m = a.m > b.m ? a.m : b.m;
  return {m, a.s * exp(a.m - m) + b.s * exp(b.m - m)};
}

template <class A>
__device__ __forceinline__ MaxSum<A> add(MaxSum<A> acc, A v) {
  if (v == negInf<A>())
    return acc;
  return combine(acc, MaxSum<A>{v, A(1)});
}

template <class A> __device__ MaxSum<A> blockMaxSum(MaxSum<A> v) {
  __shared__ A sm[32], ss[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    MaxSum<A> other{__shfl_xor_sync(0xffffffffu, v.m, o),
                    __shfl_xor_sync(0xffffffffu, v.s, o)};
    v = combine(v, other);
  }
  __syncthreads();
  if (lane == 0) {
    sm[warp] = v.m;
    ss[warp] = v.s;
  }
  __syncthreads();
  v = lane < warps ? MaxSum<A>{sm[lane], ss[lane]}
                   : MaxSum<A>{negInf<A>(), A(0)};
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    MaxSum<A> other{__shfl_xor_sync(0xffffffffu, v.m, o),
                    __shfl_xor_sync(0xffffffffu, v.s, o)};
    v = combine(v, other);
  }
  return v;
}

template <class T>
__global__ void softmaxRows(const T *x, T *y, int64_t rows, int64_t n,
                            bool log) {
  using A = Compute<T>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *xr = x + row * n;
    T *yr = y + row * n;
    MaxSum<A> acc{negInf<A>(), A(0)};
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      acc = add(acc, toCompute(xr[i]));
    acc = blockMaxSum(acc);
    if (log) {
      const A logSum = ::log(acc.s);
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        yr[i] = fromCompute<T>((toCompute(xr[i]) - acc.m) - logSum);
    } else {
      const A inv = A(1) / acc.s;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        yr[i] = fromCompute<T>(exp(toCompute(xr[i]) - acc.m) * inv);
    }
  }
}

/// Softmax along a strided axis: one thread per (outer, inner) column.
template <class T>
__global__ void softmaxColumns(const T *x, T *y, int64_t outer, int64_t axis,
                               int64_t inner, bool log) {
  using A = Compute<T>;
  const int64_t cols = outer * inner;
  for (int64_t c = threadIndex(); c < cols; c += gridThreads()) {
    const int64_t base = columnBase(c, axis, inner);
    const T *xc = x + base;
    T *yc = y + base;
    MaxSum<A> acc{negInf<A>(), A(0)};
    for (int64_t a = 0; a < axis; ++a)
      acc = add(acc, toCompute(xc[a * inner]));
    if (log) {
      const A logSum = ::log(acc.s);
      for (int64_t a = 0; a < axis; ++a)
        yc[a * inner] = fromCompute<T>((toCompute(xc[a * inner]) - acc.m) - logSum);
    } else {
      const A inv = A(1) / acc.s;
      for (int64_t a = 0; a < axis; ++a)
        yc[a * inner] = fromCompute<T>(exp(toCompute(xc[a * inner]) - acc.m) * inv);
    }
  }
}

//===----------------------------------------------------------------------===//
// LayerNormalization and RMSNormalization
//===----------------------------------------------------------------------===//

/// With `residual`, the row normalised is x + residual, rounded to T and
/// written to `sumOut` first (AddNormalization in one launch): each thread
/// then reads back only the elements it wrote.
template <class T>
__global__ void normRows(const NormParams p, const T *x, const T *residual,
                         T *sumOut, const T *scale, const T *bias, T *y,
                         T *meanOut, T *invStdOut) {
  using A = Compute<T>;
  __shared__ A smem[32];
  const int64_t n = p.norm;
  const A invN = n ? A(1) / A(n) : A(0);
  for (int64_t row = blockIdx.x; row < p.outer; row += gridDim.x) {
    const T *xr = x + row * n;
    if (residual) {
      const T *rr = residual + row * n;
      T *sr = sumOut + row * n;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        sr[i] = fromCompute<T>(toCompute(xr[i]) + toCompute(rr[i]));
      xr = sr;
    }
    T *yr = y + row * n;
    A mean = 0;
    if (!p.rms) {
      A s = 0;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        s += toCompute(xr[i]);
      mean = blockSum(s, smem) * invN;
    }
    A q = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const A d = toCompute(xr[i]) - mean;
      q += d * d;
    }
    const A var = blockSum(q, smem) * invN;
    const A invStd = A(1) / sqrt(var + A(p.epsilon));
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      A v = (toCompute(xr[i]) - mean) * invStd * toCompute(scale[i]);
      if (bias)
        v += toCompute(bias[i]);
      yr[i] = fromCompute<T>(v);
    }
    if (threadIdx.x == 0) {
      if (meanOut)
        meanOut[row] = fromCompute<T>(mean);
      if (invStdOut)
        invStdOut[row] = fromCompute<T>(invStd);
    }
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//


template <class A> __device__ __forceinline__ A reduceInit(ReduceOp op) {
  switch (op) {
  case ReduceOp::Prod: return A(1);
  case ReduceOp::Max:
    if constexpr (std::is_integral_v<A>)
      return std::numeric_limits<A>::lowest();
    else
      return -std::numeric_limits<A>::infinity();
  case ReduceOp::Min:
    if constexpr (std::is_integral_v<A>)
      return std::numeric_limits<A>::max();
    else
      return std::numeric_limits<A>::infinity();
  default: return A(0);
  }
}

/// Folds `v` (already mapped: squared for L2 and SumSquare) into `acc`.
template <class A>
__device__ __forceinline__ A reduceCombine(ReduceOp op, A acc, A v) {
  using W = Wrap<A>; // integer sums and products wrap
  switch (op) {
  case ReduceOp::Max: return (v > acc || nanOf(v)) ? v : acc;
  case ReduceOp::Min: return (v < acc || nanOf(v)) ? v : acc;
  case ReduceOp::Prod: return A(W(acc) * W(v));
  default: return A(W(acc) + W(v));
  }
}

template <class A> __device__ __forceinline__ A reduceMap(ReduceOp op, A v) {
  if (op == ReduceOp::L2 || op == ReduceOp::SumSquare) {
    using W = Wrap<A>;
    return A(W(v) * W(v));
  }
  return v;
}

/// The final value of an output element from its accumulator.
template <class T, class A>
__device__ __forceinline__ T reduceFinish(ReduceOp op, A acc, int64_t count) {
  if (op == ReduceOp::Mean) {
    if constexpr (std::is_integral_v<A>)
      return T(count > 0 ? acc / A(count) : acc);
    else
      return fromCompute<T>(acc * (A(1) / A(count)));
  }
  if (op == ReduceOp::L2) {
    if constexpr (std::is_integral_v<A>)
      return T(::sqrt(double(acc)));
    else
      return fromCompute<T>(sqrt(acc));
  }
  return fromCompute<T>(acc);
}

/// Combines across a warp by shuffles (every lane gets the result).
template <class A> __device__ __forceinline__ A warpReduce(ReduceOp op, A v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = reduceCombine(op, v, A(__shfl_xor_sync(0xffffffffu, v, o)));
  return v;
}

/// Contiguous rows of `n` elements, each reduced to one output: one block
/// per row.
template <class T>
__global__ void reduceRows(ReduceOp op, const T *x, T *y, int64_t rows,
                           int64_t n) {
  using A = Compute<T>;
  __shared__ A smem[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *xr = x + row * n;
    A acc = reduceInit<A>(op);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      acc = reduceCombine(op, acc, reduceMap(op, toCompute(xr[i])));
    acc = warpReduce(op, acc);
    __syncthreads();
    if (lane == 0)
      smem[warp] = acc;
    __syncthreads();
    if (warp == 0) {
      acc = lane < warps ? smem[lane] : reduceInit<A>(op);
      acc = warpReduce(op, acc);
      if (lane == 0)
        y[row] = reduceFinish<T>(op, acc, n);
    }
  }
}

/// Any set of reduced axes: one thread per output element walks its
/// reduced sub-space. Kept dims are in output order (the output is dense
/// over them).
struct ReduceGeometry {
  ReduceOp op;
  int keptRank, redRank;
  int64_t outNumel, count;
  int64_t keptShape[cpu::kMaxDims], keptStride[cpu::kMaxDims];
  int64_t redShape[cpu::kMaxDims], redStride[cpu::kMaxDims];
};

template <class T>
__global__ void reduceGeneral(const __grid_constant__ ReduceGeometry g,
                              const T *x, T *y) {
  using A = Compute<T>;
  for (int64_t o = threadIndex(); o < g.outNumel; o += gridThreads()) {
    int64_t base = 0, rem = o;
    for (int d = g.keptRank - 1; d >= 0; --d) {
      const int64_t q = divq(rem, g.keptShape[d]);
      base += (rem - q * g.keptShape[d]) * g.keptStride[d];
      rem = q;
    }
    A acc = reduceInit<A>(g.op);
    for (int64_t r = 0; r < g.count; ++r) {
      int64_t off = base, k = r;
      for (int d = g.redRank - 1; d >= 0; --d) {
        const int64_t q = divq(k, g.redShape[d]);
        off += (k - q * g.redShape[d]) * g.redStride[d];
        k = q;
      }
      acc = reduceCombine(g.op, acc, reduceMap(g.op, toCompute(x[off])));
    }
    y[o] = reduceFinish<T>(g.op, acc, g.count);
  }
}

//===----------------------------------------------------------------------===//
// ArgMax / ArgMin
//===----------------------------------------------------------------------===//

/// The CPU kernel scans the axis in order and moves to a later element when
/// it is strictly better (or at least as good, with selectLast). A NaN is
/// then never chosen, except that one in the first position is never
/// replaced. The row kernel reproduces that in parallel: candidates skip
/// NaNs, ties go to the lower (or higher) index, and a NaN first element
/// wins at the end.
struct ArgRule {
  bool isMax, selectLast;
};

template <class A>
__device__ __forceinline__ bool argBetter(ArgRule r, A a, A b) {
  if (r.isMax)
    return r.selectLast ? a >= b : a > b;
  return r.selectLast ? a <= b : a < b;
}

/// Whether candidate (v1, i1) wins over (v2, i2); index -1 is no candidate.
template <class A>
__device__ __forceinline__ bool argWins(ArgRule r, A v1, int64_t i1, A v2,
                                        int64_t i2) {
  if (i2 < 0)
    return true;
  if (i1 < 0)
    return false;
  if (r.isMax ? v1 > v2 : v1 < v2)
    return true;
  if (r.isMax ? v2 > v1 : v2 < v1)
    return false;
  return r.selectLast ? i1 > i2 : i1 < i2;
}

/// One block per row of `n` contiguous elements (inner == 1).
template <class T>
__global__ void argRows(ArgRule rule, const T *x, int64_t *out, int64_t rows,
                        int64_t n) {
  using A = Compute<T>;
  __shared__ A sv[32];
  __shared__ int64_t si[32];
  auto wins = [rule](A v1, int64_t i1, A v2, int64_t i2) {
    return argWins(rule, v1, i1, v2, i2);
  };
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *xr = x + row * n;
    A bv = A(0);
    int64_t bi = -1;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const A v = toCompute(xr[i]);
      if (nanOf(v))
        continue;
      if (bi < 0 || argBetter(rule, v, bv)) {
        bv = v;
        bi = i;
      }
    }
    blockWinner(bv, bi, sv, si, wins);
    if (threadIdx.x == 0)
      out[row] = (bi < 0 || nanOf(toCompute(xr[0]))) ? 0 : bi;
  }
}

/// One thread per (outer, inner) column, scanning like the CPU kernel.
template <class T>
__global__ void argColumns(ArgRule rule, const T *x, int64_t *out,
                           int64_t outer, int64_t axis, int64_t inner) {
  using A = Compute<T>;
  const int64_t cols = outer * inner;
  for (int64_t c = threadIndex(); c < cols; c += gridThreads()) {
    const T *xc = x + columnBase(c, axis, inner);
    A best = toCompute(xc[0]);
    int64_t bi = 0;
    for (int64_t a = 1; a < axis; ++a) {
      const A v = toCompute(xc[a * inner]);
      if (argBetter(rule, v, best)) {
        best = v;
        bi = a;
      }
    }
    out[c] = bi;
  }
}

} // namespace

cudaError_t softmaxKernel(const SoftmaxParams &p, const void *in,
                          void *out, cudaStream_t stream) {
  if (p.outer * p.axis * p.inner == 0)
    return cudaSuccess;
  return visitFloat(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *x = static_cast<const T *>(in);
    T *y = static_cast<T *>(out);
    if (p.inner == 1) {
      const unsigned blocks = unsigned(std::min<int64_t>(p.outer, 1 << 20));
      softmaxRows<T><<<blocks, rowThreads(p.axis), 0, stream>>>(
          x, y, p.outer, p.axis, p.log);
    } else {
      softmaxColumns<T><<<blocksFor(p.outer * p.inner), kThreads, 0,
                          stream>>>(x, y, p.outer, p.axis, p.inner, p.log);
    }
    return cudaGetLastError();
  });
}

namespace {
cudaError_t launchNormRows(const NormParams &p, const void *x,
                           const void *residual, void *sum, const void *scale,
                           const void *bias, void *y, void *mean,
                           void *invStdDev, cudaStream_t stream) {
  if (p.outer == 0)
    return cudaSuccess;
  return visitFloat(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    const unsigned blocks = unsigned(std::min<int64_t>(p.outer, 1 << 20));
    normRows<T><<<blocks, rowThreads(p.norm), 0, stream>>>(
        p, static_cast<const T *>(x), static_cast<const T *>(residual),
        static_cast<T *>(sum), static_cast<const T *>(scale),
        static_cast<const T *>(bias), static_cast<T *>(y),
        static_cast<T *>(mean), static_cast<T *>(invStdDev));
    return cudaGetLastError();
  });
}
} // namespace

cudaError_t normKernel(const NormParams &p, const void *x, const void *scale,
                       const void *bias, void *y, void *mean, void *invStdDev,
                       cudaStream_t stream) {
  return launchNormRows(p, x, nullptr, nullptr, scale, bias, y, mean, invStdDev,
                        stream);
}

cudaError_t addNormKernel(const NormParams &p, const void *x,
                          const void *residual, void *sum, const void *scale,
                          const void *bias, void *y, cudaStream_t stream) {
  return launchNormRows(p, x, residual, sum, scale, bias, y, nullptr, nullptr,
                        stream);
}

cudaError_t argReduceKernel(const ArgReduceParams &p, const void *in,
                            int64_t *out, cudaStream_t stream) {
  if (p.outer * p.inner == 0 || p.axisDim == 0)
    return cudaSuccess;
  const ArgRule rule{p.isMax, p.selectLast};
  auto launch = [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    const T *x = static_cast<const T *>(in);
    if (p.inner == 1) {
      const unsigned blocks = unsigned(std::min<int64_t>(p.outer, 1 << 20));
      argRows<T><<<blocks, rowThreads(p.axisDim), 0, stream>>>(
          rule, x, out, p.outer, p.axisDim);
    } else {
      argColumns<T><<<blocksFor(p.outer * p.inner), kThreads, 0, stream>>>(
          rule, x, out, p.outer, p.axisDim, p.inner);
    }
    return cudaGetLastError();
  };
  return launchNumeric(p.dtype, launch);
}

namespace {

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

/// Scan rows no longer than this go to the column kernel, whose one thread
/// per row adds in the CPU's order; a block would sit mostly idle on them.
constexpr int64_t kMinScanRow = 32;

/// Inclusive scan over the lanes of a warp.
template <class W> __device__ __forceinline__ W warpInclusiveScan(W v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const W t = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o)
      v += t;
  }
  return v;
}

/// Contiguous rows (inner == 1), one block per row, in tiles of blockDim
/// (a multiple of 32) elements: a warp scan, a scan of the warp totals in
/// shared memory, and the carry of the earlier tiles. The exclusive sum is
/// the neighbour's inclusive one, never inclusive - x, which would round.
template <class T>
__global__ void cumSumRows(const CumSumParams p, const T *x, T *y) {
  using A = Compute<T>;
  using W = Wrap<A>;
  __shared__ W totals[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = blockDim.x >> 5;
  const int64_t n = p.axisDim;
  for (int64_t row = blockIdx.x; row < p.outer; row += gridDim.x) {
    const T *xr = x + row * n;
    T *yr = y + row * n;
    W carry = W(0);
    for (int64_t base = 0; base < n; base += blockDim.x) {
      const int64_t i = base + threadIdx.x;
      const int64_t at = p.reverse ? n - 1 - i : i;
      const W v = i < n ? W(toCompute(xr[at])) : W(0);
      const W incl = warpInclusiveScan(v);
      W excl = __shfl_up_sync(0xffffffffu, incl, 1);
      if (lane == 0)
        excl = W(0);
      __syncthreads(); // every thread has read the previous tile's totals
      if (lane == 31)
        totals[warp] = incl;
      __syncthreads();
      if (warp == 0)
        totals[lane] = warpInclusiveScan(lane < warps ? totals[lane] : W(0));
      __syncthreads();
      const W before = warp > 0 ? carry + totals[warp - 1] : carry;
      if (i < n)
        yr[at] = fromCompute<T>(A(before + (p.exclusive ? excl : incl)));
      carry += totals[warps - 1];
    }
  }
}

/// One thread per (outer, inner) column, adding in axis order like the CPU
/// kernel; neighbouring threads read neighbouring elements.
template <class T>
__global__ void cumSumColumns(const CumSumParams p, const T *x, T *y) {
  using A = Compute<T>;
  using W = Wrap<A>;
  const int64_t cols = p.outer * p.inner;
  for (int64_t c = threadIndex(); c < cols; c += gridThreads()) {
    const int64_t base = columnBase(c, p.axisDim, p.inner);
    W acc = W(0);
    for (int64_t s = 0; s < p.axisDim; ++s) {
      const int64_t off = base + (p.reverse ? p.axisDim - 1 - s : s) * p.inner;
      const W v = W(toCompute(x[off]));
      if (p.exclusive)
        y[off] = fromCompute<T>(A(acc));
      acc += v;
      if (!p.exclusive)
        y[off] = fromCompute<T>(A(acc));
    }
  }
}

} // namespace

cudaError_t cumSumKernel(const CumSumParams &p, const void *in, void *out,
                         cudaStream_t stream) {
  if (p.outer * p.axisDim * p.inner == 0)
    return cudaSuccess;
  auto launch = [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    const T *x = static_cast<const T *>(in);
    T *y = static_cast<T *>(out);
    if (p.inner == 1 && p.axisDim > kMinScanRow) {
      const unsigned blocks = unsigned(std::min<int64_t>(p.outer, 1 << 20));
      cumSumRows<T><<<blocks, rowThreads(p.axisDim), 0, stream>>>(p, x, y);
    } else {
      cumSumColumns<T><<<blocksFor(p.outer * p.inner), kThreads, 0,
                         stream>>>(p, x, y);
    }
    return cudaGetLastError();
  };
  return launchNumeric(p.dtype, launch);
}

cudaError_t reduceKernel(const ReduceParams &p, const void *in,
                         void *out, cudaStream_t stream) {
  if (p.outNumel == 0)
    return cudaSuccess;
  const cpu::StridedLayout<2> &l = p.layout;
  const int last = l.rank - 1;
  // Trailing reduced dims that are contiguous in the input: rows.
  const bool rows =
      l.numel > 0 && l.strides[0][last] == 0 && l.strides[1][last] == 1 &&
      (l.rank == 1 || (l.rank == 2 && l.strides[0][0] == 1 &&
                       l.strides[1][0] == l.shape[last]));
  ReduceGeometry g{};
  g.op = p.op;
  g.outNumel = p.outNumel;
  g.count = l.numel == 0 ? 0 : p.count;
  for (int d = 0; d < l.rank && l.numel > 0; ++d) {
    if (l.strides[0][d] == 0) {
      g.redShape[g.redRank] = l.shape[d];
      g.redStride[g.redRank++] = l.strides[1][d];
    } else {
      g.keptShape[g.keptRank] = l.shape[d];
      g.keptStride[g.keptRank++] = l.strides[1][d];
    }
  }
  auto launch = [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    const T *x = static_cast<const T *>(in);
    T *y = static_cast<T *>(out);
    if (rows) {
      const int64_t n = l.shape[last];
      const int64_t numRows = l.rank == 1 ? 1 : l.shape[0];
      const unsigned blocks = unsigned(std::min<int64_t>(numRows, 1 << 20));
      reduceRows<T><<<blocks, rowThreads(n), 0, stream>>>(p.op, x, y,
                                                         numRows, n);
    } else {
      reduceGeneral<T><<<blocksFor(p.outNumel), kThreads, 0, stream>>>(g, x,
                                                                      y);
    }
    return cudaGetLastError();
  };
  return launchNumeric(p.dtype, launch);
}

} // namespace tpc::cuda
