//===- Convert.h - Scalar conversions between element types -----*- C++ -*-===//
//
// IEEE half and bfloat16 conversions (round to nearest even, NaN kept NaN)
// and saturating float-to-integer conversion. Shared by Cast,
// ConstantOfShape and the tests.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_CONVERT_H
#define TPC_KERNELS_CPU_CONVERT_H

#include "kernels/cpu/Support.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace tpc::cpu {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float floatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// Shifts `m` right by `s` (1..31) rounding to nearest, ties to even.
inline uint32_t shiftRightRne(uint32_t m, int s) {
  uint32_t q = m >> s;
  uint32_t rem = m & ((1u << s) - 1);
  uint32_t half = 1u << (s - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  return q;
}

/// float -> IEEE binary16, round to nearest even; overflow gives infinity.
inline Half floatToHalf(float f) {
  uint32_t x = floatBits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t a = x & 0x7FFFFFFF;
  if (a >= 0x7F800000) {
    // Infinity stays infinity; NaN keeps its top payload bits and is quieted.
    uint16_t nan =
        a > 0x7F800000 ? static_cast<uint16_t>(0x200 | ((a >> 13) & 0x3FF)) : 0;
    return {static_cast<uint16_t>(sign | 0x7C00 | nan)};
  }
  // 65520 is halfway between the largest half (65504) and 2^16; ties go to
  // the even neighbour, which is infinity.
  if (a >= 0x477FF000)
    return {static_cast<uint16_t>(sign | 0x7C00)};
  if (a < 0x38800000) {
    // Below the smallest normal half (2^-14): a multiple of 2^-24.
    int e = static_cast<int>(a >> 23);
    int shift = 126 - e;
    if (shift > 24)
      return {sign};
    uint32_t m = (a & 0x7FFFFF) | 0x800000;
    return {static_cast<uint16_t>(sign | shiftRightRne(m, shift))};
  }
  // Rebias the exponent (127 -> 15) and round away the low 13 bits; a carry
  // out of the mantissa correctly bumps the exponent.
  uint32_t r = a - 0x38000000;
  return {static_cast<uint16_t>(sign | shiftRightRne(r, 13))};
}

inline float halfToFloat(Half h) {
  uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000) << 16;
  uint32_t e = (h.bits >> 10) & 0x1F;
  uint32_t m = h.bits & 0x3FF;
  if (e == 0x1F)
    return floatFromBits(sign | 0x7F800000 | (m << 13));
  if (e == 0) {
    // Zero or subnormal: m * 2^-24 is exact in float.
    float v = static_cast<float>(m) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return floatFromBits(sign | ((e + 112) << 23) | (m << 13));
}

/// float -> bfloat16, round to nearest even; NaN stays a quiet NaN.
inline BFloat16 floatToBFloat16(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7FFFFFFF) > 0x7F800000)
    return {static_cast<uint16_t>((x >> 16) | 0x40)};
  x += 0x7FFF + ((x >> 16) & 1);
  return {static_cast<uint16_t>(x >> 16)};
}

inline float bfloat16ToFloat(BFloat16 b) {
  return floatFromBits(static_cast<uint32_t>(b.bits) << 16);
}

/// Kernels that store f16/bf16 compute in float: widen() is exact and
/// narrowTo<S>() rounds once, to nearest even.
inline float widen(Half h) { return halfToFloat(h); }
inline float widen(BFloat16 b) { return bfloat16ToFloat(b); }
template <class S> S narrowTo(float f);
template <> inline Half narrowTo<Half>(float f) { return floatToHalf(f); }
template <> inline BFloat16 narrowTo<BFloat16>(float f) {
  return floatToBFloat16(f);
}

/// Calls `f(TypeTag<Half>{})` or `f(TypeTag<BFloat16>{})` for F16 / BF16;
/// returns false for other dtypes.
template <class F> bool visitFloat16(DType t, F &&f) {
  switch (t) {
  case DType::F16:
    f(TypeTag<Half>{});
    return true;
  case DType::BF16:
    f(TypeTag<BFloat16>{});
    return true;
  default:
    return false;
  }
}

/// double -> float rounding to odd: truncate, then set the last bit when the
/// result is inexact. Rounding that float once more to a format with at
/// least two fewer mantissa bits (half, bfloat16) gives the correctly
/// rounded result, which double -> float -> half with two nearest-even
/// roundings does not.
inline float doubleToFloatRoundOdd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(f) || std::isinf(f) || static_cast<double>(f) == d)
    return f;
  uint32_t b = floatBits(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(d))
    --b; // step toward zero: magnitude bits shrink by one ulp
  return floatFromBits(b | 1);
}

/// Converts to integer type I by truncation toward zero, saturating at I's
/// range; NaN converts to 0. (ONNX leaves out-of-range casts undefined.)
template <class I> I saturatingToInt(double x) {
  static_assert(std::is_integral_v<I>);
  if (std::isnan(x))
    return 0;
  // Both bounds are exact in double: min is 0 or -2^k and max + 1 is 2^k.
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hiExcl =
      static_cast<double>(std::numeric_limits<I>::max() / 2 + 1) * 2.0;
  double t = std::trunc(x);
  if (t < lo)
    return std::numeric_limits<I>::min();
  if (t >= hiExcl)
    return std::numeric_limits<I>::max();
  return static_cast<I>(t);
}

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_CONVERT_H
