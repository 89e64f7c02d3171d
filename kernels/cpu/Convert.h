//===- Convert.h - Scalar conversions between element types -----*- C++ -*-===//
//
// IEEE half and bfloat16 conversions on the kernels' Half / BFloat16 types
// (kernels/Half.h's, typed) and saturating float-to-integer conversion. Shared by Cast,
// ConstantOfShape and the tests.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_CONVERT_H
#define TPC_KERNELS_CPU_CONVERT_H

#include "kernels/Half.h"
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

/// The typed forms of kernels/Half.h's conversions: round to nearest even,
/// NaN kept a quiet NaN, overflow to infinity; widening is exact.
inline Half floatToHalf(float f) { return {::tpc::floatToHalf(f)}; }
inline float halfToFloat(Half h) { return ::tpc::halfToFloat(h.bits); }
inline BFloat16 floatToBFloat16(float f) { return {::tpc::floatToBf16(f)}; }
inline float bfloat16ToFloat(BFloat16 b) { return ::tpc::bf16ToFloat(b.bits); }

/// Kernels that store f16/bf16 compute in float: widen() is exact and
/// narrowTo<S>() rounds once, to nearest even.
inline float widen(Half h) { return halfToFloat(h); }
inline float widen(BFloat16 b) { return bfloat16ToFloat(b); }
template <class S> S narrowTo(float f);
template <> inline Half narrowTo<Half>(float f) { return floatToHalf(f); }
template <> inline BFloat16 narrowTo<BFloat16>(float f) {
  return floatToBFloat16(f);
}

/// visitTypes over the 16-bit floats, F16 and BF16.
template <class F> bool visitFloat16(DType t, F &&f) {
  return visitTypes<Half, BFloat16>(t, f);
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
