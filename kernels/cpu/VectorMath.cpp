//===- VectorMath.cpp - AVX2 exp, tanh, erf and the activations built on them ===//
//
// exp: Cody-Waite range reduction to r in [-ln2/2, ln2/2] and a degree-6
// polynomial, scaled by 2^n through the exponent bits. tanh: a [13/6]
// rational approximation on [-7.9, 7.9] (outside it tanh rounds to +-1).
// erf: its Taylor series below |x| = 0.5, Abramowitz & Stegun 7.1.26
// (|error| <= 1.5e-7, 4e-7 once rounded to float) above.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/VectorMath.h"

#include <cmath>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TPC_HAVE_X86 1
#define TPC_AVX2 __attribute__((target("avx2,fma")))
#endif

namespace tpc::cpu {
namespace {

float scalarSigmoid(float x) {
  float e = std::exp(-std::fabs(x));
  return x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
float scalarGelu(float x) {
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
}
float scalarGeluTanh(float x) {
  float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  return x * scalarSigmoid(2.0f * inner);
}

#ifdef TPC_HAVE_X86
bool haveAvx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return yes;
}

TPC_AVX2 inline __m256 exp8(__m256 x) {
  // Below -87.3 the result is under the smallest normal float: flush to 0.
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-87.33654f), _CMP_LT_OQ);
  x = _mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f));
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.33654f));
  const __m256 n = _mm256_round_ps(
      _mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
  p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  return _mm256_andnot_ps(tiny, y);
}

TPC_AVX2 inline __m256 tanh8(__m256 x) {
  const __m256 bound = _mm256_set1_ps(7.90531110763549805f);
  const __m256 small = _mm256_cmp_ps(
      _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(4e-4f),
      _CMP_LT_OQ);
  const __m256 xc = _mm256_max_ps(_mm256_min_ps(x, bound),
                                  _mm256_sub_ps(_mm256_setzero_ps(), bound));
  const __m256 x2 = _mm256_mul_ps(xc, xc);
  __m256 p = _mm256_set1_ps(-2.76076847742355e-16f);
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(2.00018790482477e-13f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-8.60467152213735e-11f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(5.12229709037114e-08f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(1.48572235717979e-05f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(6.37261928875436e-04f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(4.89352455891786e-03f));
  p = _mm256_mul_ps(p, xc);
  __m256 q = _mm256_set1_ps(1.19825839466702e-06f);
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(1.18534705686654e-04f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(2.26843463243900e-03f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(4.89352518554385e-03f));
  return _mm256_blendv_ps(_mm256_div_ps(p, q), x, small);
}

TPC_AVX2 inline __m256 erf8(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
  const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 t = _mm256_div_ps(
      one, _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), ax, one));
  __m256 p = _mm256_set1_ps(1.061405429f);
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
  p = _mm256_mul_ps(p, t);
  const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(),
                                      _mm256_mul_ps(ax, ax)));
  const __m256 y = _mm256_or_ps(_mm256_fnmadd_ps(p, e, one), sign);
  // Near 0, 1 - p e cancels: there the Taylor series to x^13 is exact to
  // float precision (its next term is below 3e-8 relative at |x| = 0.5).
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 s = _mm256_set1_ps(-1.0f / 75600.0f);
  s = _mm256_fmadd_ps(s, x2, _mm256_set1_ps(1.0f / 9360.0f));
  s = _mm256_fmadd_ps(s, x2, _mm256_set1_ps(-1.0f / 1320.0f));
  s = _mm256_fmadd_ps(s, x2, _mm256_set1_ps(1.0f / 216.0f));
  s = _mm256_fmadd_ps(s, x2, _mm256_set1_ps(-1.0f / 42.0f));
  s = _mm256_fmadd_ps(s, x2, _mm256_set1_ps(1.0f / 10.0f));
  s = _mm256_fmadd_ps(s, x2, _mm256_set1_ps(-1.0f / 3.0f));
  s = _mm256_fmadd_ps(s, x2, one);
  s = _mm256_mul_ps(_mm256_mul_ps(s, x),
                    _mm256_set1_ps(1.12837916709551257f));
  const __m256 near0 = _mm256_cmp_ps(ax, _mm256_set1_ps(0.5f), _CMP_LT_OQ);
  return _mm256_blendv_ps(y, s, near0);
}

TPC_AVX2 inline __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = exp8(_mm256_sub_ps(
      _mm256_setzero_ps(), _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x)));
  const __m256 inv = _mm256_div_ps(one, _mm256_add_ps(one, e));
  const __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  return _mm256_blendv_ps(inv, _mm256_mul_ps(e, inv), neg);
}

TPC_AVX2 inline __m256 gelu8(__m256 x) {
  const __m256 half = _mm256_mul_ps(_mm256_set1_ps(0.5f), x);
  const __m256 e =
      erf8(_mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752f)));
  return _mm256_fmadd_ps(half, e, half);
}

/// 0.5 (1 + tanh(z)) = sigmoid(2 z): as x * sigmoid(2 z) the result keeps
/// its relative precision on the negative side too.
TPC_AVX2 inline __m256 geluTanh8(__m256 x) {
  const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  const __m256 twoInner =
      _mm256_mul_ps(_mm256_set1_ps(2 * 0.79788456080286536f),
                    _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), x3, x));
  return _mm256_mul_ps(x, sigmoid8(twoInner));
}

/// f over n floats, eight at a time, the tail through a padded block.
template <class F> TPC_AVX2 void map8(const float *x, float *y, int64_t n,
                                      F f) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) {
    alignas(32) float t[8] = {};
    std::memcpy(t, x + i, size_t(n - i) * sizeof(float));
    _mm256_store_ps(t, f(_mm256_load_ps(t)));
    std::memcpy(y + i, t, size_t(n - i) * sizeof(float));
  }
}

TPC_AVX2 void expAvx2(const float *x, float *y, int64_t n) {
  map8(x, y, n, [](__m256 v) TPC_AVX2 { return exp8(v); });
}
TPC_AVX2 void tanhAvx2(const float *x, float *y, int64_t n) {
  map8(x, y, n, [](__m256 v) TPC_AVX2 { return tanh8(v); });
}
TPC_AVX2 void erfAvx2(const float *x, float *y, int64_t n) {
  map8(x, y, n, [](__m256 v) TPC_AVX2 { return erf8(v); });
}
TPC_AVX2 void sigmoidAvx2(const float *x, float *y, int64_t n) {
  map8(x, y, n, [](__m256 v) TPC_AVX2 { return sigmoid8(v); });
}
TPC_AVX2 void geluAvx2(const float *x, float *y, int64_t n) {
  map8(x, y, n, [](__m256 v) TPC_AVX2 { return gelu8(v); });
}
TPC_AVX2 void geluTanhAvx2(const float *x, float *y, int64_t n) {
  map8(x, y, n, [](__m256 v) TPC_AVX2 { return geluTanh8(v); });
}

TPC_AVX2 float expShiftSumAvx2(const float *x, float *y, int64_t n,
                               float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(y + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  alignas(32) float t[8];
  _mm256_store_ps(t, acc);
  float sum = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
  for (; i < n; ++i) {
    y[i] = std::exp(x[i] - shift);
    sum += y[i];
  }
  return sum;
}
#endif

template <class F> void mapScalar(const float *x, float *y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = f(x[i]);
}

} // namespace

#ifdef TPC_HAVE_X86
#define TPC_DISPATCH(avx2, ...)                                                \
  if (haveAvx2())                                                              \
    return avx2(x, y, n);                                                      \
  return mapScalar(x, y, n, __VA_ARGS__)
#else
#define TPC_DISPATCH(avx2, ...) return mapScalar(x, y, n, __VA_ARGS__)
#endif

void vecExp(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(expAvx2, [](float v) { return std::exp(v); });
}
void vecTanh(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(tanhAvx2, [](float v) { return std::tanh(v); });
}
void vecErf(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(erfAvx2, [](float v) { return std::erf(v); });
}
void vecSigmoid(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(sigmoidAvx2, scalarSigmoid);
}
void vecGelu(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(geluAvx2, scalarGelu);
}
void vecGeluTanh(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(geluTanhAvx2, scalarGeluTanh);
}

float vecExpShiftSum(const float *x, float *y, int64_t n, float shift) {
#ifdef TPC_HAVE_X86
  if (haveAvx2())
    return expShiftSumAvx2(x, y, n, shift);
#endif
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - shift);
    sum += y[i];
  }
  return sum;
}

} // namespace tpc::cpu
