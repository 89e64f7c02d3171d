//===- StorageTypes.h - float8 and 4-/2-bit integer conversions -*- C++ -*-===//
//
// Scalar conversions between float and the storage types of Types.h (ONNX's
// FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, UINT4, INT4,
// UINT2, INT2), each held in one byte. Header-only and usable from host and
// device code, so the CPU and CUDA Cast kernels share one definition.
//
// float8 (ONNX Cast, opset 19 and later):
//   * float to float8 rounds to nearest, ties to even. With saturate (the
//     default) a magnitude beyond the largest finite value, infinity
//     included, becomes that value; without it, it becomes infinity (E5M2)
//     or NaN (the others, which have no infinity). NaN stays NaN.
//   * The FNUZ formats have no negative zero: -0 and tiny negatives that
//     round to zero give +0.
// 4- and 2-bit integers (the element in the low bits of its byte):
//   * from float: truncated toward zero; NaN and values outside the type's
//     range give 0, as ONNX's reference implementation (ml_dtypes) does.
//   * from an integer: the low bits (two's complement wrap).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_STORAGETYPES_H
#define TPC_KERNELS_STORAGETYPES_H

#include "kernels/Types.h"

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define TPC_STORAGE_FN __host__ __device__
#else
#define TPC_STORAGE_FN
#endif

namespace tpc {
namespace storage {

TPC_STORAGE_FN inline uint32_t bitsOf(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

TPC_STORAGE_FN inline float floatOf(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

/// The layout of one float8 format.
struct Float8Format {
  int mantissaBits;
  int bias;
  uint8_t maxFinite; // magnitude code of the largest finite value
  bool fnuz;         // NaN is 0x80; no infinity, no negative zero
  bool ieee;         // the all-ones exponent holds infinity and NaN
};

TPC_STORAGE_FN inline Float8Format float8Format(DType t) {
  switch (t) {
  case DType::F8E4M3FNUZ:
    return {3, 8, 0x7F, true, false}; // max 240
  case DType::F8E5M2:
    return {2, 15, 0x7B, false, true}; // max 57344, inf 0x7C
  case DType::F8E5M2FNUZ:
    return {2, 16, 0x7F, true, false}; // max 57344
  default:
    return {3, 7, 0x7E, false, false}; // E4M3FN: max 448, NaN 0x7F
  }
}

TPC_STORAGE_FN inline bool isFloat8(DType t) {
  return t == DType::F8E4M3FN || t == DType::F8E4M3FNUZ ||
         t == DType::F8E5M2 || t == DType::F8E5M2FNUZ;
}

TPC_STORAGE_FN inline uint8_t float8NaN(const Float8Format &f, uint8_t sign) {
  if (f.fnuz)
    return 0x80;
  return static_cast<uint8_t>(sign | (f.ieee ? 0x7E : 0x7F));
}

/// float -> float8 of format `t`.
TPC_STORAGE_FN inline uint8_t floatToFloat8(float x, DType t, bool saturate) {
  const Float8Format f = float8Format(t);
  uint32_t u = bitsOf(x);
  uint8_t sign = (u >> 31) ? 0x80 : 0;
  uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u)
    return float8NaN(f, sign);
  uint32_t code;
  if (a == 0x7F800000u) {
    code = 0xFFFFFFFFu; // beyond every finite value
  } else if (a < 0x00800000u) {
    code = 0; // float subnormals are far below half the smallest float8
  } else {
    // value = mant * 2^(e - 23). The float8 quantum at this magnitude is
    // 2^(max(e, emin) - M); q counts quanta, rounded to nearest even.
    int e = int(a >> 23) - 127;
    int emin = 1 - f.bias;
    int eq = e > emin ? e : emin;
    uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
    int shift = eq - e + 23 - f.mantissaBits;
    uint32_t q;
    if (shift >= 32) {
      q = 0;
    } else {
      q = mant >> shift;
      uint32_t rem = mant & ((1u << shift) - 1);
      uint32_t half = 1u << (shift - 1);
      if (rem > half || (rem == half && (q & 1)))
        ++q;
    }
    // For a subnormal (eq == emin) the code is q itself, and q == 2^M is
    // the smallest normal; for a normal it is the biased exponent above the
    // implicit one plus q, so a carry out of the mantissa bumps the
    // exponent. Both are ((eq + bias - 1) << M) + q.
    code = (uint32_t(eq + f.bias - 1) << f.mantissaBits) + q;
  }
  if (code > f.maxFinite) {
    if (saturate)
      return static_cast<uint8_t>(sign | f.maxFinite);
    if (f.ieee)
      return static_cast<uint8_t>(sign | 0x7C);
    return float8NaN(f, sign);
  }
  if (code == 0 && f.fnuz)
    return 0;
  return static_cast<uint8_t>(sign | code);
}

/// float8 of format `t` -> float (exact).
TPC_STORAGE_FN inline float float8ToFloat(uint8_t c, DType t) {
  const Float8Format f = float8Format(t);
  uint32_t sign = uint32_t(c & 0x80) << 24;
  uint32_t mag = c & 0x7Fu;
  uint32_t field = mag >> f.mantissaBits;
  uint32_t mant = mag & ((1u << f.mantissaBits) - 1);
  if (f.fnuz ? c == 0x80 : (!f.ieee && mag == 0x7F))
    return floatOf(0x7FC00000u);
  if (f.ieee && field == (0x7Fu >> f.mantissaBits))
    return floatOf(mant ? 0x7FC00000u : (sign | 0x7F800000u));
  if (field == 0) {
    // mant * 2^(1 - bias - M): a float normal for every format here.
    float v = float(mant) * floatOf(uint32_t(127 + 1 - f.bias - f.mantissaBits)
                                    << 23);
    return floatOf(bitsOf(v) | sign);
  }
  uint32_t exp = field - f.bias + 127;
  return floatOf(sign | (exp << 23) | (mant << (23 - f.mantissaBits)));
}

/// Width, signedness and range of a 4- or 2-bit integer type.
TPC_STORAGE_FN inline int subByteBits(DType t) {
  return t == DType::U4 || t == DType::I4 ? 4 : 2;
}
TPC_STORAGE_FN inline bool isSubByteInt(DType t) {
  return t == DType::U4 || t == DType::I4 || t == DType::U2 || t == DType::I2;
}
TPC_STORAGE_FN inline bool subByteSigned(DType t) {
  return t == DType::I4 || t == DType::I2;
}

/// The value held in the low bits of `b` (higher bits ignored).
TPC_STORAGE_FN inline int64_t subByteToInt(uint8_t b, DType t) {
  int bits = subByteBits(t);
  int64_t v = b & ((1 << bits) - 1);
  if (subByteSigned(t) && (v >> (bits - 1)))
    v -= int64_t(1) << bits;
  return v;
}

/// An integer's low bits.
TPC_STORAGE_FN inline uint8_t intToSubByte(int64_t v, DType t) {
  return static_cast<uint8_t>(uint64_t(v) & ((1u << subByteBits(t)) - 1));
}

/// A float truncated toward zero; 0 when NaN or outside the type's range.
TPC_STORAGE_FN inline uint8_t floatToSubByte(double x, DType t) {
  int bits = subByteBits(t);
  double lo = subByteSigned(t) ? -double(1 << (bits - 1)) : 0.0;
  double hi = subByteSigned(t) ? double((1 << (bits - 1)) - 1)
                               : double((1 << bits) - 1);
  if (!(x > lo - 1.0 && x < hi + 1.0)) // NaN fails both comparisons
    return 0;
  return intToSubByte(int64_t(x), t); // C++ conversion truncates
}

} // namespace storage
} // namespace tpc

#endif // TPC_KERNELS_STORAGETYPES_H
