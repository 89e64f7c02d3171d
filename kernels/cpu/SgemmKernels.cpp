//===- SgemmKernels.cpp - sgemm micro-kernels: AVX-512, AVX2, generic -----===//
//
// The AVX-512 and AVX2 kernels are compiled for their instruction sets with
// function attributes, so the rest of the library keeps the baseline target
// and the choice is made at run time (__builtin_cpu_supports).
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/SgemmKernels.h"

#include <algorithm>
#include <immintrin.h>
#include <utility>
#include <vector>

namespace tpc::cpu {
namespace {

/// Rows of the AVX2 and generic tiles.
constexpr int kMr = 6;
constexpr int kNr = int(kSgemmNr);
/// Rows of the AVX-512 tile.
constexpr int kMr512 = 14;
static_assert(kMr512 <= kSgemmMaxMr && kMr <= kSgemmMaxMr, "tile too tall");

void tileGeneric(int64_t kc, const float *ap, const float *bp, int64_t,
                 float *c, int64_t ldc, float alpha, bool acc,
                 const PanelPrefetch &pf) {
  pf.all();
  float t[kMr][kNr] = {};
  for (int64_t p = 0; p < kc; ++p)
    for (int r = 0; r < kMr; ++r)
      for (int j = 0; j < kNr; ++j)
        t[r][j] += ap[p * kMr + r] * bp[p * kNr + j];
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < kNr; ++j)
      c[r * ldc + j] = alpha * t[r][j] + (acc ? c[r * ldc + j] : 0.0f);
}

/// The selector of a set with only its full kMr x Nr tile.
template <SgemmTileFn Full> SgemmTileFn fullTile(int64_t rows, int64_t count) {
  return rows == kMr && count == 1 ? Full : nullptr;
}

void gemvGeneric(int64_t k, const float *a, const float *panels,
                 int64_t stride, int64_t count, float *out) {
  for (int64_t q = 0; q < count; ++q) {
    float t[kNr] = {};
    const float *b = panels + q * stride;
    for (int64_t p = 0; p < k; ++p)
      for (int j = 0; j < kNr; ++j)
        t[j] += a[p] * b[p * kNr + j];
    for (int j = 0; j < kNr; ++j)
      out[q * kNr + j] = t[j];
  }
}

#if defined(__x86_64__) || defined(__i386__)
#define TPC_AVX2 __attribute__((target("avx2,fma")))

TPC_AVX2 inline void storeRow(float *c, __m256 x0, __m256 x1, __m256 alpha,
                              bool acc) {
  x0 = _mm256_mul_ps(x0, alpha);
  x1 = _mm256_mul_ps(x1, alpha);
  if (acc) {
    x0 = _mm256_add_ps(x0, _mm256_loadu_ps(c));
    x1 = _mm256_add_ps(x1, _mm256_loadu_ps(c + 8));
  }
  _mm256_storeu_ps(c, x0);
  _mm256_storeu_ps(c + 8, x1);
}

/// 6 x 16: twelve accumulators, two loads of B and six broadcasts of A per
/// step of k, so the two FMA pipes stay busy. The loops over rows unroll
/// whole, so every accumulator stays in a register.
TPC_AVX2 void tileAvx2(int64_t kc, const float *ap, const float *bp, int64_t,
                       float *c, int64_t ldc, float alpha, bool acc,
                       const PanelPrefetch &pf) {
  pf.all();
  // The tile of C is read (acc) and written only after the loop: fetch it
  // now so that its cache misses overlap the arithmetic.
  for (int r = 0; r < kMr; ++r) {
    _mm_prefetch(reinterpret_cast<const char *>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char *>(c + r * ldc + 15),
                 _MM_HINT_T0);
  }
  __m256 x0[kMr], x1[kMr];
#pragma GCC unroll 8
  for (int r = 0; r < kMr; ++r)
    x0[r] = x1[r] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
#pragma GCC unroll 8
    for (int r = 0; r < kMr; ++r) {
      const __m256 a = _mm256_broadcast_ss(ap + r);
      x0[r] = _mm256_fmadd_ps(a, b0, x0[r]);
      x1[r] = _mm256_fmadd_ps(a, b1, x1[r]);
    }
    ap += kMr;
    bp += kNr;
  }
  const __m256 va = _mm256_set1_ps(alpha);
#pragma GCC unroll 8
  for (int r = 0; r < kMr; ++r)
    storeRow(c + r * ldc, x0[r], x1[r], va, acc);
}

/// Q panels at once, two accumulators each, over Q sequential streams of
/// weights (Q = 4: eight independent accumulators).
template <int Q>
TPC_AVX2 inline void gemvPanelsAvx2(int64_t k, const float *a,
                                    const float *panels, int64_t stride,
                                    float *out) {
  __m256 x0[Q], x1[Q];
  const float *b[Q];
#pragma GCC unroll 4
  for (int q = 0; q < Q; ++q) {
    x0[q] = x1[q] = _mm256_setzero_ps();
    b[q] = panels + q * stride;
  }
  for (int64_t p = 0; p < k; ++p) {
    const __m256 av = _mm256_broadcast_ss(a + p);
    const int64_t o = p * kNr;
#pragma GCC unroll 4
    for (int q = 0; q < Q; ++q) {
      x0[q] = _mm256_fmadd_ps(av, _mm256_loadu_ps(b[q] + o), x0[q]);
      x1[q] = _mm256_fmadd_ps(av, _mm256_loadu_ps(b[q] + o + 8), x1[q]);
    }
  }
#pragma GCC unroll 4
  for (int q = 0; q < Q; ++q) {
    _mm256_storeu_ps(out + q * kNr, x0[q]);
    _mm256_storeu_ps(out + q * kNr + 8, x1[q]);
  }
}

/// Four panels at once; fewer (the last panels) one at a time.
TPC_AVX2 void gemvAvx2(int64_t k, const float *a, const float *panels,
                       int64_t stride, int64_t count, float *out) {
  if (count == kGemvPanels)
    return gemvPanelsAvx2<kGemvPanels>(k, a, panels, stride, out);
  for (int64_t q = 0; q < count; ++q)
    gemvPanelsAvx2<1>(k, a, panels + q * stride, stride, out + q * kNr);
}

#define TPC_AVX512 __attribute__((target("avx512f")))

/// 14 x 32 (two panels): 28 accumulators; per step of k two loads of B
/// and, per row, one broadcast of A that feeds two FMAs, so the loads stay
/// well under the FMAs and both 512-bit FMA pipes are busy. R x P
/// instances serve the edge tiles (fewer rows, one panel) without
/// computing rows that are not there.
/// The products of a 14 x 32 tile (R x 16P at the edges) into `out` (rows
/// of 32): the loop alone in its function, with nothing else live, so that
/// GCC keeps every accumulator and both rows of B in registers.
template <int R, int P>
TPC_AVX512 __attribute__((noinline)) void
dotsAvx512(int64_t kc, const float *ap, const float *bp0, const float *bp1,
           float *out, const PanelPrefetch &pf) {
  __m512 x0[R], x1[R];
  for (int r = 0; r < R; ++r)
    x0[r] = x1[r] = _mm512_setzero_ps();
  // One line of the prefetch slice every `every` steps of k.
  const int64_t every = pf.lines ? std::max<int64_t>(1, kc / pf.lines) : 0;
  int64_t issued = 0, wait = every;
  for (int64_t p = 0; p < kc; ++p) {
    if (every && --wait == 0) {
      wait = every;
      if (issued < pf.lines)
        pf.line(issued++);
    }
    const __m512 b0 = _mm512_loadu_ps(bp0 + p * kNr);
    if constexpr (P > 1) {
      const __m512 b1 = _mm512_loadu_ps(bp1 + p * kNr);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        const __m512 a = _mm512_set1_ps(ap[r]);
        x0[r] = _mm512_fmadd_ps(a, b0, x0[r]);
        x1[r] = _mm512_fmadd_ps(a, b1, x1[r]);
      }
    } else {
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r)
        x0[r] = _mm512_fmadd_ps(_mm512_set1_ps(ap[r]), b0, x0[r]);
    }
    ap += R;
  }
  while (issued < pf.lines)
    pf.line(issued++);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    _mm512_store_ps(out + r * 2 * kNr, x0[r]);
    if constexpr (P > 1)
      _mm512_store_ps(out + r * 2 * kNr + kNr, x1[r]);
  }
}

/// 14 x 32 (two panels): 28 accumulators; per step of k two loads of B
/// and, per row, one broadcast of A that feeds two FMAs, so the loads stay
/// well under the FMAs and both 512-bit FMA pipes are busy. R x P
/// instances serve the edge tiles (fewer rows, one panel) without
/// computing rows that are not there.
template <int R, int P>
TPC_AVX512 void tileAvx512(int64_t kc, const float *ap, const float *bp,
                           int64_t bStride, float *c, int64_t ldc,
                           float alpha, bool acc, const PanelPrefetch &pf) {
  // C is read (acc) and written only after the loop: fetch it now so that
  // its cache misses overlap the arithmetic.
  for (int r = 0; r < R; ++r)
    for (int s = 0; s < P; ++s)
      _mm_prefetch(reinterpret_cast<const char *>(c + r * ldc + s * kNr),
                   _MM_HINT_T0);
  alignas(64) float t[R * 2 * kNr];
  dotsAvx512<R, P>(kc, ap, bp, bp + (P > 1 ? bStride : 0), t, pf);
  const __m512 va = _mm512_set1_ps(alpha);
  for (int r = 0; r < R; ++r)
    for (int s = 0; s < P; ++s) {
      float *dst = c + r * ldc + s * kNr;
      __m512 v = _mm512_mul_ps(_mm512_load_ps(t + (2 * r + s) * kNr), va);
      if (acc)
        v = _mm512_add_ps(v, _mm512_loadu_ps(dst));
      _mm512_storeu_ps(dst, v);
    }
}

template <int... Rows>
SgemmTileFn pickAvx512(int64_t rows, int64_t count,
                       std::integer_sequence<int, Rows...>) {
  static constexpr SgemmTileFn kOne[] = {tileAvx512<Rows + 1, 1>...};
  static constexpr SgemmTileFn kTwo[] = {tileAvx512<Rows + 1, 2>...};
  if (rows < 1 || rows > kMr512 || count < 1 || count > 2)
    return nullptr;
  return count == 1 ? kOne[rows - 1] : kTwo[rows - 1];
}

SgemmTileFn tilesAvx512(int64_t rows, int64_t count) {
  return pickAvx512(rows, count, std::make_integer_sequence<int, kMr512>());
}

/// Four panels at once, one zmm each, two accumulators per panel (even and
/// odd k) so that the FMA latency is hidden behind eight chains.
TPC_AVX512 void gemvAvx512(int64_t k, const float *a, const float *panels,
                           int64_t stride, int64_t count, float *out) {
  __m512 even[kGemvPanels], odd[kGemvPanels];
  for (int q = 0; q < kGemvPanels; ++q)
    even[q] = odd[q] = _mm512_setzero_ps();
  int64_t p = 0;
  for (; p + 1 < k; p += 2) {
    const __m512 a0 = _mm512_set1_ps(a[p]), a1 = _mm512_set1_ps(a[p + 1]);
    for (int q = 0; q < kGemvPanels; ++q) {
      if (q >= count)
        break;
      const float *b = panels + q * stride + p * kNr;
      even[q] = _mm512_fmadd_ps(a0, _mm512_loadu_ps(b), even[q]);
      odd[q] = _mm512_fmadd_ps(a1, _mm512_loadu_ps(b + kNr), odd[q]);
    }
  }
  for (; p < k; ++p) {
    const __m512 a0 = _mm512_set1_ps(a[p]);
    for (int q = 0; q < count; ++q)
      even[q] = _mm512_fmadd_ps(
          a0, _mm512_loadu_ps(panels + q * stride + p * kNr), even[q]);
  }
  for (int q = 0; q < count; ++q)
    _mm512_storeu_ps(out + q * kNr, _mm512_add_ps(even[q], odd[q]));
}
#endif

} // namespace

std::vector<MicroKernels> availableMicroKernels() {
  std::vector<MicroKernels> all;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    all.push_back({"avx512f", kMr512, 2, tilesAvx512, gemvAvx512});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    all.push_back({"avx2-fma", kMr, 1, fullTile<tileAvx2>, gemvAvx2});
#endif
  all.push_back({"generic", kMr, 1, fullTile<tileGeneric>, gemvGeneric});
  return all;
}

} // namespace tpc::cpu
