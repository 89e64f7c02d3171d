//===- Movement.cpp - Data-movement kernels -------------------------------===//
#include "kernels/cpu/Movement.h"
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/Parallel.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace tpc::cpu {

namespace {

/// Copies one rows x cols block where output rows and input columns are
/// contiguous, in square tiles.
template <class T>
void copyTiled(const T *x, T *o, int64_t rows, int64_t cols, int64_t outRow,
               int64_t inCol) {
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
    const int64_t i1 = std::min(rows, i0 + kTile);
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t j1 = std::min(cols, j0 + kTile);
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j)
          o[i * outRow + j] = x[i + j * inCol];
    }
  }
}

} // namespace

void stridedCopy(const StridedCopyParams &p, const void *in, void *out,
                 int numThreads) {
  // Threads take slices of the outermost dim walked (of the tile blocks
  // when tiled): the slices write disjoint parts of the output.
  const StridedLayout<2> &walk = p.tiled ? p.blocks : p.layout;
  if (numThreads > 1 && walk.rank >= 2 && walk.shape[0] > 1) {
    const int64_t outer = walk.shape[0];
    const int64_t bytesPerItem =
        2 * int64_t(p.elemSize) * (p.layout.numel / std::max<int64_t>(outer, 1));
    parallelFor(numThreads, outer, bytesPerItem, [&](int64_t b, int64_t e) {
      StridedCopyParams q = p;
      StridedLayout<2> &w = q.tiled ? q.blocks : q.layout;
      w.shape[0] = e - b;
      w.numel = walk.numel / outer * (e - b);
      q.outOffset += b * walk.strides[0][0];
      q.inOffset += b * walk.strides[1][0];
      stridedCopy(q, in, out, 1);
    });
    return;
  }
  visitBySize(p.elemSize, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const StridedLayout<2> &l = p.layout;
    const int64_t n = rowLength(l);
    const int64_t so = rowStride(l, 0), si = rowStride(l, 1);
    T *dst = static_cast<T *>(out) + p.outOffset;
    const T *src = static_cast<const T *>(in) + p.inOffset;
    if (p.tiled) {
      const int last = l.rank - 1;
      const int64_t rows = l.shape[last - 1];
      const int64_t outRow = l.strides[0][last - 1];
      forEachRow(p.blocks, [&](const int64_t *off) {
        copyTiled(src + off[1], dst + off[0], rows, n, outRow, si);
      });
      return;
    }
    forEachRow(l, [&](const int64_t *off) {
      T *o = dst + off[0];
      const T *x = src + off[1];
      if (so == 1 && si == 1) {
        std::memcpy(o, x, sizeof(T) * n);
      } else if (so == 1 && si == 0) {
        std::fill(o, o + n, *x);
      } else {
        for (int64_t i = 0; i < n; ++i)
          o[i * so] = x[i * si];
      }
    });
  });
}

void concatKernel(const ConcatParams &p, const void *const *inputs, void *out,
                  int numThreads) {
  parallelFor(numThreads, p.outer, 2 * p.rowBytes, [&](int64_t r0, int64_t r1) {
    char *dst = static_cast<char *>(out) + r0 * p.rowBytes;
    for (int64_t r = r0; r < r1; ++r) {
      for (size_t i = 0; i < p.chunkBytes.size(); ++i) {
        int64_t n = p.chunkBytes[i];
        // Empty inputs may come as nullptr.
        if (n == 0)
          continue;
        std::memcpy(dst, static_cast<const char *>(inputs[i]) + r * n, n);
        dst += n;
      }
    }
  });
}

void splitKernel(const ConcatParams &p, const void *in, void *const *outputs,
                 int numThreads) {
  parallelFor(numThreads, p.outer, 2 * p.rowBytes, [&](int64_t r0, int64_t r1) {
    const char *src = static_cast<const char *>(in) + r0 * p.rowBytes;
    for (int64_t r = r0; r < r1; ++r) {
      for (size_t i = 0; i < p.chunkBytes.size(); ++i) {
        int64_t n = p.chunkBytes[i];
        if (outputs[i] && n)
          std::memcpy(static_cast<char *>(outputs[i]) + r * n, src, n);
        src += n;
      }
    }
  });
}

namespace {

/// Index value at position i, wrapped per ONNX; -1 when out of range.
template <class I>
int64_t loadIndex(const void *indices, int64_t i, int64_t dim) {
  int64_t v = static_cast<const I *>(indices)[i];
  if (v < 0)
    v += dim;
  return v >= 0 && v < dim ? v : -1;
}

int64_t indexAt(DType t, const void *indices, int64_t i, int64_t dim) {
  return t == DType::I32 ? loadIndex<int32_t>(indices, i, dim)
                         : loadIndex<int64_t>(indices, i, dim);
}

} // namespace

void gatherKernel(const GatherParams &p, const void *data, const void *indices,
                  void *out) {
  const char *src = static_cast<const char *>(data);
  char *dst = static_cast<char *>(out);
  const int64_t n = p.innerBytes;
  if (n == 0)
    return;
  for (int64_t o = 0; o < p.outer; ++o) {
    const char *block = src + o * p.axisDim * n;
    for (int64_t j = 0; j < p.numIndices; ++j, dst += n) {
      int64_t idx = indexAt(p.indexType, indices, j, p.axisDim);
      if (idx < 0)
        std::memset(dst, 0, n);
      else
        std::memcpy(dst, block + idx * n, n);
    }
  }
}

void gatherElementsKernel(const GatherElementsParams &p, const void *data,
                          const void *indices, void *out) {
  visitBySize(p.elemSize, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const StridedLayout<2> &l = p.layout;
    const int64_t n = rowLength(l);
    const int64_t so = rowStride(l, 0), sd = rowStride(l, 1);
    const T *src = static_cast<const T *>(data);
    T *dst = static_cast<T *>(out);
    forEachRow(l, [&](const int64_t *off) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t pos = off[0] + i * so;
        int64_t idx = indexAt(p.indexType, indices, pos, p.axisDim);
        dst[pos] = idx < 0 ? T(0) : src[off[1] + i * sd + idx * p.axisStride];
      }
    });
  });
}

void gatherNDKernel(const GatherNDParams &p, const void *data,
                    const void *indices, void *out) {
  const char *src = static_cast<const char *>(data);
  char *dst = static_cast<char *>(out);
  int64_t pos = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t t = 0; t < p.tuples; ++t, dst += p.sliceBytes) {
      int64_t slice = 0;
      bool inRange = true;
      for (int64_t j = 0; j < p.depth; ++j, ++pos) {
        int64_t idx = indexAt(p.indexType, indices, pos, p.dims[j]);
        inRange &= idx >= 0;
        slice = slice * p.dims[j] + (idx < 0 ? 0 : idx);
      }
      if (!inRange) {
        std::memset(dst, 0, size_t(p.sliceBytes));
        continue;
      }
      std::memcpy(dst, src + (b * p.slicesPerBatch + slice) * p.sliceBytes,
                  size_t(p.sliceBytes));
    }
  }
}

namespace {

/// Element offset in data of the slice that tuple `t` addresses; -1 when an
/// entry is out of range.
int64_t scatterSliceOffset(const ScatterNDParams &p, const void *indices,
                           int64_t t) {
  int64_t slice = 0;
  for (int64_t j = 0; j < p.depth; ++j) {
    int64_t idx = indexAt(p.indexType, indices, t * p.depth + j, p.dims[j]);
    if (idx < 0)
      return -1;
    slice = slice * p.dims[j] + idx;
  }
  return slice * p.sliceElems;
}

/// The type ScatterND adds and multiplies T in: unsigned for integers, so
/// that they wrap (signed overflow is undefined); T itself otherwise.
template <class T, bool = std::is_integral_v<T>> struct ScatterWrap {
  using type = T;
};
template <class T> struct ScatterWrap<T, true> {
  using type = std::make_unsigned_t<T>;
};

/// d combined with u per `r` (not None).
template <class T> T combineScatter(ScatterReduction r, T d, T u) {
  using W = typename ScatterWrap<T>::type;
  switch (r) {
  case ScatterReduction::Add:
    return T(W(d) + W(u));
  case ScatterReduction::Mul:
    return T(W(d) * W(u));
  case ScatterReduction::Max:
    return std::max(d, u);
  default:
    return std::min(d, u);
  }
}

/// combineScatter for every reducible T: f16/bf16 combine in float and
/// round once per update.
template <class T> T combineAny(ScatterReduction r, T d, T u) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return narrowTo<T>(combineScatter(r, widen(d), widen(u)));
  else
    return combineScatter(r, d, u);
}

template <class T>
void scatterReduceTyped(const ScatterNDParams &p, const void *indices,
                        const T *updates, T *out) {
  for (int64_t t = 0; t < p.tuples; ++t, updates += p.sliceElems) {
    int64_t off = scatterSliceOffset(p, indices, t);
    if (off < 0)
      continue;
    T *dst = out + off;
    for (int64_t e = 0; e < p.sliceElems; ++e)
      dst[e] = combineAny(p.reduction, dst[e], updates[e]);
  }
}

/// Calls `visit(tag)` with the TypeTag of `t` when the scatters reduce it.
template <class F> void visitReducible(DType t, F &&visit) {
  if (!visitFloat16(t, visit))
    visitNumeric(t, visit);
}

/// Calls step(src, dst) for every element of ScatterElements' indices whose
/// index is in range, with its offset in indices/updates and that of its
/// target in out: line by line, each line along the axis in order.
template <class Step>
void forEachScatterTarget(const ScatterElementsParams &p, const void *indices,
                          Step &&step) {
  const StridedLayout<2> &l = p.lines;
  const int64_t n = rowLength(l);
  const int64_t si = rowStride(l, 0), sd = rowStride(l, 1);
  forEachRow(l, [&](const int64_t *off) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t src0 = off[0] + j * si, dst0 = off[1] + j * sd;
      for (int64_t a = 0; a < p.lineLength; ++a) {
        const int64_t src = src0 + a * p.indexStride;
        const int64_t idx = indexAt(p.indexType, indices, src, p.axisDim);
        if (idx >= 0)
          step(src, dst0 + idx * p.axisStride);
      }
    }
  });
}

} // namespace

void scatterNDKernel(const ScatterNDParams &p, const void *data,
                     const void *indices, const void *updates, void *out) {
  const size_t es = dtypeSize(p.dtype);
  if (out != data)
    std::memcpy(out, data, size_t(p.numel) * es);
  if (p.reduction == ScatterReduction::None) {
    // Tuples in order, so a duplicate's last slice wins.
    const char *src = static_cast<const char *>(updates);
    const size_t bytes = size_t(p.sliceElems) * es;
    for (int64_t t = 0; t < p.tuples; ++t, src += bytes) {
      int64_t off = scatterSliceOffset(p, indices, t);
      if (off >= 0)
        std::memcpy(static_cast<char *>(out) + off * es, src, bytes);
    }
    return;
  }
  visitReducible(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    scatterReduceTyped<T>(p, indices, static_cast<const T *>(updates),
                          static_cast<T *>(out));
  });
}

void scatterElementsKernel(const ScatterElementsParams &p, const void *data,
                           const void *indices, const void *updates,
                           void *out) {
  const size_t es = dtypeSize(p.dtype);
  if (out != data)
    std::memcpy(out, data, size_t(p.numel) * es);
  if (p.reduction == ScatterReduction::None) {
    visitBySize(es, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T *u = static_cast<const T *>(updates);
      T *o = static_cast<T *>(out);
      forEachScatterTarget(p, indices,
                           [&](int64_t src, int64_t dst) { o[dst] = u[src]; });
    });
    return;
  }
  visitReducible(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *u = static_cast<const T *>(updates);
    T *o = static_cast<T *>(out);
    forEachScatterTarget(p, indices, [&](int64_t src, int64_t dst) {
      o[dst] = combineAny(p.reduction, o[dst], u[src]);
    });
  });
}

void triluKernel(const TriluParams &p, const void *in, void *out) {
  const size_t es = p.elemSize;
  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  const int64_t rowBytes = p.cols * static_cast<int64_t>(es);
  if (rowBytes == 0)
    return;
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t r = 0; r < p.rows; ++r) {
      // Columns [lo, hi) are kept; the rest of the row is zero.
      int64_t lo = p.upper ? std::clamp<int64_t>(r + p.k, 0, p.cols) : 0;
      int64_t hi =
          p.upper ? p.cols : std::clamp<int64_t>(r + p.k + 1, 0, p.cols);
      if (hi < lo)
        hi = lo;
      std::memset(dst, 0, lo * es);
      std::memcpy(dst + lo * es, src + lo * es, (hi - lo) * es);
      std::memset(dst + hi * es, 0, (p.cols - hi) * es);
      src += rowBytes;
      dst += rowBytes;
    }
  }
}

void cacheWriteKernel(const CacheWriteParams &p, const void *state,
                      const void *update, int64_t position, void *out) {
  auto *dst = static_cast<uint8_t *>(out);
  const auto *src = static_cast<const uint8_t *>(update);
  const size_t row = size_t(p.rowBytes);
  if (state != out)
    std::memmove(dst, state, size_t(p.outer * p.length) * row);
  for (int64_t o = 0; o < p.outer; ++o)
    std::memmove(dst + size_t(o * p.length + position) * row,
                 src + size_t(o * p.n) * row, size_t(p.n) * row);
}

void fillKernel(size_t elemSize, int64_t numel, const void *value, void *out) {
  visitBySize(elemSize, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    std::memcpy(&v, value, sizeof v);
    std::fill(static_cast<T *>(out), static_cast<T *>(out) + numel, v);
  });
}

} // namespace tpc::cpu
