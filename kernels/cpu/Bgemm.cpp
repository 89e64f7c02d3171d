//===- Bgemm.cpp - bf16 matrix products on AVX512-BF16 --------------------===//
//
// The loops follow sgemm's (Sgemm.cpp): threads split the panels of the
// packed weight; each thread packs A once into tiles of 16 rows of k pairs
// and, panel by panel (the panel stays in L1), runs the 16 x 16
// micro-kernel over every tile of A. A row of A alone streams the weight
// through a four-panel GEMV.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Bgemm.h"

#include "kernels/cpu/Convert.h"
#include "kernels/cpu/Parallel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tpc::cpu {
namespace {

constexpr int kMr = 16;
constexpr int kGemvPanels = 4;

bool &forcedOff() {
  static bool off = false;
  return off;
}

bool cpuHasBf16() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

template <class T> T *allocAligned(size_t count) {
  size_t bytes = std::max<size_t>(64, (count * sizeof(T) + 63) / 64 * 64);
  void *p = std::aligned_alloc(64, bytes);
  if (!p)
    throw std::bad_alloc();
  return static_cast<T *>(p);
}

/// Rows [i0, i0 + rows) of A as pairs x 16 dwords, each the bf16 pair
/// (k = 2p, 2p + 1) of one row, zero past K and past the rows.
void packA(const BgemmArgs &g, int64_t k, int64_t i0, int64_t rows,
           uint32_t *dst) {
  const int64_t pairs = (k + 1) / 2;
  for (int64_t r = 0; r < kMr; ++r) {
    if (r >= rows) {
      for (int64_t p = 0; p < pairs; ++p)
        dst[p * kMr + r] = 0;
      continue;
    }
    const uint16_t *row = g.a + (i0 + r) * g.lda;
    for (int64_t p = 0; p < pairs; ++p) {
      uint32_t lo = row[2 * p];
      uint32_t hi = 2 * p + 1 < k ? row[2 * p + 1] : 0;
      dst[p * kMr + r] = lo | (hi << 16);
    }
  }
}

/// alpha * t (+ beta * C0) rounded to bf16 into C, for `rows` x `cols` of a
/// 16 x 16 fp32 tile.
void storeTile(const BgemmArgs &g, const float *t, int64_t i0, int64_t j0,
               int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) {
      float v = g.alpha * t[r * kBgemmNr + j];
      if (g.c0)
        v += g.beta *
             bfloat16ToFloat(BFloat16{
                 g.c0[(i0 + r) * g.c0Row + (j0 + j) * g.c0Col]});
      g.c[(i0 + r) * g.ldc + j0 + j] = floatToBFloat16(v).bits;
    }
}

#if defined(__x86_64__)
#define TPC_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

/// 16 x 16 in fp32: sixteen accumulators, per pair of k one load of the
/// panel and sixteen dot products with a row's broadcast pair.
TPC_BF16 void tileBf16(int64_t pairs, const uint32_t *ap, const uint16_t *bp,
                       float *t) {
  __m512 x[kMr];
  for (int r = 0; r < kMr; ++r)
    x[r] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    const __m512bh b = (__m512bh)_mm512_loadu_si512(bp);
#pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r)
      x[r] = _mm512_dpbf16_ps(
          x[r], (__m512bh)_mm512_set1_epi32(int(ap[r])), b);
    ap += kMr;
    bp += 2 * kBgemmNr;
  }
  for (int r = 0; r < kMr; ++r)
    _mm512_storeu_ps(t + r * kBgemmNr, x[r]);
}

/// A whole tile written as bf16 without C0: scaled and rounded in vectors.
TPC_BF16 void storeFullTile(const float *t, float alpha, uint16_t *c,
                            int64_t ldc) {
  const __m512 va = _mm512_set1_ps(alpha);
  for (int r = 0; r < kMr; ++r) {
    __m256bh v =
        _mm512_cvtneps_pbh(_mm512_mul_ps(_mm512_loadu_ps(t + r * kBgemmNr), va));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(c + r * ldc), (__m256i)v);
  }
}

/// One row of A (pairs dwords) against `count` panels: two accumulators
/// per panel (even and odd pairs) to hide the latency.
TPC_BF16 void gemvBf16(int64_t pairs, const uint32_t *a, const uint16_t *panels,
                       int64_t stride, int64_t count, float *out) {
  __m512 even[kGemvPanels], odd[kGemvPanels];
  for (int q = 0; q < kGemvPanels; ++q)
    even[q] = odd[q] = _mm512_setzero_ps();
  int64_t p = 0;
  for (; p + 1 < pairs; p += 2) {
    const __m512bh a0 = (__m512bh)_mm512_set1_epi32(int(a[p]));
    const __m512bh a1 = (__m512bh)_mm512_set1_epi32(int(a[p + 1]));
    for (int q = 0; q < kGemvPanels; ++q) {
      if (q >= count)
        break;
      const uint16_t *b = panels + q * stride + p * 2 * kBgemmNr;
      even[q] = _mm512_dpbf16_ps(even[q], a0,
                                 (__m512bh)_mm512_loadu_si512(b));
      odd[q] = _mm512_dpbf16_ps(odd[q], a1,
                                (__m512bh)_mm512_loadu_si512(b + 2 * kBgemmNr));
    }
  }
  for (; p < pairs; ++p) {
    const __m512bh a0 = (__m512bh)_mm512_set1_epi32(int(a[p]));
    for (int q = 0; q < count; ++q)
      even[q] = _mm512_dpbf16_ps(
          even[q], a0,
          (__m512bh)_mm512_loadu_si512(panels + q * stride + p * 2 * kBgemmNr));
  }
  for (int q = 0; q < count; ++q)
    _mm512_storeu_ps(out + q * kBgemmNr, _mm512_add_ps(even[q], odd[q]));
}
#endif

/// A per-thread buffer that only grows.
struct Scratch {
  uint32_t *data = nullptr;
  size_t size = 0;
  ~Scratch() { std::free(data); }
  uint32_t *get(size_t count) {
    if (count > size) {
      std::free(data);
      data = allocAligned<uint32_t>(count);
      size = count;
    }
    return data;
  }
};

/// Panels [q0, q1) of C.
void bgemmPanels(const BgemmArgs &g, int64_t q0, int64_t q1) {
#if defined(__x86_64__)
  const PackedBf16 &b = *g.b;
  const int64_t pairs = b.pairs(), n = b.n();
  const int64_t tiles = (g.m + kMr - 1) / kMr;
  thread_local Scratch aBuf;
  uint32_t *ap = aBuf.get(size_t(tiles * pairs * kMr));
  for (int64_t t = 0; t < tiles; ++t)
    packA(g, b.k(), t * kMr, std::min<int64_t>(kMr, g.m - t * kMr),
          ap + t * pairs * kMr);
  alignas(64) float tile[kMr * kBgemmNr];
  for (int64_t q = q0; q < q1; ++q) {
    const int64_t j0 = q * kBgemmNr;
    const int64_t cols = std::min(kBgemmNr, n - j0);
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t i0 = t * kMr, rows = std::min<int64_t>(kMr, g.m - i0);
      tileBf16(pairs, ap + t * pairs * kMr, b.panel(q), tile);
      if (rows == kMr && cols == kBgemmNr && !g.c0)
        storeFullTile(tile, g.alpha, g.c + i0 * g.ldc + j0, g.ldc);
      else
        storeTile(g, tile, i0, j0, rows, cols);
    }
  }
#else
  (void)g, (void)q0, (void)q1;
#endif
}

/// One row of A against panels [q0, q1).
void bgemvPanels(const BgemmArgs &g, int64_t q0, int64_t q1) {
#if defined(__x86_64__)
  const PackedBf16 &b = *g.b;
  const int64_t pairs = b.pairs(), n = b.n();
  thread_local Scratch aBuf;
  uint32_t *a = aBuf.get(size_t(pairs));
  for (int64_t p = 0; p < pairs; ++p) {
    uint32_t lo = g.a[2 * p];
    uint32_t hi = 2 * p + 1 < b.k() ? g.a[2 * p + 1] : 0;
    a[p] = lo | (hi << 16);
  }
  alignas(64) float t[kGemvPanels * kBgemmNr];
  for (int64_t q = q0; q < q1; q += kGemvPanels) {
    const int64_t count = std::min<int64_t>(kGemvPanels, q1 - q);
    gemvBf16(pairs, a, b.panel(q), pairs * 2 * kBgemmNr, count, t);
    const int64_t j0 = q * kBgemmNr;
    const int64_t cols = std::min(count * kBgemmNr, n - j0);
    for (int64_t j = 0; j < cols; ++j) {
      float v = g.alpha * t[j];
      if (g.c0)
        v += g.beta * bfloat16ToFloat(BFloat16{g.c0[(j0 + j) * g.c0Col]});
      g.c[j0 + j] = floatToBFloat16(v).bits;
    }
  }
#else
  (void)g, (void)q0, (void)q1;
#endif
}

} // namespace

bool bgemmAvailable() {
  static const bool has = cpuHasBf16();
  return has && !forcedOff();
}

void bgemmForceOff(bool off) { forcedOff() = off; }

void PackedBf16::Free::operator()(uint16_t *p) const { std::free(p); }

void PackedBf16::pack(const uint16_t *b, int64_t k, int64_t n, int64_t ldb,
                      bool trans) {
  k_ = k;
  n_ = n;
  const int64_t panels = (n + kBgemmNr - 1) / kBgemmNr;
  const int64_t pairs = (k + 1) / 2;
  data_.reset(allocAligned<uint16_t>(
      size_t(std::max<int64_t>(1, panels * pairs * 2 * kBgemmNr))));
  uint16_t *d = data_.get();
  for (int64_t q = 0; q < panels; ++q)
    for (int64_t p = 0; p < pairs; ++p)
      for (int64_t j = 0; j < kBgemmNr; ++j)
        for (int64_t h = 0; h < 2; ++h) {
          const int64_t row = 2 * p + h, col = q * kBgemmNr + j;
          uint16_t v = 0;
          if (row < k && col < n)
            v = trans ? b[col * ldb + row] : b[row * ldb + col];
          d[((q * pairs + p) * kBgemmNr + j) * 2 + h] = v;
        }
}

void bgemm(const BgemmArgs &g, int numThreads) {
  if (g.m <= 0 || g.b->n() <= 0)
    return;
  const int64_t panels = (g.b->n() + kBgemmNr - 1) / kBgemmNr;
  const bool gemv = g.m == 1;
  const int64_t grain = gemv ? kGemvPanels : 2;
  const int threads =
      int(std::max<int64_t>(1, std::min<int64_t>(numThreads, panels / grain)));
  parallelRun(threads, [&](int t, int parts) {
    int64_t q0, q1;
    splitRange(panels, t, parts, grain, q0, q1);
    if (q0 >= q1)
      return;
    if (gemv)
      bgemvPanels(g, q0, q1);
    else
      bgemmPanels(g, q0, q1);
  });
}

} // namespace tpc::cpu
