//===- Half.h - IEEE half and bfloat16 conversions --------------*- C++ -*-===//
//
// Bit-exact conversions between float and the two 16-bit floating-point
// formats that tensors are stored in. Values travel as uint16_t bit patterns
// because C++17 has no portable 16-bit float type. Narrowing rounds to nearest
// even and keeps NaNs NaN, so a value that is exactly representable survives a
// float round trip unchanged (reductions rely on that for reproducibility).
//
// These functions depend on the default floating-point environment
// (round-to-nearest, no flush-to-zero); do not build with -ffast-math.
// The one implementation: the CPU kernels' typed Half / BFloat16
// conversions (kernels/cpu/Convert.h), the runtime's I/O and collectives
// and the compiler's weight conversion all call these.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_HALF_H
#define TPC_KERNELS_HALF_H

#include <cstdint>
#include <cstring>

namespace tpc {

/// Widens an IEEE binary16 bit pattern to float (exact).
inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    // Zero or subnormal: mant * 2^-24 is exact in float.
    float f = float(mant) * 0x1p-24f;
    std::memcpy(&bits, &f, sizeof(bits));
    bits |= sign;
  } else {
    // Rebias the exponent from 15 to 127.
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

/// Narrows float to IEEE binary16, rounding to nearest even.
inline uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {
    // Infinity stays infinity; a NaN keeps its top payload bits and is forced
    // quiet so that truncating the payload cannot turn it into infinity.
    if (absx == 0x7f800000u)
      return uint16_t(sign | 0x7c00);
    return uint16_t(sign | 0x7e00 | ((absx >> 13) & 0x3ff));
  }
  // 65520 and above round to infinity (65504 is the largest finite half).
  if (absx >= 0x477ff000u)
    return uint16_t(sign | 0x7c00);
  if (absx < 0x38800000u) {
    // Below 2^-14 the result is subnormal, in units of 2^-24. Adding 0.5
    // (whose ulp is 2^-24) lets the FPU do the round-to-nearest-even.
    float a;
    std::memcpy(&a, &absx, sizeof(a));
    a += 0.5f;
    uint32_t ab;
    std::memcpy(&ab, &a, sizeof(ab));
    return uint16_t(sign | (ab - 0x3f000000u));
  }
  // Normal: rebias the exponent (subtract 112 << 23) and round the 13
  // dropped mantissa bits to nearest even. A carry out of the mantissa
  // correctly bumps the exponent.
  uint32_t odd = (absx >> 13) & 1;
  absx += 0xc8000fffu + odd;
  return uint16_t(sign | (absx >> 13));
}

/// Widens a bfloat16 bit pattern to float (exact).
inline float bf16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

/// Narrows float to bfloat16, rounding to nearest even.
inline uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((x >> 16) | 0x40); // Quiet NaN, sign kept.
  x += 0x7fffu + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

/// Narrows float to IEEE binary16 like floatToHalf, except that finite values
/// beyond the largest half (65504) saturate to it instead of becoming
/// infinity. For values written once at compile time (weights, constants):
/// a mask constant such as -FLT_MAX must stay finite, or 0 * mask is NaN.
inline uint16_t floatToHalfSaturating(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x477ff000u && absx < 0x7f800000u)
    return uint16_t(((x >> 16) & 0x8000) | 0x7bff);
  return floatToHalf(f);
}

/// Narrows float to bfloat16 like floatToBf16, except that finite values that
/// would round to infinity (|f| above the largest bfloat16, 0x1.fep127)
/// saturate to the largest finite bfloat16.
inline uint16_t floatToBf16Saturating(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f7f8000u && absx < 0x7f800000u)
    return uint16_t(((x >> 16) & 0x8000) | 0x7f7f);
  return floatToBf16(f);
}

} // namespace tpc

#endif // TPC_KERNELS_HALF_H
