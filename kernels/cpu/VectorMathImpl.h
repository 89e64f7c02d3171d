//===- VectorMathImpl.h - exp, tanh, erf over any SIMD width ----*- C++ -*-===//
//
// The algorithms of VectorMath.h written once over a SIMD traits type S,
// compiled once per instruction set: VectorMathAvx2.cpp (8 lanes) and
// VectorMathAvx512.cpp (16 lanes) each define TPC_VECMATH_LANES and
// include this file, which defines the traits of that width (Simd), and
// return simdTable(). The width is the file's choice, not the compiler
// flags': a build with AVX-512 enabled everywhere still has 8-lane AVX2
// code. VectorMath.cpp picks one at run time. Only those
// files include it, and everything here has internal linkage, so code
// built for one instruction set is never merged with another's.
//
// S provides: V (S::N floats), M (a lane mask), and set1, load, store, add,
// sub, mul, div, fma (a b + c), fnma (c - a b), min, max, abs, signOf
// (x's sign bit), orBits, lt (a < b as M), select (m ? a : b), round (to
// nearest), pow2 (2^n for integral n in the normal range).
//
// exp: Cody-Waite range reduction to r in [-ln2/2, ln2/2] and a degree-6
// polynomial, scaled by 2^n through the exponent bits. tanh: a [13/6]
// rational approximation on [-7.9, 7.9] (outside it tanh rounds to +-1).
// erf: its Taylor series below |x| = 0.5, Abramowitz & Stegun 7.1.26
// (|error| <= 1.5e-7, 4e-7 once rounded to float) above.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_VECTORMATHIMPL_H
#define TPC_KERNELS_CPU_VECTORMATHIMPL_H

#include "kernels/cpu/VectorMath.h"

#include <cstdint>
#include <cstring>
#include <immintrin.h>

/// The members of a traits type that AVX2 and AVX-512 spell alike, for a
/// vector of W bits (_mm256_add_ps, _mm512_add_ps, ...) and lane masks of
/// type Mask.
#define TPC_SIMD_COMMON_OPS(W, Mask)                                           \
  using V = __m##W;                                                            \
  using M = Mask;                                                              \
  static constexpr int N = W / 32;                                             \
  static V set1(float a) { return _mm##W##_set1_ps(a); }                       \
  static V load(const float *p) { return _mm##W##_loadu_ps(p); }               \
  static void store(float *p, V a) { _mm##W##_storeu_ps(p, a); }               \
  static V add(V a, V b) { return _mm##W##_add_ps(a, b); }                     \
  static V sub(V a, V b) { return _mm##W##_sub_ps(a, b); }                     \
  static V mul(V a, V b) { return _mm##W##_mul_ps(a, b); }                     \
  static V div(V a, V b) { return _mm##W##_div_ps(a, b); }                     \
  static V fma(V a, V b, V c) { return _mm##W##_fmadd_ps(a, b, c); }           \
  static V fnma(V a, V b, V c) { return _mm##W##_fnmadd_ps(a, b, c); }         \
  static V min(V a, V b) { return _mm##W##_min_ps(a, b); }                     \
  static V max(V a, V b) { return _mm##W##_max_ps(a, b); }                     \
  static V abs(V a) { return _mm##W##_andnot_ps(_mm##W##_set1_ps(-0.0f), a); } \
  static V signOf(V a) { return _mm##W##_and_ps(a, _mm##W##_set1_ps(-0.0f)); } \
  static V orBits(V a, V b) { return _mm##W##_or_ps(a, b); }                   \
  static V pow2(V n) {                                                         \
    return _mm##W##_castsi##W##_ps(_mm##W##_slli_epi32(                        \
        _mm##W##_add_epi32(_mm##W##_cvtps_epi32(n), _mm##W##_set1_epi32(127)), \
        23));                                                                  \
  }

namespace {

/// The rounding of S::round: to nearest, raising no exception.
constexpr int kRoundNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

/// The traits of the instruction set this file is compiled for: AVX-512 F +
/// DQ (masks in k registers) or AVX2 + FMA (masks as vectors).
struct Simd {
#if TPC_VECMATH_LANES == 16
#if !defined(__AVX512F__) || !defined(__AVX512DQ__)
#error "16 lanes need AVX-512 F and DQ"
#endif
  TPC_SIMD_COMMON_OPS(512, __mmask16)
  static M lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static V select(M m, V a, V b) { return _mm512_mask_blend_ps(m, b, a); }
  static V round(V a) { return _mm512_roundscale_ps(a, kRoundNearest); }
#elif TPC_VECMATH_LANES == 8
#if !defined(__AVX2__) || !defined(__FMA__)
#error "8 lanes need AVX2 and FMA"
#endif
  TPC_SIMD_COMMON_OPS(256, __m256)
  static M lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static V select(M m, V a, V b) { return _mm256_blendv_ps(b, a, m); }
  static V round(V a) { return _mm256_round_ps(a, kRoundNearest); }
#else
#error "define TPC_VECMATH_LANES (8 or 16) before including this file"
#endif
};
static_assert(Simd::N == TPC_VECMATH_LANES, "the traits of another width");

template <class S> inline typename S::V expV(typename S::V x) {
  using V = typename S::V;
  // Below -87.3 the result is under the smallest normal float: flush to 0.
  const typename S::M tiny = S::lt(x, S::set1(-87.33654f));
  x = S::min(x, S::set1(88.3762626647949f));
  x = S::max(x, S::set1(-87.33654f));
  const V n = S::round(S::mul(x, S::set1(1.44269504088896341f)));
  V r = S::fnma(n, S::set1(0.693359375f), x);
  r = S::fnma(n, S::set1(-2.12194440e-4f), r);
  V p = S::set1(1.9875691500e-4f);
  p = S::fma(p, r, S::set1(1.3981999507e-3f));
  p = S::fma(p, r, S::set1(8.3334519073e-3f));
  p = S::fma(p, r, S::set1(4.1665795894e-2f));
  p = S::fma(p, r, S::set1(1.6666665459e-1f));
  p = S::fma(p, r, S::set1(5.0000001201e-1f));
  p = S::fma(p, S::mul(r, r), r);
  p = S::add(p, S::set1(1.0f));
  return S::select(tiny, S::set1(0.0f), S::mul(p, S::pow2(n)));
}

template <class S> inline typename S::V tanhV(typename S::V x) {
  using V = typename S::V;
  const V bound = S::set1(7.90531110763549805f);
  const typename S::M small = S::lt(S::abs(x), S::set1(4e-4f));
  const V xc = S::max(S::min(x, bound), S::sub(S::set1(0.0f), bound));
  const V x2 = S::mul(xc, xc);
  V p = S::set1(-2.76076847742355e-16f);
  p = S::fma(p, x2, S::set1(2.00018790482477e-13f));
  p = S::fma(p, x2, S::set1(-8.60467152213735e-11f));
  p = S::fma(p, x2, S::set1(5.12229709037114e-08f));
  p = S::fma(p, x2, S::set1(1.48572235717979e-05f));
  p = S::fma(p, x2, S::set1(6.37261928875436e-04f));
  p = S::fma(p, x2, S::set1(4.89352455891786e-03f));
  p = S::mul(p, xc);
  V q = S::set1(1.19825839466702e-06f);
  q = S::fma(q, x2, S::set1(1.18534705686654e-04f));
  q = S::fma(q, x2, S::set1(2.26843463243900e-03f));
  q = S::fma(q, x2, S::set1(4.89352518554385e-03f));
  return S::select(small, x, S::div(p, q));
}

template <class S> inline typename S::V erfV(typename S::V x) {
  using V = typename S::V;
  const V ax = S::abs(x);
  const V one = S::set1(1.0f);
  const V t = S::div(one, S::fma(S::set1(0.3275911f), ax, one));
  V p = S::set1(1.061405429f);
  p = S::fma(p, t, S::set1(-1.453152027f));
  p = S::fma(p, t, S::set1(1.421413741f));
  p = S::fma(p, t, S::set1(-0.284496736f));
  p = S::fma(p, t, S::set1(0.254829592f));
  p = S::mul(p, t);
  const V e = expV<S>(S::sub(S::set1(0.0f), S::mul(ax, ax)));
  const V y = S::orBits(S::fnma(p, e, one), S::signOf(x));
  // Near 0, 1 - p e cancels: there the Taylor series to x^13 is exact to
  // float precision (its next term is below 3e-8 relative at |x| = 0.5).
  const V x2 = S::mul(x, x);
  V s = S::set1(-1.0f / 75600.0f);
  s = S::fma(s, x2, S::set1(1.0f / 9360.0f));
  s = S::fma(s, x2, S::set1(-1.0f / 1320.0f));
  s = S::fma(s, x2, S::set1(1.0f / 216.0f));
  s = S::fma(s, x2, S::set1(-1.0f / 42.0f));
  s = S::fma(s, x2, S::set1(1.0f / 10.0f));
  s = S::fma(s, x2, S::set1(-1.0f / 3.0f));
  s = S::fma(s, x2, one);
  s = S::mul(S::mul(s, x), S::set1(1.12837916709551257f));
  return S::select(S::lt(ax, S::set1(0.5f)), s, y);
}

template <class S> inline typename S::V sigmoidV(typename S::V x) {
  using V = typename S::V;
  const V one = S::set1(1.0f);
  const V e = expV<S>(S::sub(S::set1(0.0f), S::abs(x)));
  const V inv = S::div(one, S::add(one, e));
  return S::select(S::lt(x, S::set1(0.0f)), S::mul(e, inv), inv);
}

template <class S> inline typename S::V geluV(typename S::V x) {
  const typename S::V half = S::mul(S::set1(0.5f), x);
  return S::fma(half, erfV<S>(S::mul(x, S::set1(0.70710678118654752f))),
                half);
}

/// 0.5 (1 + tanh(z)) = sigmoid(2 z): as x * sigmoid(2 z) the result keeps
/// its relative precision on the negative side too.
template <class S> inline typename S::V geluTanhV(typename S::V x) {
  const typename S::V x3 = S::mul(S::mul(x, x), x);
  const typename S::V twoInner =
      S::mul(S::set1(2 * 0.79788456080286536f),
             S::fma(S::set1(0.044715f), x3, x));
  return S::mul(x, sigmoidV<S>(twoInner));
}

/// y = f(x) over n floats, S::N at a time, the tail through a padded block.
template <class S, typename S::V (*F)(typename S::V)>
inline void mapV(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + S::N <= n; i += S::N)
    S::store(y + i, F(S::load(x + i)));
  if (i < n) {
    float t[S::N] = {};
    std::memcpy(t, x + i, size_t(n - i) * sizeof(float));
    S::store(t, F(S::load(t)));
    std::memcpy(y + i, t, size_t(n - i) * sizeof(float));
  }
}

/// y = exp(x - shift), returning the sum of y. The tail's padded lanes
/// hold -inf, whose exp adds 0.
template <class S>
inline float expShiftSumV(const float *x, float *y, int64_t n, float shift) {
  using V = typename S::V;
  const V s = S::set1(shift);
  V acc = S::set1(0.0f);
  int64_t i = 0;
  for (; i + S::N <= n; i += S::N) {
    const V e = expV<S>(S::sub(S::load(x + i), s));
    S::store(y + i, e);
    acc = S::add(acc, e);
  }
  if (i < n) {
    float t[S::N];
    for (int k = 0; k < S::N; ++k)
      t[k] = -__builtin_inff();
    std::memcpy(t, x + i, size_t(n - i) * sizeof(float));
    const V e = expV<S>(S::sub(S::load(t), s));
    S::store(t, e);
    std::memcpy(y + i, t, size_t(n - i) * sizeof(float));
    acc = S::add(acc, e);
  }
  float lanes[S::N];
  S::store(lanes, acc);
  // Pairwise, so the rounding does not grow with the lane count.
  for (int width = S::N / 2; width > 0; width /= 2)
    for (int k = 0; k < width; ++k)
      lanes[k] = lanes[k] + lanes[k + width];
  return lanes[0];
}

/// The functions for traits S, as VectorMath.cpp calls them.
template <class S> constexpr tpc::cpu::detail::VectorMathTable makeTable() {
  return {mapV<S, expV<S>>,     mapV<S, tanhV<S>>, mapV<S, erfV<S>>,
          mapV<S, sigmoidV<S>>, mapV<S, geluV<S>>, mapV<S, geluTanhV<S>>,
          expShiftSumV<S>};
}

/// The table of the instruction set this file is compiled for.
inline const tpc::cpu::detail::VectorMathTable &simdTable() {
  static constexpr tpc::cpu::detail::VectorMathTable table = makeTable<Simd>();
  return table;
}

} // namespace

#endif // TPC_KERNELS_CPU_VECTORMATHIMPL_H
