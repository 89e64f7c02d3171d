//===- QuantMatMul.cpp - Block-quantized weight GEMM (CPU) ----------------===//
#include "kernels/cpu/QuantMatMul.h"

#include "kernels/cpu/Parallel.h"

#include <algorithm>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TPC_QUANT_X86 1
#define TPC_AVX512 __attribute__((target("avx512f")))
#define TPC_AVX2 __attribute__((target("avx2,fma")))
#endif

namespace tpc::cpu {
namespace {

/// The code at index `i` of a row of `bits`-bit codes packed low first.
inline int codeAt(const uint8_t *row, int64_t i, int bits) {
  if (bits == 8)
    return row[i];
  uint8_t byte = row[i / 2];
  return i % 2 ? byte >> 4 : byte & 15;
}

/// Block b's zero point of column n as a float.
inline float zeroOf(const BlockQuantWeight &w, int64_t n, int64_t b) {
  if (w.zeroCodes) {
    int64_t perColumn = (w.blocks() * w.bits + 7) / 8;
    return float(codeAt(w.zeroCodes + n * perColumn, b, w.bits));
  }
  if (w.zeroFloats)
    return w.zeroFloats[n * w.blocks() + b];
  return float(1 << (w.bits - 1));
}

void portableColumns(const float *a, int64_t rows, const BlockQuantWeight &w,
                     float *y, int64_t n0, int64_t n1) {
  int64_t blocks = w.blocks(), blob = w.blockSize * w.bits / 8;
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t r = 0; r < rows; ++r) {
      const float *x = a + r * w.k;
      float acc = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t *codes = w.codes + (n * blocks + b) * blob;
        float zero = zeroOf(w, n, b), part = 0;
        int64_t end = std::min(w.blockSize, w.k - b * w.blockSize);
        for (int64_t i = 0; i < end; ++i)
          part += (float(codeAt(codes, i, w.bits)) - zero) *
                  x[b * w.blockSize + i];
        acc += part * w.scales[n * blocks + b];
      }
      y[r * w.n + n] = acc;
    }
}

#ifdef TPC_QUANT_X86
bool cpuHasAvx512() { return __builtin_cpu_supports("avx512f"); }
bool cpuHasAvx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}


/// Rows [r0, r0 + R) of group g: per block, each k's 32 codes are widened
/// once and multiplied into every row's sums; P independent sums per row
/// (alternate k) keep the FMA chains short when R is small.
template <int R, int P>
TPC_AVX512 void packedGroup(const float *a, const float *sums, int64_t r0,
                            const PackedBlockQuant &w, float *y, int64_t g) {
  const int64_t bs = w.blockSize, unit = 32 * w.bits / 8;
  const __m512i low = _mm512_set1_epi32(15);
  __m512 acc[R][2];
  for (int r = 0; r < R; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t b = 0; b < w.blocks; ++b) {
    const uint8_t *c = w.codes.data() + (g * w.blocks + b) * bs * unit;
    const int64_t k0 = b * bs, kb = std::min(bs, w.k - k0);
    __m512 t[R][P][2];
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < P; ++q)
        t[r][q][0] = t[r][q][1] = _mm512_setzero_ps();
    for (int64_t i = 0; i < kb; i += P) {
      for (int q = 0; q < P; ++q) {
        if (P > 1 && i + q >= kb)
          break;
        const uint8_t *ci = c + (i + q) * unit;
        __m512 lo, hi;
        if (w.bits == 4) {
          __m512i v = _mm512_cvtepu8_epi32(
              _mm_loadu_si128(reinterpret_cast<const __m128i *>(ci)));
          lo = _mm512_cvtepi32_ps(_mm512_and_si512(v, low));
          hi = _mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4));
        } else {
          lo = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
              _mm_loadu_si128(reinterpret_cast<const __m128i *>(ci))));
          hi = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
              _mm_loadu_si128(reinterpret_cast<const __m128i *>(ci + 16))));
        }
        for (int r = 0; r < R; ++r) {
          const __m512 x = _mm512_set1_ps(a[(r0 + r) * w.k + k0 + i + q]);
          t[r][q][0] = _mm512_fmadd_ps(lo, x, t[r][q][0]);
          t[r][q][1] = _mm512_fmadd_ps(hi, x, t[r][q][1]);
        }
      }
    }
    const float *s = w.scales.data() + (g * w.blocks + b) * 32;
    const float *zs = w.zeroScales.data() + (g * w.blocks + b) * 32;
    for (int h = 0; h < 2; ++h) {
      const __m512 sv = _mm512_loadu_ps(s + 16 * h);
      const __m512 zv = _mm512_loadu_ps(zs + 16 * h);
      for (int r = 0; r < R; ++r) {
        __m512 tr = t[r][0][h];
        for (int q = 1; q < P; ++q)
          tr = _mm512_add_ps(tr, t[r][q][h]);
        acc[r][h] = _mm512_fmadd_ps(tr, sv, acc[r][h]);
        acc[r][h] = _mm512_fnmadd_ps(
            zv, _mm512_set1_ps(sums[(r0 + r) * w.blocks + b]), acc[r][h]);
      }
    }
  }
  const int64_t n0 = g * 32, valid = std::min<int64_t>(32, w.n - n0);
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < 2; ++h) {
      const int64_t cnt = std::min<int64_t>(16, valid - 16 * h);
      if (cnt <= 0)
        continue;
      const __mmask16 m = __mmask16((1u << cnt) - 1);
      _mm512_mask_storeu_ps(y + (r0 + r) * w.n + n0 + 16 * h, m, acc[r][h]);
    }
}

/// packedGroup on AVX2: the group's 32 columns as four vectors of 8.
template <int R, int P>
TPC_AVX2 void packedGroupAvx2(const float *a, const float *sums, int64_t r0,
                              const PackedBlockQuant &w, float *y,
                              int64_t g) {
  const int64_t bs = w.blockSize, unit = 32 * w.bits / 8;
  const __m256i low = _mm256_set1_epi32(15);
  float acc[R][32] = {};
  for (int64_t b = 0; b < w.blocks; ++b) {
    const uint8_t *c = w.codes.data() + (g * w.blocks + b) * bs * unit;
    const int64_t k0 = b * bs, kb = std::min(bs, w.k - k0);
    __m256 t[R][P][4];
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < P; ++q)
        for (int h = 0; h < 4; ++h)
          t[r][q][h] = _mm256_setzero_ps();
    for (int64_t i = 0; i < kb; i += P) {
      for (int q = 0; q < P; ++q) {
        if (P > 1 && i + q >= kb)
          break;
        const uint8_t *ci = c + (i + q) * unit;
        __m256 v[4];
        if (w.bits == 4) {
          const __m128i bytes =
              _mm_loadu_si128(reinterpret_cast<const __m128i *>(ci));
          const __m256i first = _mm256_cvtepu8_epi32(bytes);
          const __m256i second = _mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8));
          v[0] = _mm256_cvtepi32_ps(_mm256_and_si256(first, low));
          v[1] = _mm256_cvtepi32_ps(_mm256_and_si256(second, low));
          v[2] = _mm256_cvtepi32_ps(_mm256_srli_epi32(first, 4));
          v[3] = _mm256_cvtepi32_ps(_mm256_srli_epi32(second, 4));
        } else {
          for (int h = 0; h < 4; ++h)
            v[h] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(
                reinterpret_cast<const __m128i *>(ci + 8 * h))));
        }
        for (int r = 0; r < R; ++r) {
          const __m256 x = _mm256_set1_ps(a[(r0 + r) * w.k + k0 + i + q]);
          for (int h = 0; h < 4; ++h)
            t[r][q][h] = _mm256_fmadd_ps(v[h], x, t[r][q][h]);
        }
      }
    }
    const float *s = w.scales.data() + (g * w.blocks + b) * 32;
    const float *zs = w.zeroScales.data() + (g * w.blocks + b) * 32;
    for (int h = 0; h < 4; ++h) {
      const __m256 sv = _mm256_loadu_ps(s + 8 * h);
      const __m256 zv = _mm256_loadu_ps(zs + 8 * h);
      for (int r = 0; r < R; ++r) {
        __m256 tr = t[r][0][h];
        for (int q = 1; q < P; ++q)
          tr = _mm256_add_ps(tr, t[r][q][h]);
        __m256 ar = _mm256_loadu_ps(acc[r] + 8 * h);
        ar = _mm256_fmadd_ps(tr, sv, ar);
        ar = _mm256_fnmadd_ps(
            zv, _mm256_set1_ps(sums[(r0 + r) * w.blocks + b]), ar);
        _mm256_storeu_ps(acc[r] + 8 * h, ar);
      }
    }
  }
  const int64_t n0 = g * 32, valid = std::min<int64_t>(32, w.n - n0);
  for (int r = 0; r < R; ++r)
    for (int64_t j = 0; j < valid; ++j)
      y[(r0 + r) * w.n + n0 + j] = acc[r][j];
}

void packedGroupsAvx2(const float *a, const float *sums, int64_t rows,
                      const PackedBlockQuant &w, float *y, int64_t g0,
                      int64_t g1) {
  for (int64_t g = g0; g < g1; ++g) {
    int64_t r = 0;
    for (; r + 2 <= rows; r += 2)
      packedGroupAvx2<2, 1>(a, sums, r, w, y, g);
    if (r < rows)
      packedGroupAvx2<1, 2>(a, sums, r, w, y, g);
  }
}

void packedGroups(const float *a, const float *sums, int64_t rows,
                  const PackedBlockQuant &w, float *y, int64_t g0,
                  int64_t g1) {
  for (int64_t g = g0; g < g1; ++g) {
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4)
      packedGroup<4, 1>(a, sums, r, w, y, g);
    if (rows - r >= 2) {
      packedGroup<2, 2>(a, sums, r, w, y, g);
      r += 2;
    }
    if (rows - r == 1)
      packedGroup<1, 2>(a, sums, r, w, y, g);
  }
}
#endif

} // namespace

bool blockQuantSupported(const BlockQuantWeight &w) {
  return (w.bits == 4 || w.bits == 8) && w.blockSize >= 16 &&
         (w.blockSize & (w.blockSize - 1)) == 0 && w.n > 0 && w.k > 0 &&
         w.codes && w.scales;
}

void matmulBlockQuantPortable(const float *a, int64_t rows,
                              const BlockQuantWeight &w, float *y) {
  portableColumns(a, rows, w, y, 0, w.n);
}

void matmulBlockQuant(const float *a, int64_t rows, const BlockQuantWeight &w,
                      float *y, int numThreads) {
  // Unbound weights (constant folding) are repacked for each call: the
  // column-group kernel is the one fast kernel.
  if (packedBlockQuantSupported(w)) {
    matmulBlockQuantPacked(a, rows, packBlockQuant(w), y, numThreads);
    return;
  }
  const int64_t bytesPerColumn = w.blocks() * (w.blockSize * w.bits / 8 + 4);
  parallelFor(numThreads, w.n, bytesPerColumn, [&](int64_t n0, int64_t n1) {
    portableColumns(a, rows, w, y, n0, n1);
  });
}

const char *blockQuantKernelName() {
#ifdef TPC_QUANT_X86
  if (cpuHasAvx512())
    return "avx512 column groups";
  if (cpuHasAvx2())
    return "avx2 column groups";
#endif
  return "portable";
}

bool packedBlockQuantSupported(const BlockQuantWeight &w) {
#ifdef TPC_QUANT_X86
  return blockQuantSupported(w) && (cpuHasAvx512() || cpuHasAvx2());
#else
  (void)w;
  return false;
#endif
}

PackedBlockQuant packBlockQuant(const BlockQuantWeight &w) {
  PackedBlockQuant p;
  p.n = w.n;
  p.k = w.k;
  p.blockSize = w.blockSize;
  p.blocks = w.blocks();
  p.groups = (w.n + 31) / 32;
  p.bits = w.bits;
  const int64_t unit = 32 * w.bits / 8, blob = w.blockSize * w.bits / 8;
  p.codes.assign(size_t(p.groups * p.blocks * w.blockSize * unit), 0);
  p.scales.assign(size_t(p.groups * p.blocks * 32), 0.0f);
  p.zeroScales.assign(p.scales.size(), 0.0f);
  for (int64_t n = 0; n < w.n; ++n) {
    const int64_t g = n / 32, j = n % 32;
    for (int64_t b = 0; b < p.blocks; ++b) {
      const uint8_t *src = w.codes + (n * p.blocks + b) * blob;
      uint8_t *dst = p.codes.data() + (g * p.blocks + b) * w.blockSize * unit;
      for (int64_t i = 0; i < w.blockSize; ++i) {
        const int code = codeAt(src, i, w.bits);
        if (w.bits == 8)
          dst[i * unit + j] = uint8_t(code);
        else
          dst[i * unit + j % 16] |= uint8_t(j < 16 ? code : code << 4);
      }
      const float scale = w.scales[n * p.blocks + b];
      p.scales[size_t((g * p.blocks + b) * 32 + j)] = scale;
      p.zeroScales[size_t((g * p.blocks + b) * 32 + j)] =
          zeroOf(w, n, b) * scale;
    }
  }
  return p;
}

void matmulBlockQuantPacked(const float *a, int64_t rows,
                            const PackedBlockQuant &w, float *y,
                            int numThreads, bool useAvx512) {
#ifdef TPC_QUANT_X86
  std::vector<float> sums(size_t(rows * w.blocks), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < w.k; ++i)
      sums[size_t(r * w.blocks + i / w.blockSize)] += a[r * w.k + i];
  const int64_t bytesPerGroup = w.blocks * w.blockSize * 32 * w.bits / 8;
  const bool avx512 = useAvx512 && cpuHasAvx512();
  parallelFor(numThreads, w.groups, bytesPerGroup,
              [&](int64_t g0, int64_t g1) {
                if (avx512)
                  packedGroups(a, sums.data(), rows, w, y, g0, g1);
                else
                  packedGroupsAvx2(a, sums.data(), rows, w, y, g0, g1);
              });
#else
  (void)a;
  (void)rows;
  (void)w;
  (void)y;
  (void)numThreads;
  (void)useAvx512;
#endif
}

} // namespace tpc::cpu
