//===- Arith.h - Integer arithmetic both backends share ---------*- C++ -*-===//
//
// The integer rules of the binary kernels, on the host and the device:
// add, subtract and multiply wrap (through the unsigned type, where C++
// leaves signed overflow undefined), x / 0 and x % 0 give 0, MIN / -1
// wraps, and an integer power with a negative exponent truncates toward
// zero. For floating-point types the first three are the plain operations.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_ARITH_H
#define TPC_KERNELS_ARITH_H

#include "kernels/HostDevice.h"

#include <cstdint>
#include <type_traits>

namespace tpc::arith {

/// The unsigned type integer arithmetic on T goes through: types narrower
/// than unsigned int would otherwise multiply as (signed) int.
template <class T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                    std::make_unsigned_t<T>>;

template <class T> TPC_HOST_DEVICE T wrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return T(WrapType<T>(a) + WrapType<T>(b));
  else
    return a + b;
}
template <class T> TPC_HOST_DEVICE T wrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return T(WrapType<T>(a) - WrapType<T>(b));
  else
    return a - b;
}
template <class T> TPC_HOST_DEVICE T wrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return T(WrapType<T>(a) * WrapType<T>(b));
  else
    return a * b;
}

/// Whether an integer is below zero, without a comparison that is always
/// false for unsigned types.
template <class T> TPC_HOST_DEVICE bool isNegative(T v) {
  if constexpr (std::is_signed_v<T>)
    return v < 0;
  else
    return false;
}

/// x / 0 and MIN / -1 trap on x86: they give 0 and the wrapped MIN.
template <class T> TPC_HOST_DEVICE T intDiv(T a, T b) {
  if (b == 0)
    return 0;
  if constexpr (std::is_signed_v<T>)
    if (b == -1)
      return wrapSub<T>(0, a);
  return T(a / b);
}
template <class T> TPC_HOST_DEVICE T intRem(T a, T b) {
  if (b == 0)
    return 0;
  if constexpr (std::is_signed_v<T>)
    if (b == -1)
      return 0;
  return T(a % b);
}

/// base ** e by squaring, wrapping; only +-1 have integer reciprocals, so a
/// negative exponent gives 0 for every other base.
template <class T> TPC_HOST_DEVICE T intPow(T base, int64_t e) {
  if (e < 0) {
    if (base == 1)
      return 1;
    if (isNegative(base) && base == T(-1))
      return (e & 1) ? T(-1) : T(1);
    return 0;
  }
  T result = 1;
  while (e) {
    if (e & 1)
      result = wrapMul(result, base);
    base = wrapMul(base, base);
    e >>= 1;
  }
  return result;
}

} // namespace tpc::arith

#endif // TPC_KERNELS_ARITH_H
