//===- Binary.cpp - Broadcasting elementwise kernels ----------------------===//
#include "kernels/cpu/Binary.h"
#include "kernels/Arith.h"
#include "kernels/Bitwise.h"
#include "kernels/cpu/Convert.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace tpc::cpu {

namespace {

template <class T> constexpr bool kIsInt = std::is_integral_v<T>;

using arith::intDiv;
using arith::intPow;
using arith::intRem;
using arith::isNegative;
using arith::wrapAdd;
using arith::wrapMul;
using arith::wrapSub;

/// The ops whose result is `Expr` of a and b, of their type T.
#define TPC_BINARY_FN(Name, Expr)                                              \
  struct Name {                                                                \
    template <class T> T operator()(T a, T b) const { return Expr; }           \
  };
TPC_BINARY_FN(AddFn, wrapAdd(a, b))
TPC_BINARY_FN(SubFn, wrapSub(a, b))
TPC_BINARY_FN(MulFn, wrapMul(a, b))
TPC_BINARY_FN(BitAndFn, T(a &b))
TPC_BINARY_FN(BitOrFn, T(a | b))
TPC_BINARY_FN(BitXorFn, T(a ^ b))
TPC_BINARY_FN(ShiftLeftFn, shiftLeft(a, b))
TPC_BINARY_FN(ShiftRightFn, shiftRight(a, b))
#undef TPC_BINARY_FN

struct DivFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (kIsInt<T>)
      return intDiv(a, b);
    else
      return a / b;
  }
};
/// Max (or Min) of two, NaN when b is: a NaN met propagates.
template <bool IsMax> struct ExtremeFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (!kIsInt<T>)
      if (std::isnan(b))
        return b;
    return (IsMax ? a < b : b < a) ? b : a;
  }
};
using MaxFn = ExtremeFn<true>;
using MinFn = ExtremeFn<false>;
struct ModFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (!kIsInt<T>) {
      // Mod-28's fmod=0 for floats: the sign of B, A - floor(A / B) * B,
      // with fmod's NaN for an infinite A or a zero B, and B for an
      // infinite B of the other sign than a finite, nonzero A.
      T r = std::fmod(a, b);
      if (r == T(0))
        return std::copysign(T(0), b);
      if ((r < T(0)) != (b < T(0)))
        r += b;
      return r;
    } else {
      T r = intRem(a, b);
      if (r != 0 && (isNegative(r) != isNegative(b)))
        r = wrapAdd(r, b);
      return r;
    }
  }
};
struct FModFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (kIsInt<T>)
      return intRem(a, b);
    else
      return std::fmod(a, b);
  }
};
struct PReluFn {
  template <class T> T operator()(T x, T slope) const {
    if constexpr (kIsInt<T>)
      return isNegative(x) ? wrapMul(x, slope) : x;
    else
      return x < 0 ? x * slope : x;
  }
};
struct PowFn {
  template <class A, class B> A operator()(A a, B b) const {
    if constexpr (kIsInt<A> && kIsInt<B>) {
      return intPow(a, static_cast<int64_t>(b));
    } else if constexpr (kIsInt<A>) {
      return saturatingToInt<A>(
          std::pow(static_cast<double>(a), static_cast<double>(b)));
    } else {
      A e = static_cast<A>(b);
      // Squaring is the common case (variance, L2); skip the libm call.
      if (e == A(2))
        return a * a;
      return std::pow(a, e);
    }
  }
};

/// The comparisons and logical ops: a byte, 1 where `Expr` holds.
#define TPC_CMP_FN(Name, Expr)                                                 \
  struct Name {                                                                \
    template <class T> uint8_t operator()(T a, T b) const {                    \
      return (Expr) ? 1 : 0;                                                   \
    }                                                                          \
  };
TPC_CMP_FN(EqualFn, a == b)
TPC_CMP_FN(LessFn, a < b)
TPC_CMP_FN(GreaterFn, a > b)
TPC_CMP_FN(LessEqFn, a <= b)
TPC_CMP_FN(GreaterEqFn, a >= b)
TPC_CMP_FN(BoolEqualFn, (a != 0) == (b != 0))
TPC_CMP_FN(AndFn, (a != 0) && (b != 0))
TPC_CMP_FN(OrFn, (a != 0) || (b != 0))
TPC_CMP_FN(XorFn, (a != 0) != (b != 0))
#undef TPC_CMP_FN

/// Walks the layout row by row; the row loops are specialised for the
/// stride patterns that same-shape, scalar and trailing-vector broadcasts
/// produce so that they vectorize.
template <class A, class B, class R, class Fn>
void binaryRows(const StridedLayout<3> &l, const A *a, const B *b, R *out,
                Fn fn) {
  const int64_t n = rowLength(l);
  const int64_t so = rowStride(l, 0), sa = rowStride(l, 1),
                sb = rowStride(l, 2);
  forEachRow(l, [&](const int64_t *off) {
    R *o = out + off[0];
    const A *x = a + off[1];
    const B *y = b + off[2];
    if (so == 1 && sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i)
        o[i] = fn(x[i], y[i]);
    } else if (so == 1 && sa == 1 && sb == 0) {
      const B yv = *y;
      for (int64_t i = 0; i < n; ++i)
        o[i] = fn(x[i], yv);
    } else if (so == 1 && sa == 0 && sb == 1) {
      const A xv = *x;
      for (int64_t i = 0; i < n; ++i)
        o[i] = fn(xv, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        o[i * so] = fn(x[i * sa], y[i * sb]);
    }
  });
}

/// How an element type is computed with: 16-bit floats are widened to float
/// and each result rounded back (to nearest even), every other type is
/// computed as stored.
template <class S> struct Compute {
  static S load(S v) { return v; }
  static S store(S v) { return v; }
};
template <> struct Compute<Half> {
  static float load(Half v) { return halfToFloat(v); }
  static Half store(float v) { return floatToHalf(v); }
};
template <> struct Compute<BFloat16> {
  static float load(BFloat16 v) { return bfloat16ToFloat(v); }
  static BFloat16 store(float v) { return floatToBFloat16(v); }
};
template <class S>
constexpr bool kIsFloat16 =
    std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>;

/// `fn` on operands stored as A and B: a comparison's byte comes back as it
/// is, anything else is stored as A.
template <class A, class B, class Fn> auto onStorage(Fn fn) {
  return [fn](A a, B b) {
    auto r = fn(Compute<A>::load(a), Compute<B>::load(b));
    if constexpr (kIsFloat16<A> && !std::is_same_v<decltype(r), uint8_t>)
      return Compute<A>::store(r);
    else
      return r;
  };
}

/// visitTypes over the signed and unsigned integers of 8 to 64 bits.
template <class F> bool visitInteger(DType t, F &&f) {
  return visitTypes<int64_t, int32_t, int16_t, int8_t, uint64_t, uint32_t,
                    uint16_t, uint8_t>(t, f);
}

/// Every type the binary kernels take: the integers and the floats.
template <class F> bool visitBinaryType(DType t, F &&f) {
  return visitInteger(t, f) || visitTypes<float, double, Half, BFloat16>(t, f);
}

template <class T, class Fn>
void sameType(const BinaryParams &p, const void *a, const void *b, void *out,
              Fn fn) {
  auto f = onStorage<T, T>(fn);
  using R = decltype(f(T(), T()));
  binaryRows(p.layout, static_cast<const T *>(a), static_cast<const T *>(b),
             static_cast<R *>(out), f);
}

template <class Fn>
void numeric(const BinaryParams &p, const void *a, const void *b, void *out,
             Fn fn) {
  visitBinaryType(p.lhsType, [&](auto tag) {
    using T = typename decltype(tag)::type;
    sameType<T>(p, a, b, out, fn);
  });
}

void powKernel(const BinaryParams &p, const void *a, const void *b, void *out) {
  visitBinaryType(p.lhsType, [&](auto baseTag) {
    using A = typename decltype(baseTag)::type;
    visitBinaryType(p.rhsType, [&](auto expTag) {
      using B = typename decltype(expTag)::type;
      binaryRows(p.layout, static_cast<const A *>(a), static_cast<const B *>(b),
                 static_cast<A *>(out), onStorage<A, B>(PowFn()));
    });
  });
}

/// `fn` over operands of one integer dtype.
template <class Fn>
void integers(const BinaryParams &p, const void *a, const void *b, void *out,
              Fn fn) {
  visitInteger(p.lhsType, [&](auto tag) {
    sameType<typename decltype(tag)::type>(p, a, b, out, fn);
  });
}

template <class Fn>
void comparison(const BinaryParams &p, const void *a, const void *b, void *out,
                Fn fn) {
  if (p.lhsType == DType::Bool)
    return sameType<uint8_t>(p, a, b, out, BoolEqualFn());
  numeric(p, a, b, out, fn);
}

} // namespace

void binaryKernel(const BinaryParams &p, const void *a, const void *b,
                  void *out) {
  switch (p.op) {
  case BinaryOp::Add:
    return numeric(p, a, b, out, AddFn());
  case BinaryOp::Sub:
    return numeric(p, a, b, out, SubFn());
  case BinaryOp::Mul:
    return numeric(p, a, b, out, MulFn());
  case BinaryOp::Div:
    return numeric(p, a, b, out, DivFn());
  case BinaryOp::Max:
    return numeric(p, a, b, out, MaxFn());
  case BinaryOp::Min:
    return numeric(p, a, b, out, MinFn());
  case BinaryOp::FMod:
    return numeric(p, a, b, out, FModFn());
  case BinaryOp::PRelu:
    return numeric(p, a, b, out, PReluFn());
  case BinaryOp::Pow:
    return powKernel(p, a, b, out);
  case BinaryOp::Mod:
    return numeric(p, a, b, out, ModFn());
  case BinaryOp::Equal:
    return comparison(p, a, b, out, EqualFn());
  case BinaryOp::Less:
    return numeric(p, a, b, out, LessFn());
  case BinaryOp::Greater:
    return numeric(p, a, b, out, GreaterFn());
  case BinaryOp::LessOrEqual:
    return numeric(p, a, b, out, LessEqFn());
  case BinaryOp::GreaterOrEqual:
    return numeric(p, a, b, out, GreaterEqFn());
  case BinaryOp::And:
    return sameType<uint8_t>(p, a, b, out, AndFn());
  case BinaryOp::Or:
    return sameType<uint8_t>(p, a, b, out, OrFn());
  case BinaryOp::Xor:
    return sameType<uint8_t>(p, a, b, out, XorFn());
  case BinaryOp::BitAnd:
    return integers(p, a, b, out, BitAndFn());
  case BinaryOp::BitOr:
    return integers(p, a, b, out, BitOrFn());
  case BinaryOp::BitXor:
    return integers(p, a, b, out, BitXorFn());
  case BinaryOp::ShiftLeft:
    return integers(p, a, b, out, ShiftLeftFn());
  case BinaryOp::ShiftRight:
    return integers(p, a, b, out, ShiftRightFn());
  }
}

void whereKernel(const WhereParams &p, const uint8_t *cond, const void *x,
                 const void *y, void *out) {
  visitBySize(p.elemSize, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const StridedLayout<4> &l = p.layout;
    const int64_t n = rowLength(l);
    const int64_t s0 = rowStride(l, 0), s1 = rowStride(l, 1),
                  s2 = rowStride(l, 2), s3 = rowStride(l, 3);
    const T *xs = static_cast<const T *>(x);
    const T *ys = static_cast<const T *>(y);
    T *os = static_cast<T *>(out);
    forEachRow(l, [&](const int64_t *off) {
      T *o = os + off[0];
      const uint8_t *c = cond + off[1];
      const T *xr = xs + off[2];
      const T *yr = ys + off[3];
      if (s0 == 1 && s1 == 1 && s2 == 1 && s3 == 1) {
        for (int64_t i = 0; i < n; ++i)
          o[i] = c[i] ? xr[i] : yr[i];
      } else {
        for (int64_t i = 0; i < n; ++i)
          o[i * s0] = c[i * s1] ? xr[i * s2] : yr[i * s3];
      }
    });
  });
}

} // namespace tpc::cpu
