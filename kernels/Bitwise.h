//===- Bitwise.h - Integer bit operations, for every backend ---*- C++ -*-===//
//
// The shifts of ONNX BitShift, shared by the CPU and CUDA binary kernels. A
// shift by a negative amount or by the type's width or more gives what the
// sign extension alone gives (BitShift-28): 0 to the left, and 0 or -1 (a
// negative value) to the right; a signed right shift is arithmetic.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_BITWISE_H
#define TPC_KERNELS_BITWISE_H

#include <type_traits>

#if defined(__CUDACC__)
#define TPC_BITWISE_FN __host__ __device__ __forceinline__
#else
#define TPC_BITWISE_FN inline
#endif

namespace tpc {

template <class T> TPC_BITWISE_FN bool shiftOutOfRange(T amount) {
  constexpr T bits = T(sizeof(T) * 8);
  if constexpr (std::is_signed_v<T>)
    if (amount < 0)
      return true;
  return amount >= bits;
}

template <class T> TPC_BITWISE_FN T shiftLeft(T a, T amount) {
  using U = std::make_unsigned_t<T>;
  if (shiftOutOfRange(amount))
    return T(0);
  return static_cast<T>(static_cast<U>(a) << amount);
}

template <class T> TPC_BITWISE_FN T shiftRight(T a, T amount) {
  if (shiftOutOfRange(amount)) {
    if constexpr (std::is_signed_v<T>)
      return a < 0 ? T(-1) : T(0);
    return T(0);
  }
  return static_cast<T>(a >> amount);
}

} // namespace tpc

#endif // TPC_KERNELS_BITWISE_H
