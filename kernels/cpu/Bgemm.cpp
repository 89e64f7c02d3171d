//===- Bgemm.cpp - bf16 matrix products on AVX512-BF16 and AMX ------------===//
//
// The loops follow sgemm's (Sgemm.cpp): threads split the panels of the
// packed weight.
//   avx512-bf16: each thread packs A once into tiles of 16 rows of k pairs
//     and, panel by panel (the panel stays in L1), runs the 16 x 16
//     micro-kernel over every tile of A.
//   amx-bf16: A is read in place (a padded copy only for a K that is not a
//     multiple of 32 or the last rows); for each block of rows that fits
//     half of L2, every pair of panels (32 columns, in L2) meets every pair
//     of 16-row tiles of A: four tdpbf16ps per 32 of k into four fp32
//     accumulator tiles.
// A row of A alone streams the weight through a four-panel GEMV. Every path
// ends in the same vector epilogue (alpha, C0, bias, activation, one
// rounding to bf16).
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Bgemm.h"

#include "kernels/cpu/Convert.h"
#include "kernels/cpu/Parallel.h"
#include "kernels/cpu/Prefetch.h"
#include "kernels/cpu/Scratch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

namespace tpc::cpu {
namespace {

constexpr int kMr = 16;
constexpr int kGemvPanels = 4;
/// bf16 elements of k in one AMX tile row (64 bytes).
constexpr int64_t kAmxK = 2 * kBgemmTilePairs;

bool cpuHasBf16() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

/// AMX-BF16 on the CPU, and Linux's permission to use tile data in this
/// process (asked once; refused by kernels before 5.16).
bool cpuHasAmxBf16() {
#if defined(__x86_64__) && defined(__linux__)
  if (!cpuHasBf16() || !__builtin_cpu_supports("amx-tile") ||
      !__builtin_cpu_supports("amx-bf16"))
    return false;
  constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

BgemmKernel bestKernel() {
  static const BgemmKernel best = cpuHasAmxBf16() ? BgemmKernel::AmxBf16
                                  : cpuHasBf16()  ? BgemmKernel::Avx512Bf16
                                                  : BgemmKernel::Widening;
  return best;
}

BgemmKernel &current() {
  static BgemmKernel kernel = bestKernel();
  return kernel;
}

#if defined(__x86_64__)
/// L2 bytes per core from the C library; 1 MiB where it does not say.
int64_t l2Bytes() {
  static const int64_t bytes = [] {
#if defined(__linux__) && defined(_SC_LEVEL2_CACHE_SIZE)
    long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (v > 0)
      return int64_t(v);
#endif
    return int64_t(1) << 20;
  }();
  return bytes;
}

/// The bf16 pair (k = 2p, 2p + 1) of a row of k values as one dword, zero
/// past k.
inline uint32_t pairAt(const uint16_t *row, int64_t k, int64_t p) {
  const uint32_t lo = row[2 * p];
  const uint32_t hi = 2 * p + 1 < k ? row[2 * p + 1] : 0;
  return lo | (hi << 16);
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
    for (int64_t p = 0; p < pairs; ++p)
      dst[p * kMr + r] = pairAt(row, k, p);
  }
}

#define TPC_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define TPC_AMX                                                                \
  __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,"        \
                        "avx512bf16")))

// The zero-masked forms: GCC 12's plain ones start from an undefined
// register and warn.
TPC_BF16 inline __m512 widenBf16(__m256i bits) {
  const __mmask16 all = 0xffff;
  return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(
      all, _mm512_maskz_cvtepu16_epi32(all, bits), 16));
}

/// The epilogue of `rows` x `cols` of a 16-column fp32 tile `t` (row
/// stride 16) at C[i0, j0]: alpha, beta * C0, bias, activation, rounded to
/// bf16 once. Columns past `cols` are computed on but never stored.
TPC_BF16 void storeTile(const BgemmArgs &g, float *t, int64_t i0, int64_t j0,
                        int64_t rows, int64_t cols) {
  const __mmask16 mask =
      cols >= kBgemmNr ? __mmask16(0xffff) : __mmask16((1u << cols) - 1);
  const __m512 va = _mm512_set1_ps(g.alpha);
  const __m512 vbeta = _mm512_set1_ps(g.beta);
  const __m512 vbias =
      g.bias ? widenBf16(_mm256_maskz_loadu_epi16(mask, g.bias + j0))
             : _mm512_setzero_ps();
  for (int64_t r = 0; r < rows; ++r) {
    __m512 v = _mm512_mul_ps(_mm512_loadu_ps(t + r * kBgemmNr), va);
    if (g.c0) {
      const uint16_t *c0 = g.c0 + (i0 + r) * g.c0Row + j0 * g.c0Col;
      __m256i bits;
      if (g.c0Col == 1) {
        bits = _mm256_maskz_loadu_epi16(mask, c0);
      } else {
        alignas(32) uint16_t gathered[kBgemmNr] = {};
        for (int64_t j = 0; j < cols; ++j)
          gathered[j] = c0[j * g.c0Col];
        bits = _mm256_load_si256(reinterpret_cast<const __m256i *>(gathered));
      }
      v = _mm512_fmadd_ps(vbeta, widenBf16(bits), v);
    }
    _mm512_storeu_ps(t + r * kBgemmNr, _mm512_add_ps(v, vbias));
  }
  applyActivation(g.act, t, rows * kBgemmNr);
  for (int64_t r = 0; r < rows; ++r) {
    const __m256bh v = _mm512_cvtneps_pbh(_mm512_loadu_ps(t + r * kBgemmNr));
    _mm256_mask_storeu_epi16(g.c + (i0 + r) * g.ldc + j0, mask, (__m256i)v);
  }
}

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

/// The tile configuration: palette 1, all eight tiles 16 rows of 64 bytes
/// (C: tmm0-3, A: tmm4-5, B: tmm6-7). A constant in memory: GCC 12 does
/// not see ldtilecfg read a local's stores and drops them.
struct alignas(64) TileConfig {
  uint8_t palette;
  uint8_t startRow;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};
static_assert(sizeof(TileConfig) == 64, "ldtilecfg reads 64 bytes");
constexpr TileConfig kTileConfig = {
    1, 0, {}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};

TPC_AMX void amxConfigure() { _tile_loadconfig(&kTileConfig); }

TPC_AMX void amxRelease() { _tile_release(); }

/// TR x TC tiles of C (16 x 16 fp32 each, written to c[(r * TC + s) *
/// 256]) from TR row tiles of A (a[r], row stride aStride bytes) and TC
/// panels of B, over `blocks` blocks of 32 k.
template <int TR, int TC>
TPC_AMX void amxBlock(const uint16_t *const *a, const int64_t *aStride,
                      const uint16_t *const *b, int64_t blocks, float *c,
                      const PanelPrefetch &pf) {
  _tile_zero(0);
  if (TC > 1)
    _tile_zero(1);
  if (TR > 1)
    _tile_zero(2);
  if (TR > 1 && TC > 1)
    _tile_zero(3);
  for (int64_t kb = 0; kb < blocks; ++kb) {
    // This block's share of the next panels' prefetch.
    for (int64_t l = pf.lines * kb / blocks; l < pf.lines * (kb + 1) / blocks;
         ++l)
      pf.line(l);
    _tile_loadd(4, a[0] + kb * kAmxK, aStride[0]);
    _tile_loadd(6, b[0] + kb * kAmxK * kBgemmNr, 64);
    _tile_dpbf16ps(0, 4, 6);
    if (TC > 1) {
      _tile_loadd(7, b[1] + kb * kAmxK * kBgemmNr, 64);
      _tile_dpbf16ps(1, 4, 7);
    }
    if (TR > 1) {
      _tile_loadd(5, a[1] + kb * kAmxK, aStride[1]);
      _tile_dpbf16ps(2, 5, 6);
      if (TC > 1)
        _tile_dpbf16ps(3, 5, 7);
    }
  }
  constexpr int64_t tile = kMr * kBgemmNr;
  _tile_stored(0, c, 64);
  if (TC > 1)
    _tile_stored(1, c + tile, 64);
  if (TR > 1)
    _tile_stored(2, c + TC * tile, 64);
  if (TR > 1 && TC > 1)
    _tile_stored(3, c + 3 * tile, 64);
}

/// Panels [q0, q1) of C on the 16 x 16 AVX512-BF16 kernel.
void bgemmPanelsAvx512(const BgemmArgs &g, int64_t q0, int64_t q1) {
  const PackedBf16 &b = *g.b;
  const int64_t pairs = b.pairs(), n = b.n();
  const int64_t tiles = (g.m + kMr - 1) / kMr;
  thread_local Scratch<uint32_t> aBuf;
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
      storeTile(g, tile, i0, j0, rows, cols);
    }
  }
}

/// Panels [q0, q1) of C on AMX tiles.
void bgemmPanelsAmx(const BgemmArgs &g, int64_t q0, int64_t q1) {
  const PackedBf16 &b = *g.b;
  const int64_t k = b.k(), n = b.n();
  const int64_t blocks = b.pairStride() / kBgemmTilePairs;
  const int64_t kPad = blocks * kAmxK;
  const int64_t tiles = (g.m + kMr - 1) / kMr;
  // Tiles read in place when whole; the others from a zero-padded copy.
  const bool inPlace = k % kAmxK == 0;
  const int64_t fullTiles = inPlace ? g.m / kMr : 0;
  thread_local Scratch<uint16_t> aBuf;
  uint16_t *copy = nullptr;
  if (fullTiles < tiles) {
    copy = aBuf.get(size_t((tiles - fullTiles) * kMr * kPad));
    for (int64_t i = fullTiles * kMr; i < tiles * kMr; ++i) {
      uint16_t *dst = copy + (i - fullTiles * kMr) * kPad;
      const int64_t have = i < g.m ? k : 0;
      if (have)
        std::memcpy(dst, g.a + i * g.lda, size_t(k) * 2);
      std::fill(dst + have, dst + kPad, uint16_t(0));
    }
  }
  auto rowTile = [&](int64_t t, const uint16_t *&ptr, int64_t &stride) {
    if (t < fullTiles) {
      ptr = g.a + t * kMr * g.lda;
      stride = g.lda * 2;
    } else {
      ptr = copy + (t - fullTiles) * kMr * kPad;
      stride = kPad * 2;
    }
  };
  // Rows of A per block: half of L2, in pairs of tiles.
  const int64_t blockTiles =
      kPad == 0 ? tiles
                : std::max<int64_t>(2, l2Bytes() / 2 / (kMr * kPad * 2) / 2 * 2);
  constexpr int64_t tile = kMr * kBgemmNr;
  const int64_t panelBytes = b.pairStride() * 2 * kBgemmNr * 2;
  alignas(64) float c[4 * tile];
  amxConfigure();
  for (int64_t t0 = 0; t0 < tiles; t0 += blockTiles) {
    const int64_t t1 = std::min(tiles, t0 + blockTiles);
    for (int64_t q = q0; q < q1; q += 2) {
      const int tc = q + 1 < q1 ? 2 : 1;
      const uint16_t *bp[2] = {b.panel(q), tc > 1 ? b.panel(q + 1) : nullptr};
      // The weight streams from memory: each pair of row tiles prefetches
      // its share of the next two panels, spread over its steps of k.
      const int64_t next = std::min<int64_t>(2, q1 - q - tc);
      const int64_t steps = (t1 - t0 + 1) / 2;
      for (int64_t t = t0; t < t1; t += 2) {
        const PanelPrefetch pf =
            next > 0 ? PanelPrefetch::slice(b.panel(q + tc), panelBytes, next,
                                            panelBytes, (t - t0) / 2, steps)
                     : PanelPrefetch();
        const int tr = t + 1 < t1 ? 2 : 1;
        const uint16_t *ap[2] = {nullptr, nullptr};
        int64_t as[2] = {0, 0};
        rowTile(t, ap[0], as[0]);
        if (tr > 1)
          rowTile(t + 1, ap[1], as[1]);
        if (tr == 2 && tc == 2)
          amxBlock<2, 2>(ap, as, bp, blocks, c, pf);
        else if (tr == 2)
          amxBlock<2, 1>(ap, as, bp, blocks, c, pf);
        else if (tc == 2)
          amxBlock<1, 2>(ap, as, bp, blocks, c, pf);
        else
          amxBlock<1, 1>(ap, as, bp, blocks, c, pf);
        for (int r = 0; r < tr; ++r)
          for (int s = 0; s < tc; ++s) {
            const int64_t i0 = (t + r) * kMr, j0 = (q + s) * kBgemmNr;
            storeTile(g, c + (r * tc + s) * tile, i0, j0,
                      std::min<int64_t>(kMr, g.m - i0),
                      std::min(kBgemmNr, n - j0));
          }
      }
    }
  }
  amxRelease();
}

/// One row of A against panels [q0, q1).
void bgemvPanels(const BgemmArgs &g, int64_t q0, int64_t q1) {
  const PackedBf16 &b = *g.b;
  const int64_t pairs = b.pairs(), n = b.n();
  thread_local Scratch<uint32_t> aBuf;
  uint32_t *a = aBuf.get(size_t(pairs));
  for (int64_t p = 0; p < pairs; ++p)
    a[p] = pairAt(g.a, b.k(), p);
  alignas(64) float t[kGemvPanels * kBgemmNr];
  for (int64_t q = q0; q < q1; q += kGemvPanels) {
    const int64_t count = std::min<int64_t>(kGemvPanels, q1 - q);
    gemvBf16(pairs, a, b.panel(q), b.pairStride() * 2 * kBgemmNr, count, t);
    for (int64_t s = 0; s < count; ++s) {
      const int64_t j0 = (q + s) * kBgemmNr;
      storeTile(g, t + s * kBgemmNr, 0, j0, 1, std::min(kBgemmNr, n - j0));
    }
  }
}
#endif

} // namespace

BgemmKernel bgemmKernel() { return current(); }

bool bgemmAvailable() { return current() != BgemmKernel::Widening; }

const char *bgemmKernelName(BgemmKernel kernel) {
  // By BgemmKernel, which orders the kernels worst to best.
  static constexpr const char *kNames[] = {"widening", "avx512-bf16",
                                           "amx-bf16"};
  static_assert(std::size(kNames) == int(BgemmKernel::AmxBf16) + 1,
                "one name per kernel");
  return kNames[int(kernel)];
}

std::vector<BgemmKernel> bgemmAvailableKernels() {
  std::vector<BgemmKernel> kernels;
  for (int k = int(bestKernel()); k >= 0; --k)
    kernels.push_back(BgemmKernel(k));
  return kernels;
}

bool bgemmUseKernel(BgemmKernel kernel) {
  if (kernel > bestKernel())
    return false;
  current() = kernel;
  return true;
}

void PackedBf16::pack(const uint16_t *b, int64_t k, int64_t n, int64_t ldb,
                      bool trans) {
  const int64_t panels = (n + kBgemmNr - 1) / kBgemmNr;
  const int64_t stride = pairStrideOf(k);
  uint16_t *d =
      reset(k, n, size_t(std::max<int64_t>(1, panels * stride * 2 * kBgemmNr)));
  for (int64_t q = 0; q < panels; ++q)
    for (int64_t p = 0; p < stride; ++p)
      for (int64_t j = 0; j < kBgemmNr; ++j)
        for (int64_t h = 0; h < 2; ++h) {
          const int64_t row = 2 * p + h, col = q * kBgemmNr + j;
          uint16_t v = 0;
          if (row < k && col < n)
            v = trans ? b[col * ldb + row] : b[row * ldb + col];
          d[((q * stride + p) * kBgemmNr + j) * 2 + h] = v;
        }
}

void bgemm(const BgemmArgs &g, int numThreads) {
#if defined(__x86_64__)
  if (g.m <= 0 || g.b->n() <= 0)
    return;
  const int64_t panels = (g.b->n() + kBgemmNr - 1) / kBgemmNr;
  const bool gemv = g.m == 1;
  const bool amx = !gemv && current() == BgemmKernel::AmxBf16;
  const int64_t grain = gemv ? kGemvPanels : 2;
  parallelSlices(numThreads, panels, grain, [&](int64_t q0, int64_t q1) {
    if (gemv)
      bgemvPanels(g, q0, q1);
    else if (amx)
      bgemmPanelsAmx(g, q0, q1);
    else
      bgemmPanelsAvx512(g, q0, q1);
  });
#else
  // bgemmAvailable() is false: there is nothing to run.
  (void)g, (void)numThreads;
#endif
}

} // namespace tpc::cpu
