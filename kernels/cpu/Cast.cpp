//===- Cast.cpp - Element type conversion ---------------------------------===//
//
// Every source element is read as float, double or int64 (whichever holds it
// exactly) and converted from there, so each target type needs just three
// conversion routines:
//   * to f16/bf16: round to nearest even; doubles round to odd into float
//     first so the two roundings do not compound.
//   * float to integer: truncation, saturating at the target's range, NaN
//     to 0 (ONNX leaves these undefined; saturation avoids C++ UB).
//   * integer to narrower integer: two's complement wrap, like numpy.
//   * to bool: non-zero (NaN included) is true.
// int64 sources beyond 2^53 in magnitude round twice (via double).
// float8 and 4-/2-bit integers follow kernels/StorageTypes.h: sources are
// decoded exactly to float or int64; float8 targets round to nearest even
// (saturating unless `saturate` is 0).
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Cast.h"
#include "kernels/StorageTypes.h"
#include "kernels/cpu/Convert.h"

#include <cstring>

namespace tpc::cpu {
namespace {

template <class D> struct To;

template <> struct To<float> {
  static float fromF(float x) { return x; }
  static float fromD(double x) { return static_cast<float>(x); }
  static float fromI(int64_t x) { return static_cast<float>(x); }
};
template <> struct To<double> {
  static double fromF(float x) { return x; }
  static double fromD(double x) { return x; }
  static double fromI(int64_t x) { return static_cast<double>(x); }
};
template <> struct To<Half> {
  static Half fromF(float x) { return floatToHalf(x); }
  static Half fromD(double x) { return floatToHalf(doubleToFloatRoundOdd(x)); }
  static Half fromI(int64_t x) { return fromD(static_cast<double>(x)); }
};
template <> struct To<BFloat16> {
  static BFloat16 fromF(float x) { return floatToBFloat16(x); }
  static BFloat16 fromD(double x) {
    return floatToBFloat16(doubleToFloatRoundOdd(x));
  }
  static BFloat16 fromI(int64_t x) { return fromD(static_cast<double>(x)); }
};
/// Integer targets; bool is handled separately because it is stored as a
/// byte but converts by truth value.
template <class I> struct ToInt {
  static I fromF(float x) { return saturatingToInt<I>(x); }
  static I fromD(double x) { return saturatingToInt<I>(x); }
  static I fromI(int64_t x) { return static_cast<I>(x); }
};
template <> struct To<int64_t> : ToInt<int64_t> {};
template <> struct To<int32_t> : ToInt<int32_t> {};
template <> struct To<int8_t> : ToInt<int8_t> {};
template <> struct To<uint8_t> : ToInt<uint8_t> {};
template <> struct To<int16_t> : ToInt<int16_t> {};
template <> struct To<uint16_t> : ToInt<uint16_t> {};
template <> struct To<uint32_t> : ToInt<uint32_t> {};
template <> struct To<uint64_t> : ToInt<uint64_t> {};
struct BoolTag {};
template <> struct To<BoolTag> {
  static uint8_t fromF(float x) { return x != 0 ? 1 : 0; }
  static uint8_t fromD(double x) { return x != 0 ? 1 : 0; }
  static uint8_t fromI(int64_t x) { return x != 0 ? 1 : 0; }
};

/// float8 targets: round to nearest even; doubles round to odd first.
template <DType T> struct Float8Tag {};
template <DType T> struct To<Float8Tag<T>> {
  bool saturate = true;
  uint8_t fromF(float x) const {
    return storage::floatToFloat8(x, T, saturate);
  }
  uint8_t fromD(double x) const { return fromF(doubleToFloatRoundOdd(x)); }
  uint8_t fromI(int64_t x) const { return fromD(static_cast<double>(x)); }
};
/// 4- and 2-bit integer targets.
template <DType T> struct SubByteTag {};
template <DType T> struct To<SubByteTag<T>> {
  static uint8_t fromF(float x) { return storage::floatToSubByte(x, T); }
  static uint8_t fromD(double x) { return storage::floatToSubByte(x, T); }
  static uint8_t fromI(int64_t x) { return storage::intToSubByte(x, T); }
};

} // namespace

template <> inline constexpr DType kDTypeOf<BoolTag> = DType::Bool;
template <DType T> inline constexpr DType kDTypeOf<Float8Tag<T>> = T;
template <DType T> inline constexpr DType kDTypeOf<SubByteTag<T>> = T;

namespace {

template <class D> struct StoredAs { using type = D; };
template <> struct StoredAs<BoolTag> { using type = uint8_t; };
template <DType T> struct StoredAs<Float8Tag<T>> { using type = uint8_t; };
template <DType T> struct StoredAs<SubByteTag<T>> { using type = uint8_t; };
template <class D> using Stored = typename StoredAs<D>::type;

template <class D> constexpr bool kFloatTarget =
    std::is_floating_point_v<D> || std::is_same_v<D, Half> ||
    std::is_same_v<D, BFloat16>;
template <DType T> constexpr bool kFloatTarget<Float8Tag<T>> = true;

template <class D, class S, class Fn>
void loop(const void *in, void *out, int64_t n, Fn fn) {
  const S *x = static_cast<const S *>(in);
  Stored<D> *y = static_cast<Stored<D> *>(out);
  for (int64_t i = 0; i < n; ++i)
    y[i] = fn(x[i]);
}

template <class D>
void castTo(DType from, const void *in, void *out, int64_t n, To<D> C) {
  // Integers convert from int64; the 16-bit floats widen to float.
  if (visitTypes<int64_t, int32_t, int16_t, int8_t, uint32_t, uint16_t,
                 uint8_t>(from, [&](auto tag) {
        using S = typename decltype(tag)::type;
        loop<D, S>(in, out, n, [C](S v) { return C.fromI(v); });
      }))
    return;
  if (visitFloat16(from, [&](auto tag) {
        using S = typename decltype(tag)::type;
        loop<D, S>(in, out, n, [C](S v) { return C.fromF(widen(v)); });
      }))
    return;
  switch (from) {
  case DType::F32:
    return loop<D, float>(in, out, n, [C](float v) { return C.fromF(v); });
  case DType::F64:
    return loop<D, double>(in, out, n, [C](double v) { return C.fromD(v); });
  case DType::U64:
    // Above 2^63 through double for float targets; integer targets wrap
    // modulo their width, as the int64 path does.
    return loop<D, uint64_t>(in, out, n, [C](uint64_t v) {
      if constexpr (kFloatTarget<D>)
        return C.fromD(static_cast<double>(v));
      else
        return C.fromI(static_cast<int64_t>(v));
    });
  case DType::Bool:
    return loop<D, uint8_t>(in, out, n,
                            [C](uint8_t v) { return C.fromI(v != 0); });
  default:
    break;
  }
  // The storage types decode exactly to float (float8) or int64.
  if (storage::isFloat8(from))
    loop<D, uint8_t>(in, out, n, [C, from](uint8_t v) {
      return C.fromF(storage::float8ToFloat(v, from));
    });
  else if (storage::isSubByteInt(from))
    loop<D, uint8_t>(in, out, n, [C, from](uint8_t v) {
      return C.fromI(storage::subByteToInt(v, from));
    });
}

} // namespace

void castKernel(const CastParams &p, const void *in, void *out) {
  visitTypes<float, double, Half, BFloat16, int64_t, int32_t, int16_t, int8_t,
             uint64_t, uint32_t, uint16_t, uint8_t, BoolTag,
             Float8Tag<DType::F8E4M3FN>, Float8Tag<DType::F8E4M3FNUZ>,
             Float8Tag<DType::F8E5M2>, Float8Tag<DType::F8E5M2FNUZ>,
             SubByteTag<DType::U4>, SubByteTag<DType::I4>,
             SubByteTag<DType::U2>, SubByteTag<DType::I2>>(p.to, [&](auto tag) {
    using D = typename decltype(tag)::type;
    To<D> to;
    if constexpr (std::is_same_v<D, Float8Tag<kDTypeOf<D>>>)
      to.saturate = p.saturate;
    castTo<D>(p.from, in, out, p.numel, to);
  });
}

uint64_t scalarPattern(double value, DType dtype) {
  uint64_t bits = 0;
  castKernel(CastParams{DType::F64, dtype, 1}, &value, &bits);
  return bits;
}

uint64_t fillPattern(const FillParams &p) {
  // Integer values beyond 2^53 would round through double; copy them.
  if (p.exactInt) {
    uint64_t bits;
    std::memcpy(&bits, &p.intValue, sizeof bits);
    return bits;
  }
  return scalarPattern(p.value, p.dtype);
}

} // namespace tpc::cpu
