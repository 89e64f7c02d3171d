//===- Movement.cu - Data-movement kernels --------------------------------===//
//
// Kernels that move bytes without looking at them, so they go by unit size
// (the scatters' reductions, which combine values, go by dtype).
// Where sizes and addresses allow, several elements move as one 8- or
// 16-byte unit (Concat, Split, Gather rows); a plain contiguous copy is a
// cudaMemcpyAsync; a transpose of the two trailing dims goes through 32x32
// shared-memory tiles (padded by one unit against bank conflicts) so that
// both the reads and the writes are coalesced.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/DeviceUtil.cuh"
#include "kernels/cuda/IndexCheck.h"
#include "kernels/cuda/Kernels.h"

#include <algorithm>
#include <cstring>

namespace tpc::cuda {
namespace {


//===----------------------------------------------------------------------===//
// Strided copies
//===----------------------------------------------------------------------===//

template <class U>
__global__ void stridedCopyKernel(const __grid_constant__ StridedCopyParams p,
                                  const U *in, U *out) {
  const U *src = in + p.inOffset;
  U *dst = out + p.outOffset;
  for (int64_t i = threadIndex(); i < p.layout.numel; i += gridThreads()) {
    int64_t off[2];
    layoutOffsets(p.layout, i, off);
    dst[off[0]] = src[off[1]];
  }
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;

/// One 32x32 tile of every (rows x cols) block: output rows are contiguous,
/// input columns are. blockIdx.z walks the blocks (p.blocks).
template <class U>
__global__ void tiledCopyKernel(const __grid_constant__ StridedCopyParams p,
                                const U *in, U *out) {
  __shared__ U tile[kTile][kTile + 1];
  const cpu::StridedLayout<2> &l = p.layout;
  const int last = l.rank - 1;
  const int64_t rows = l.shape[last - 1], cols = l.shape[last];
  const int64_t outRow = l.strides[0][last - 1];
  const int64_t inCol = l.strides[1][last];
  const int64_t r0 = int64_t(blockIdx.y) * kTile;
  const int64_t c0 = int64_t(blockIdx.x) * kTile;
  for (int64_t b = blockIdx.z; b < p.blocks.numel; b += gridDim.z) {
    int64_t off[2];
    layoutOffsets(p.blocks, b, off);
    const U *src = in + p.inOffset + off[1];
    U *dst = out + p.outOffset + off[0];
    // Read along input columns (contiguous in the input: the row index).
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t c = c0 + k, r = r0 + threadIdx.x;
      if (r < rows && c < cols)
        tile[k][threadIdx.x] = src[r + c * inCol];
    }
    __syncthreads();
    // Write along output rows (contiguous in the output: the column index).
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t r = r0 + k, c = c0 + threadIdx.x;
      if (r < rows && c < cols)
        dst[r * outRow + c] = tile[threadIdx.x][k];
    }
    __syncthreads(); // the tile is reused by the next block
  }
}

template <class U>
__global__ void fillKernelTyped(U value, U *out, int64_t n) {
  for (int64_t i = threadIndex(); i < n; i += gridThreads())
    out[i] = value;
}

//===----------------------------------------------------------------------===//
// Concat and Split
//===----------------------------------------------------------------------===//

/// Up to kSlots operands of one launch; chunks in units of U.
constexpr int kSlots = 8;
struct ChunkSlots {
  void *ptr[kSlots];
  int64_t chunk[kSlots];  // units per row of each operand
  int64_t offset[kSlots]; // units from the row start of the joined tensor
  int count;
  int64_t rowUnits;  // units per row of the joined tensor
  int64_t spanUnits; // units per row that this launch covers
  int64_t spanStart; // first unit of the row this launch covers
};

__device__ __forceinline__ int findSlot(const ChunkSlots &s, int64_t u) {
  int k = 0;
  while (k + 1 < s.count && u >= s.offset[k + 1])
    ++k;
  return k;
}

/// Concat (Split = false): thread per unit of the covered span of each row
/// of the output, reading from its operand. Split: the reverse.
template <class U, bool Split>
__global__ void chunkCopyKernel(const __grid_constant__ ChunkSlots s, U *joined,
                                int64_t outer) {
  const int64_t total = outer * s.spanUnits;
  for (int64_t i = threadIndex(); i < total; i += gridThreads()) {
    const int64_t r = divq(i, s.spanUnits);
    const int64_t u = s.spanStart + (i - r * s.spanUnits);
    const int k = findSlot(s, u);
    U *part = static_cast<U *>(s.ptr[k]);
    const int64_t partIdx = r * s.chunk[k] + (u - s.offset[k]);
    const int64_t joinedIdx = r * s.rowUnits + u;
    if constexpr (Split) {
      if (part)
        part[partIdx] = joined[joinedIdx];
    } else {
      joined[joinedIdx] = part[partIdx];
    }
  }
}

template <bool Split>
cudaError_t chunkCopy(const ConcatParams &p, void *const *parts, void *joined,
                      cudaStream_t stream) {
  if (p.outer == 0 || p.rowBytes == 0)
    return cudaSuccess;
  // One unit size for all operands: it must divide every chunk and address.
  uint64_t bits = 16 | uint64_t(p.rowBytes) |
                  uint64_t(reinterpret_cast<uintptr_t>(joined));
  for (size_t i = 0; i < p.chunkBytes.size(); ++i) {
    bits |= uint64_t(p.chunkBytes[i]);
    if (p.chunkBytes[i] && parts[i])
      bits |= uint64_t(reinterpret_cast<uintptr_t>(parts[i]));
  }
  const int unit = int(bits & (~bits + 1));
  return visitUnit(unit, [&](auto size) -> cudaError_t {
    using U = typename UnitOf<decltype(size)::value>::type;
    constexpr int64_t us = decltype(size)::value;
    size_t i = 0;
    int64_t start = 0;
    while (i < p.chunkBytes.size()) {
      ChunkSlots s{};
      s.rowUnits = p.rowBytes / us;
      s.spanStart = start;
      // Empty chunks take no slot.
      while (i < p.chunkBytes.size() && s.count < kSlots) {
        const int64_t units = p.chunkBytes[i] / us;
        if (units) {
          s.ptr[s.count] = parts[i];
          s.chunk[s.count] = units;
          s.offset[s.count] = start;
          ++s.count;
          start += units;
        }
        ++i;
      }
      s.spanUnits = start - s.spanStart;
      if (s.count == 0)
        continue;
      const int64_t total = p.outer * s.spanUnits;
      chunkCopyKernel<U, Split><<<blocksFor(total), kThreads, 0, stream>>>(
          s, static_cast<U *>(joined), p.outer);
      if (cudaError_t err = cudaGetLastError(); err != cudaSuccess)
        return err;
    }
    return cudaSuccess;
  });
}

//===----------------------------------------------------------------------===//
// Gather, GatherND, Trilu
//===----------------------------------------------------------------------===//

/// Index `v` wrapped per ONNX; -1 when still out of range.
__device__ __forceinline__ int64_t wrapIndex(int64_t v, int64_t dim) {
  if (v < 0)
    v += dim;
  return v >= 0 && v < dim ? v : -1;
}

__device__ __forceinline__ int64_t loadIndex(DType t, const void *p,
                                             int64_t i) {
  return t == DType::I32 ? int64_t(static_cast<const int32_t *>(p)[i])
                         : static_cast<const int64_t *>(p)[i];
}

template <class U>
__global__ void gatherKernelTyped(const GatherParams p, int64_t innerUnits,
                                  const U *data, const void *indices, U *out) {
  const int64_t total = p.outer * p.numIndices * innerUnits;
  for (int64_t i = threadIndex(); i < total; i += gridThreads()) {
    const int64_t row = divq(i, innerUnits);
    const int64_t u = i - row * innerUnits;
    const int64_t o = divq(row, p.numIndices);
    const int64_t j = row - o * p.numIndices;
    const int64_t idx = wrapIndex(loadIndex(p.indexType, indices, j), p.axisDim);
    out[i] = idx < 0 ? U{}
                     : data[(o * p.axisDim + idx) * innerUnits + u];
  }
}

/// Thread per output element: operand 0 of the layout is the output and
/// the indices (both dense), operand 1 the data with the axis stride 0.
template <class U>
__global__ void
gatherElementsKernelTyped(const __grid_constant__ GatherElementsParams p,
                          const U *data, const void *indices, U *out) {
  for (int64_t i = threadIndex(); i < p.layout.numel; i += gridThreads()) {
    int64_t off[2];
    layoutOffsets(p.layout, i, off);
    const int64_t idx =
        wrapIndex(loadIndex(p.indexType, indices, off[0]), p.axisDim);
    out[off[0]] = idx < 0 ? U{} : data[off[1] + idx * p.axisStride];
  }
}

struct GatherNDGeometry {
  int64_t batch, tuples, depth, slicesPerBatch, sliceUnits;
  int64_t dims[kMaxGatherNDDepth];
  DType indexType;
};

template <class U>
__global__ void gatherNDKernelTyped(const __grid_constant__ GatherNDGeometry g,
                                    const U *data, const void *indices,
                                    U *out) {
  const int64_t total = g.batch * g.tuples * g.sliceUnits;
  for (int64_t i = threadIndex(); i < total; i += gridThreads()) {
    const int64_t t = divq(i, g.sliceUnits); // tuple over all batches
    const int64_t u = i - t * g.sliceUnits;
    const int64_t b = divq(t, g.tuples);
    int64_t slice = 0;
    bool inRange = true;
    for (int j = 0; j < g.depth; ++j) {
      const int64_t idx =
          wrapIndex(loadIndex(g.indexType, indices, t * g.depth + j), g.dims[j]);
      inRange = inRange && idx >= 0;
      slice = slice * g.dims[j] + (idx < 0 ? 0 : idx);
    }
    out[i] = inRange ? data[(b * g.slicesPerBatch + slice) * g.sliceUnits + u]
                     : U{};
  }
}

/// The index scan after an index-reading step: the first kernel of the
/// forward to find a bad index claims the record with its slot; the
/// smallest bad element of that kernel wins (atomicMin), so the report does
/// not depend on thread order.
__global__ void checkIndicesTyped(const IndexCheck c, const void *indices,
                                  unsigned long long *record) {
  for (int64_t k = threadIndex(); k < c.count; k += gridThreads()) {
    const int64_t v = loadIndex(c.indexType, indices, k);
    const int64_t dim = c.dims[k % c.depth];
    if (v >= -dim && v < dim)
      continue;
    const unsigned long long mine = (unsigned long long)(c.slot + 1);
    const unsigned long long prev = atomicCAS(&record[0], 0ull, mine);
    if (prev == 0ull || prev == mine)
      atomicMin(&record[1], (unsigned long long)k);
  }
}

/// Copies the value of the recorded element into the record (one thread,
/// after the scan, on the same stream).
__global__ void recordIndexValue(const IndexCheck c, const void *indices,
                                 unsigned long long *record) {
  if (record[0] == (unsigned long long)(c.slot + 1))
    record[2] =
        (unsigned long long)loadIndex(c.indexType, indices, int64_t(record[1]));
}

//===----------------------------------------------------------------------===//
// ScatterND
//===----------------------------------------------------------------------===//

struct ScatterNDGeometry {
  int64_t tuples, depth, sliceUnits;
  int64_t dims[kMaxGatherNDDepth];
  DType indexType;
  ScatterReduction reduction;
};

/// Offset in slices of the slice tuple `t` addresses; -1 when an entry is
/// still out of range after wrapping (the tuple is skipped, as on the CPU).
__device__ __forceinline__ int64_t scatterSlice(const ScatterNDGeometry &g,
                                                const void *indices,
                                                int64_t t) {
  int64_t slice = 0;
  for (int j = 0; j < g.depth; ++j) {
    const int64_t idx =
        wrapIndex(loadIndex(g.indexType, indices, t * g.depth + j), g.dims[j]);
    if (idx < 0)
      return -1;
    slice = slice * g.dims[j] + idx;
  }
  return slice;
}

/// Reduction none: a thread per (tuple, unit). Duplicate tuples race, so
/// which one wins is unspecified here (ONNX leaves it undefined; the CPU
/// kernel keeps the last).
template <class U>
__global__ void scatterNDWrite(const __grid_constant__ ScatterNDGeometry g,
                               const void *indices, const U *updates, U *out) {
  const int64_t total = g.tuples * g.sliceUnits;
  for (int64_t i = threadIndex(); i < total; i += gridThreads()) {
    const int64_t t = divq(i, g.sliceUnits);
    const int64_t slice = scatterSlice(g, indices, t);
    if (slice >= 0)
      out[slice * g.sliceUnits + (i - t * g.sliceUnits)] = updates[i];
  }
}

/// d combined with u as the CPU kernel does: in float for f16/bf16, integers
/// wrapping, max/min as std::max(d, u) / std::min(d, u).
template <class T>
__device__ __forceinline__ T combineScatter(ScatterReduction r, T d, T u) {
  using A = Compute<T>;
  using W = Wrap<A>;
  const A a = toCompute(d), b = toCompute(u);
  switch (r) {
  case ScatterReduction::Add:
    return fromCompute<T>(A(W(a) + W(b)));
  case ScatterReduction::Mul:
    return fromCompute<T>(A(W(a) * W(b)));
  case ScatterReduction::Max:
    return a < b ? u : d;
  default: return b < a ? u : d;
  }
}

/// Reductions: a thread per slice element walks the tuples in order, so the
/// result is deterministic and combines in the CPU kernel's order (atomics
/// would not, and have no mul, nor max/min for floats). Parallel over the
/// slice only: fine for the rare reducing scatters in exports.
template <class T>
__global__ void scatterNDReduce(const __grid_constant__ ScatterNDGeometry g,
                                const void *indices, const T *updates,
                                T *out) {
  for (int64_t e = threadIndex(); e < g.sliceUnits; e += gridThreads())
    for (int64_t t = 0; t < g.tuples; ++t) {
      const int64_t slice = scatterSlice(g, indices, t);
      if (slice < 0)
        continue;
      T &d = out[slice * g.sliceUnits + e];
      d = combineScatter(g.reduction, d, updates[t * g.sliceUnits + e]);
    }
}

//===----------------------------------------------------------------------===//
// ScatterElements
//===----------------------------------------------------------------------===//

/// A thread per line along the axis, applying its updates in axis order
/// (elements of different lines never meet), so duplicates resolve as on
/// the CPU. `combine(d, u)` gives the new value of the target.
template <class T, class Combine>
__global__ void
scatterElementsLines(const __grid_constant__ ScatterElementsParams p,
                     const void *indices, const T *updates, T *out,
                     Combine combine) {
  for (int64_t i = threadIndex(); i < p.lines.numel; i += gridThreads()) {
    int64_t off[2];
    layoutOffsets(p.lines, i, off);
    for (int64_t a = 0; a < p.lineLength; ++a) {
      const int64_t src = off[0] + a * p.indexStride;
      const int64_t idx =
          wrapIndex(loadIndex(p.indexType, indices, src), p.axisDim);
      if (idx < 0)
        continue;
      T &d = out[off[1] + idx * p.axisStride];
      d = combine(d, updates[src]);
    }
  }
}

struct WriteUpdate {
  template <class T> __device__ T operator()(T, T u) const { return u; }
};
struct CombineUpdate {
  ScatterReduction r;
  template <class T> __device__ T operator()(T d, T u) const {
    return combineScatter(r, d, u);
  }
};

template <class U>
__global__ void triluKernelTyped(const TriluParams p, const U *in, U *out) {
  const int64_t total = p.batch * p.rows * p.cols;
  for (int64_t i = threadIndex(); i < total; i += gridThreads()) {
    const int64_t rowAll = divq(i, p.cols);
    const int64_t c = i - rowAll * p.cols;
    const int64_t r = rowAll - divq(rowAll, p.rows) * p.rows;
    const bool keep = p.upper ? c - r >= p.k : c - r <= p.k;
    out[i] = keep ? in[i] : U{};
  }
}

} // namespace

cudaError_t stridedCopy(const StridedCopyParams &p, const void *in, void *out,
                        cudaStream_t stream) {
  const cpu::StridedLayout<2> &l = p.layout;
  if (l.numel == 0)
    return cudaSuccess;
  const int last = l.rank - 1;
  const size_t es = p.elemSize;
  if (l.rank == 1 && l.strides[0][0] == 1 && l.strides[1][0] == 1)
    return cudaMemcpyAsync(static_cast<char *>(out) + p.outOffset * es,
                           static_cast<const char *>(in) + p.inOffset * es,
                           size_t(l.numel) * es, cudaMemcpyDeviceToDevice,
                           stream);
  return visitUnit(int(es), [&](auto size) -> cudaError_t {
    using U = typename UnitOf<decltype(size)::value>::type;
    const U *x = static_cast<const U *>(in);
    U *y = static_cast<U *>(out);
    if (p.tiled) {
      const int64_t rows = l.shape[last - 1], cols = l.shape[last];
      const int64_t gx = (cols + kTile - 1) / kTile;
      const int64_t gy = (rows + kTile - 1) / kTile;
      if (gx <= 0x7fffffff && gy <= 65535) {
        dim3 grid(unsigned(gx), unsigned(gy),
                  unsigned(std::min<int64_t>(p.blocks.numel, 65535)));
        tiledCopyKernel<U><<<grid, dim3(kTile, kTileRows), 0, stream>>>(p, x,
                                                                       y);
        return cudaGetLastError();
      }
    }
    stridedCopyKernel<U><<<blocksFor(l.numel), kThreads, 0, stream>>>(p, x, y);
    return cudaGetLastError();
  });
}

namespace {
__global__ void cacheWriteBytes(int64_t outer, int64_t length, int64_t n,
                                int64_t rowBytes, const uint8_t *update,
                                const int64_t *position, uint8_t *state) {
  int64_t pos = *position;
  if (pos < 0 || pos > length - n)
    return;
  int64_t block = n * rowBytes, total = outer * block;
  for (int64_t i = threadIndex(); i < total; i += gridThreads()) {
    int64_t o = i / block, r = i % block;
    state[(o * length + pos) * rowBytes + r] = update[i];
  }
}
} // namespace

cudaError_t cacheWriteKernel(const CacheWriteParams &p, const void *update,
                             const int64_t *position, void *state,
                             cudaStream_t stream) {
  int64_t total = p.outer * p.n * p.rowBytes;
  if (total == 0)
    return cudaSuccess;
  cacheWriteBytes<<<blocksFor(total), kThreads, 0, stream>>>(
      p.outer, p.length, p.n, p.rowBytes, static_cast<const uint8_t *>(update),
      position, static_cast<uint8_t *>(state));
  return cudaGetLastError();
}

cudaError_t concatKernel(const ConcatParams &p, const void *const *inputs,
                         void *out, cudaStream_t stream) {
  return chunkCopy<false>(p, const_cast<void *const *>(inputs), out, stream);
}

cudaError_t splitKernel(const ConcatParams &p, const void *in,
                        void *const *outputs, cudaStream_t stream) {
  return chunkCopy<true>(p, outputs, const_cast<void *>(in), stream);
}

cudaError_t gatherKernel(const GatherParams &p, const void *data,
                         const void *indices, void *out, cudaStream_t stream) {
  const int64_t total = p.outer * p.numIndices * p.innerBytes;
  if (total == 0)
    return cudaSuccess;
  const int unit = commonUnit({p.innerBytes}, {data, out});
  return visitUnit(unit, [&](auto size) -> cudaError_t {
    using U = typename UnitOf<decltype(size)::value>::type;
    const int64_t innerUnits = p.innerBytes / decltype(size)::value;
    gatherKernelTyped<U><<<blocksFor(total / decltype(size)::value), kThreads,
                           0, stream>>>(p, innerUnits,
                                        static_cast<const U *>(data), indices,
                                        static_cast<U *>(out));
    return cudaGetLastError();
  });
}

cudaError_t gatherElementsKernel(const GatherElementsParams &p,
                                 const void *data, const void *indices,
                                 void *out, cudaStream_t stream) {
  if (p.layout.numel == 0)
    return cudaSuccess;
  return visitUnit(int(p.elemSize), [&](auto size) -> cudaError_t {
    using U = typename UnitOf<decltype(size)::value>::type;
    gatherElementsKernelTyped<U><<<blocksFor(p.layout.numel), kThreads, 0,
                                   stream>>>(p, static_cast<const U *>(data),
                                             indices, static_cast<U *>(out));
    return cudaGetLastError();
  });
}

cudaError_t gatherNDKernel(const GatherNDParams &p, const void *data,
                           const void *indices, void *out,
                           cudaStream_t stream) {
  if (p.depth > kMaxGatherNDDepth || p.depth != int64_t(p.dims.size()))
    return cudaErrorInvalidValue;
  const int64_t total = p.batch * p.tuples * p.sliceBytes;
  if (total == 0)
    return cudaSuccess;
  const int unit = commonUnit({p.sliceBytes}, {data, out});
  return visitUnit(unit, [&](auto size) -> cudaError_t {
    using U = typename UnitOf<decltype(size)::value>::type;
    GatherNDGeometry g{};
    g.batch = p.batch;
    g.tuples = p.tuples;
    g.depth = p.depth;
    g.slicesPerBatch = p.slicesPerBatch;
    g.sliceUnits = p.sliceBytes / decltype(size)::value;
    for (int64_t j = 0; j < p.depth; ++j)
      g.dims[j] = p.dims[size_t(j)];
    g.indexType = p.indexType;
    gatherNDKernelTyped<U><<<blocksFor(total / decltype(size)::value),
                             kThreads, 0, stream>>>(
        g, static_cast<const U *>(data), indices, static_cast<U *>(out));
    return cudaGetLastError();
  });
}

namespace {

/// A scatter's first step: out = data, unless they are one buffer.
cudaError_t copyScatterData(const void *data, void *out, int64_t bytes,
                            cudaStream_t stream) {
  if (out == data || bytes == 0)
    return cudaSuccess;
  return cudaMemcpyAsync(out, data, size_t(bytes), cudaMemcpyDeviceToDevice,
                         stream);
}

ScatterNDGeometry scatterGeometry(const ScatterNDParams &p,
                                  int64_t sliceUnits) {
  ScatterNDGeometry g{};
  g.tuples = p.tuples;
  g.depth = p.depth;
  g.sliceUnits = sliceUnits;
  for (int64_t j = 0; j < p.depth; ++j)
    g.dims[j] = p.dims[size_t(j)];
  g.indexType = p.indexType;
  g.reduction = p.reduction;
  return g;
}

} // namespace

cudaError_t scatterNDKernel(const ScatterNDParams &p, const void *data,
                            const void *indices, const void *updates, void *out,
                            cudaStream_t stream) {
  if (p.depth > kMaxGatherNDDepth || p.depth != int64_t(p.dims.size()))
    return cudaErrorInvalidValue;
  const int64_t es = int64_t(dtypeSize(p.dtype));
  if (cudaError_t err = copyScatterData(data, out, p.numel * es, stream);
      err != cudaSuccess)
    return err;
  if (p.tuples * p.sliceElems == 0)
    return cudaSuccess;
  if (p.reduction != ScatterReduction::None)
    return launchNumeric(p.dtype, [&](auto tag) -> cudaError_t {
      using T = decltype(tag);
      scatterNDReduce<T><<<blocksFor(p.sliceElems), kThreads, 0, stream>>>(
          scatterGeometry(p, p.sliceElems), indices,
          static_cast<const T *>(updates), static_cast<T *>(out));
      return cudaGetLastError();
    });
  const int64_t sliceBytes = p.sliceElems * es;
  const int unit = commonUnit({sliceBytes}, {updates, out});
  return visitUnit(unit, [&](auto size) -> cudaError_t {
    using U = typename UnitOf<decltype(size)::value>::type;
    const int64_t units = sliceBytes / decltype(size)::value;
    scatterNDWrite<U><<<blocksFor(p.tuples * units), kThreads, 0, stream>>>(
        scatterGeometry(p, units), indices, static_cast<const U *>(updates),
        static_cast<U *>(out));
    return cudaGetLastError();
  });
}

cudaError_t scatterElementsKernel(const ScatterElementsParams &p,
                                  const void *data, const void *indices,
                                  const void *updates, void *out,
                                  cudaStream_t stream) {
  const int64_t es = int64_t(dtypeSize(p.dtype));
  if (cudaError_t err = copyScatterData(data, out, p.numel * es, stream);
      err != cudaSuccess)
    return err;
  if (p.lines.numel * p.lineLength == 0)
    return cudaSuccess;
  const unsigned blocks = blocksFor(p.lines.numel);
  if (p.reduction != ScatterReduction::None)
    return launchNumeric(p.dtype, [&](auto tag) -> cudaError_t {
      using T = decltype(tag);
      scatterElementsLines<T><<<blocks, kThreads, 0, stream>>>(
          p, indices, static_cast<const T *>(updates), static_cast<T *>(out),
          CombineUpdate{p.reduction});
      return cudaGetLastError();
    });
  return visitUnit(int(es), [&](auto size) -> cudaError_t {
    using U = typename UnitOf<decltype(size)::value>::type;
    scatterElementsLines<U><<<blocks, kThreads, 0, stream>>>(
        p, indices, static_cast<const U *>(updates), static_cast<U *>(out),
        WriteUpdate{});
    return cudaGetLastError();
  });
}

cudaError_t triluKernel(const TriluParams &p, const void *in, void *out,
                        cudaStream_t stream) {
  const int64_t total = p.batch * p.rows * p.cols;
  if (total == 0)
    return cudaSuccess;
  return visitUnit(int(p.elemSize), [&](auto size) -> cudaError_t {
    using U = typename UnitOf<decltype(size)::value>::type;
    triluKernelTyped<U><<<blocksFor(total), kThreads, 0, stream>>>(
        p, static_cast<const U *>(in), static_cast<U *>(out));
    return cudaGetLastError();
  });
}

cudaError_t fillKernel(size_t elemSize, int64_t numel, const void *value,
                       void *out, cudaStream_t stream) {
  if (numel == 0)
    return cudaSuccess;
  return visitUnit(int(elemSize), [&](auto size) -> cudaError_t {
    using U = typename UnitOf<decltype(size)::value>::type;
    U v;
    std::memcpy(&v, value, sizeof v);
    fillKernelTyped<U><<<blocksFor(numel), kThreads, 0, stream>>>(
        v, static_cast<U *>(out), numel);
    return cudaGetLastError();
  });
}

cudaError_t checkIndicesKernel(const IndexCheck &c, const void *indices,
                               int64_t *record, cudaStream_t stream) {
  if (c.count <= 0)
    return cudaSuccess;
  auto *r = reinterpret_cast<unsigned long long *>(record);
  checkIndicesTyped<<<blocksFor(c.count), kThreads, 0, stream>>>(c, indices,
                                                                  r);
  recordIndexValue<<<1, 1, 0, stream>>>(c, indices, r);
  return cudaGetLastError();
}

} // namespace tpc::cuda
