//===- Sgemm.cpp - Packing, blocking and threading of tpc's fp32 GEMM -----===//
#include "kernels/cpu/Sgemm.h"

#include "kernels/cpu/Parallel.h"
#include "kernels/cpu/Prefetch.h"
#include "kernels/cpu/Scratch.h"
#include "kernels/cpu/SgemmKernels.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tpc::cpu {
namespace {

/// K and M blocks. K is cut into as few blocks of at most kMaxKc as it
/// takes, of equal size: every K block re-reads and re-writes the tile of C
/// it adds to, which for wide outputs comes from L3, so fewer blocks beat
/// keeping the B micro-panel (kc x Nr, 48 KiB at most) inside L1; it
/// streams from L2 at well under L2's bandwidth. The mc x kc block of A
/// (about 144 rows: at most 432 KiB) stays in L2.
constexpr int64_t kMaxKc = 768;

/// The M block for tiles of `mr` rows: a multiple of mr near 144.
int64_t mBlock(int64_t mr) { return std::max<int64_t>(1, 144 / mr) * mr; }

int64_t kBlock(int64_t k) {
  const int64_t blocks = (k + kMaxKc - 1) / kMaxKc;
  return (k + blocks - 1) / blocks;
}

const std::vector<MicroKernels> &allKernels() {
  static const std::vector<MicroKernels> all = availableMicroKernels();
  return all;
}

const MicroKernels *&current() {
  static const MicroKernels *k = &allKernels().front();
  return k;
}

const MicroKernels &kernels() { return *current(); }

/// The row tiles of an M block: where each starts, its rows, and the rows
/// its packed panel of A holds (its stride; the zero rows past its own are
/// computed but not stored).
struct RowTiles {
  static constexpr int kMax = 64;
  int64_t count = 0;
  int64_t row[kMax], rows[kMax], stride[kMax];
};

/// Tiles of mr rows over mc rows. A set with kernels for every height
/// (`exact`) packs each tile at its own height, and a short last tile (under
/// half of mr, which its loads would bound) is evened out with the one
/// before it: 128 rows in tiles of 14 end in 8 + 8, not 14 + 2. Otherwise
/// every panel holds mr rows.
RowTiles rowTiles(int64_t mc, int64_t mr, bool exact) {
  RowTiles t;
  auto add = [&](int64_t rows) {
    const int64_t at = t.count ? t.row[t.count - 1] + t.rows[t.count - 1] : 0;
    t.row[t.count] = at;
    t.rows[t.count] = rows;
    t.stride[t.count] = exact ? rows : mr;
    ++t.count;
  };
  int64_t full = mc / mr, rest = mc % mr;
  const bool even = exact && rest && rest < mr / 2 && full > 0;
  if (even)
    --full;
  for (int64_t i = 0; i < full; ++i)
    add(mr);
  if (even) {
    add((mr + rest + 1) / 2);
    add((mr + rest) / 2);
  } else if (rest) {
    add(rest);
  }
  return t;
}

/// op(A)[ic + i, pc + p] for i < mc, p < kc into one panel per row tile,
/// tile after tile (row p of a tile's panel at p * its stride).
void packA(const SgemmArgs &g, const RowTiles &tiles, int64_t ic, int64_t pc,
           int64_t kc, float *dst) {
  for (int64_t t = 0; t < tiles.count; ++t) {
    const int64_t rows = tiles.rows[t], stride = tiles.stride[t];
    float *panel = dst;
    dst += stride * kc;
    for (int64_t r = 0; r < stride; ++r) {
      if (r >= rows) {
        for (int64_t p = 0; p < kc; ++p)
          panel[p * stride + r] = 0.0f;
        continue;
      }
      const int64_t row = ic + tiles.row[t] + r;
      if (g.transA) {
        const float *src = g.a + pc * g.lda + row;
        for (int64_t p = 0; p < kc; ++p)
          panel[p * stride + r] = src[p * g.lda];
      } else {
        const float *src = g.a + row * g.lda + pc;
        for (int64_t p = 0; p < kc; ++p)
          panel[p * stride + r] = src[p];
      }
    }
  }
}

/// Rows [pc, pc + kc) of op(B)'s panel `panel` as kc rows of Nr floats.
void packBPanel(const float *b, int64_t ldb, bool trans, int64_t n,
                int64_t panel, int64_t pc, int64_t kc, float *dst) {
  const int64_t j0 = panel * kSgemmNr;
  const int64_t cols = std::min(kSgemmNr, n - j0);
  if (!trans) {
    for (int64_t p = 0; p < kc; ++p) {
      const float *src = b + (pc + p) * ldb + j0;
      float *row = dst + p * kSgemmNr;
      std::memcpy(row, src, size_t(cols) * sizeof(float));
      std::fill(row + cols, row + kSgemmNr, 0.0f);
    }
    return;
  }
  for (int64_t p = 0; p < kc; ++p)
    std::fill(dst + p * kSgemmNr + cols, dst + (p + 1) * kSgemmNr, 0.0f);
  for (int64_t j = 0; j < cols; ++j) {
    const float *src = b + (j0 + j) * ldb + pc;
    for (int64_t p = 0; p < kc; ++p)
      dst[p * kSgemmNr + j] = src[p];
  }
}

/// A tile of `rows` x `cols` at c over `count` panels of B: the set's
/// kernel for that tile straight into C where the columns are whole,
/// otherwise through a scratch tile.
void tile(const MicroKernels &mk, int64_t kc, const float *ap, const float *bp,
          int64_t bStride, int64_t count, float *c, int64_t ldc, int64_t rows,
          int64_t cols, float alpha, bool acc, const PanelPrefetch &pf) {
  SgemmTileFn exact = mk.tile(rows, count);
  if (exact && cols == count * kSgemmNr) {
    exact(kc, ap, bp, bStride, c, ldc, alpha, acc, pf);
    return;
  }
  SgemmTileFn run = exact ? exact : mk.tile(mk.mr, count);
  constexpr int64_t kWidth = kSgemmMaxPanels * kSgemmNr;
  alignas(64) float t[kSgemmMaxMr * kWidth];
  run(kc, ap, bp, bStride, t, kWidth, alpha, false, pf);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      c[r * ldc + j] = acc ? c[r * ldc + j] + t[r * kWidth + j]
                           : t[r * kWidth + j];
}

/// Columns [j0, j1) of C's rows [i0, i1) set to beta * seed.
void seedColumns(const SgemmArgs &g, int64_t i0, int64_t i1, int64_t j0,
                 int64_t j1) {
  for (int64_t i = i0; i < i1; ++i) {
    float *row = g.c + i * g.ldc;
    const float *src = g.seed + i * g.seedRowStride;
    if (g.seedColStride == 1)
      for (int64_t j = j0; j < j1; ++j)
        row[j] = g.beta * src[j];
    else
      for (int64_t j = j0; j < j1; ++j)
        row[j] = g.beta * src[j * g.seedColStride];
  }
}

bool hasEpilogue(const SgemmArgs &g) {
  return g.bias || g.act != SgemmActivation::None;
}

/// The epilogue on columns [j0, j1) of C's rows [i0, i1).
void epilogue(const SgemmArgs &g, int64_t i0, int64_t i1, int64_t j0,
              int64_t j1) {
  const int64_t n = j1 - j0;
  for (int64_t i = i0; i < i1; ++i) {
    float *row = g.c + i * g.ldc + j0;
    if (g.bias)
      for (int64_t j = 0; j < n; ++j)
        row[j] += g.bias[j0 + j];
    applyActivation(g.act, row, n);
  }
}

/// Panels [p0, p1) of C: the whole product for those columns.
void sgemmPanels(const SgemmArgs &g, int64_t p0, int64_t p1) {
  const MicroKernels &mk = kernels();
  const int64_t mr = mk.mr, kMc = mBlock(mr);
  const bool exact = mk.tile(1, 1) != nullptr;
  thread_local Scratch<float> aBuf, bBuf;
  float *ap = aBuf.get(
      size_t(std::min(kMc, (g.m + mr - 1) / mr * mr) * kBlock(g.k)));
  float *bp = g.packedB ? nullptr
                        : bBuf.get(size_t((p1 - p0) * kSgemmNr *
                                          kBlock(g.k)));
  const int64_t kcMax = kBlock(g.k);
  const int64_t j0 = p0 * kSgemmNr, j1 = std::min(p1 * kSgemmNr, g.n);
  if (g.seed)
    seedColumns(g, 0, g.m, j0, j1);
  for (int64_t pc = 0; pc < g.k; pc += kcMax) {
    const int64_t kc = std::min(kcMax, g.k - pc);
    const bool acc = g.seed || g.accumulate || pc > 0;
    const bool last = pc + kc >= g.k;
    if (!g.packedB)
      for (int64_t p = p0; p < p1; ++p)
        packBPanel(g.b, g.ldb, g.transB, g.n, p, pc, kc,
                   bp + (p - p0) * kc * kSgemmNr);
    for (int64_t ic = 0; ic < g.m; ic += kMc) {
      const int64_t mc = std::min(kMc, g.m - ic);
      const RowTiles rt = rowTiles(mc, mr, exact);
      packA(g, rt, ic, pc, kc, ap);
      const int64_t tiles = rt.count;
      for (int64_t p = p0; p < p1; p += mk.panels) {
        const int64_t count = std::min(mk.panels, p1 - p);
        const float *panel = g.packedB ? g.packedB->panel(p, pc)
                                       : bp + (p - p0) * kc * kSgemmNr;
        const int64_t bStride =
            g.packedB ? g.packedB->k() * kSgemmNr : kc * kSgemmNr;
        // A packed weight streams from memory: fetch the next panels.
        const int64_t next = g.packedB ? std::min(mk.panels, p1 - p - count)
                                       : 0;
        const int64_t cols = std::min(count * kSgemmNr, g.n - p * kSgemmNr);
        const float *at = ap;
        for (int64_t t = 0; t < tiles; ++t) {
          const int64_t i0 = rt.row[t];
          const PanelPrefetch pf =
              next ? PanelPrefetch::slice(g.packedB->panel(p + count, pc),
                                          bStride * 4, next,
                                          kc * kSgemmNr * 4, t, tiles)
                   : PanelPrefetch();
          tile(mk, kc, at, panel, bStride, count,
               g.c + (ic + i0) * g.ldc + p * kSgemmNr, g.ldc, rt.rows[t],
               cols, g.alpha, acc, pf);
          at += rt.stride[t] * kc;
        }
      }
      if (last && hasEpilogue(g))
        epilogue(g, ic, ic + mc, j0, j1);
    }
  }
}

/// One row of A against panels [p0, p1) of a packed B: a stream over the
/// weights, which is all a single token's product does.
void gemvPanels(const SgemmArgs &g, int64_t p0, int64_t p1) {
  const MicroKernels &mk = kernels();
  thread_local Scratch<float> aBuf;
  const float *a = g.a;
  if (g.transA) {
    float *row = aBuf.get(size_t(g.k));
    for (int64_t p = 0; p < g.k; ++p)
      row[p] = g.a[p * g.lda];
    a = row;
  }
  for (int64_t p = p0; p < p1; p += kGemvPanels) {
    const int64_t count = std::min<int64_t>(kGemvPanels, p1 - p);
    const int64_t j0 = p * kSgemmNr;
    const int64_t cols = std::min(count * kSgemmNr, g.n - j0);
    alignas(64) float t[kGemvPanels * kSgemmNr];
    mk.gemv(g.k, a, g.packedB->panel(p, 0), g.k * kSgemmNr, count, t);
    float *c = g.c + j0;
    if (g.seed) {
      seedColumns(g, 0, 1, j0, j0 + cols);
      for (int64_t j = 0; j < cols; ++j)
        c[j] += g.alpha * t[j];
    } else {
      for (int64_t j = 0; j < cols; ++j)
        c[j] = g.accumulate ? c[j] + g.alpha * t[j] : g.alpha * t[j];
    }
    if (hasEpilogue(g))
      epilogue(g, 0, 1, j0, j0 + cols);
  }
}

} // namespace

void PackedMatrix::pack(const float *b, int64_t k, int64_t n, int64_t ldb,
                        bool trans) {
  const int64_t panels = (n + kSgemmNr - 1) / kSgemmNr;
  float *d = reset(k, n, size_t(panels * std::max<int64_t>(k, 1) * kSgemmNr));
  for (int64_t p = 0; p < panels; ++p)
    packBPanel(b, ldb, trans, n, p, 0, k, d + p * k * kSgemmNr);
}

void applyActivation(SgemmActivation act, float *x, int64_t n) {
  switch (act) {
  case SgemmActivation::None:
    return;
  case SgemmActivation::Relu:
    // NaN passes through, as the Relu kernel's.
    for (int64_t i = 0; i < n; ++i)
      x[i] = x[i] < 0.0f ? 0.0f : x[i];
    return;
  case SgemmActivation::Gelu:
    return vecGelu(x, x, n);
  case SgemmActivation::GeluTanh:
    return vecGeluTanh(x, x, n);
  }
}

void sgemm(const SgemmArgs &g, int numThreads) {
  if (g.m <= 0 || g.n <= 0)
    return;
  if (g.k <= 0) {
    // An empty sum: C is the seed, itself, or zero, then the epilogue.
    if (g.seed)
      seedColumns(g, 0, g.m, 0, g.n);
    else if (!g.accumulate)
      for (int64_t i = 0; i < g.m; ++i)
        std::fill(g.c + i * g.ldc, g.c + i * g.ldc + g.n, 0.0f);
    if (hasEpilogue(g))
      epilogue(g, 0, g.m, 0, g.n);
    return;
  }
  const int64_t panels = (g.n + kSgemmNr - 1) / kSgemmNr;
  const bool gemv = g.m == 1 && g.packedB;
  // Enough panels per thread to amortise packing A; never more threads
  // than panels.
  const int64_t grain = gemv ? kGemvPanels : 2;
  parallelSlices(numThreads, panels, grain, [&](int64_t p0, int64_t p1) {
    if (gemv)
      gemvPanels(g, p0, p1);
    else
      sgemmPanels(g, p0, p1);
  });
}

const char *sgemmKernelName() { return kernels().name; }

std::vector<const char *> sgemmAvailableKernels() {
  std::vector<const char *> names;
  for (const MicroKernels &k : allKernels())
    names.push_back(k.name);
  return names;
}

bool sgemmUseKernel(const char *name) {
  for (const MicroKernels &k : allKernels())
    if (std::strcmp(k.name, name) == 0) {
      current() = &k;
      return true;
    }
  return false;
}

} // namespace tpc::cpu
