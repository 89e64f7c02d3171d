//===- Elementwise.cu - Broadcasting, unary and conversion kernels --------===//
//
// One strided kernel per element type walks any broadcast (StridedLayout,
// innermost dim last, 32-bit index math when it fits) and one vector kernel
// per element type takes the contiguous same-shape case with 16-byte loads.
// The op is a kernel argument rather than a template parameter: it is the
// same for every thread, so the switch costs a few uniform instructions in
// kernels that are bound by memory, and the library compiles quickly.
// Semantics follow the CPU kernels (wrapping integers, x / 0 == 0 for
// integers, NaN-propagating Max/Min); f16/bf16 compute in f32 and round once.
//
//===----------------------------------------------------------------------===//
#include "kernels/Arith.h"
#include "kernels/Bitwise.h"
#include "kernels/StorageTypes.h"
#include "kernels/cuda/DeviceUtil.cuh"
#include "kernels/cuda/Kernels.h"

#include <cmath>
#include <limits>

namespace tpc::cuda {
namespace {



//===----------------------------------------------------------------------===//
// Scalar arithmetic
//===----------------------------------------------------------------------===//

using arith::intDiv;
using arith::intPow;
using arith::intRem;
using arith::wrapAdd;
using arith::wrapMul;
using arith::wrapSub;

template <class I> __device__ __forceinline__ I saturatingToInt(double x) {
  if (isnan(x))
    return 0;
  const double lo = double(std::numeric_limits<I>::min());
  const double hiExcl = double(std::numeric_limits<I>::max() / 2 + 1) * 2.0;
  const double t = trunc(x);
  if (t < lo)
    return std::numeric_limits<I>::min();
  if (t >= hiExcl)
    return std::numeric_limits<I>::max();
  return I(t);
}

/// Arithmetic ops in the compute type C.
template <class C> __device__ __forceinline__ C arith(BinaryOp op, C a, C b) {
  switch (op) {
  case BinaryOp::Add:
    return wrapAdd(a, b);
  case BinaryOp::Sub:
    return wrapSub(a, b);
  case BinaryOp::Mul:
    return wrapMul(a, b);
  case BinaryOp::Div:
    if constexpr (std::is_integral_v<C>)
      return intDiv(a, b);
    else
      return a / b;
  case BinaryOp::Max:
    if constexpr (!std::is_integral_v<C>)
      if (isnan(b))
        return b;
    return a < b ? b : a;
  case BinaryOp::Min:
    if constexpr (!std::is_integral_v<C>)
      if (isnan(b))
        return b;
    return b < a ? b : a;
  case BinaryOp::Mod:
    if constexpr (std::is_integral_v<C>) {
      C r = intRem(a, b);
      if (r != 0 && ((r < 0) != (b < 0)))
        r = wrapAdd(r, b);
      return r;
    } else {
      // Mod-28's fmod=0 for floats: the sign of B, A - floor(A / B) * B.
      C r = fmod(a, b);
      if (r == C(0))
        return copysign(C(0), b);
      if ((r < C(0)) != (b < C(0)))
        r += b;
      return r;
    }
  case BinaryOp::FMod:
    if constexpr (std::is_integral_v<C>)
      return intRem(a, b);
    else
      return fmod(a, b);
  case BinaryOp::PRelu:
    return a < 0 ? wrapMul(a, b) : a;
  case BinaryOp::BitAnd:
  case BinaryOp::BitOr:
  case BinaryOp::BitXor:
  case BinaryOp::ShiftLeft:
  case BinaryOp::ShiftRight:
    if constexpr (std::is_integral_v<C>) {
      switch (op) {
      case BinaryOp::BitAnd: return C(a & b);
      case BinaryOp::BitOr: return C(a | b);
      case BinaryOp::BitXor: return C(a ^ b);
      case BinaryOp::ShiftLeft: return shiftLeft(a, b);
      default: return shiftRight(a, b);
      }
    }
    return C(0);
  default:
    return C(0);
  }
}

/// Every binary op but Pow: T operands, R result (uint8 for comparisons and
/// logical ops).
template <class T, class R>
__device__ __forceinline__ R applyBinary(BinaryOp op, T a, T b) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    const bool x = a != 0, y = b != 0;
    switch (op) {
    case BinaryOp::Equal: return x == y;
    case BinaryOp::And: return x && y;
    case BinaryOp::Or: return x || y;
    case BinaryOp::Xor: return x != y;
    default: return 0;
    }
  } else if constexpr (std::is_same_v<R, uint8_t>) {
    const Compute<T> x = toCompute(a), y = toCompute(b);
    switch (op) {
    case BinaryOp::Equal: return x == y;
    case BinaryOp::Less: return x < y;
    case BinaryOp::Greater: return x > y;
    case BinaryOp::LessOrEqual: return x <= y;
    case BinaryOp::GreaterOrEqual: return x >= y;
    default: return 0;
    }
  } else {
    return fromCompute<T>(arith(op, toCompute(a), toCompute(b)));
  }
}

/// Element `i` of a numeric array of dtype `t`, as an int64 (`isInt`) or a
/// double.
__device__ __forceinline__ void loadNumber(DType t, const void *p, int64_t i,
                                           bool &isInt, int64_t &iv,
                                           double &dv) {
  isInt = false;
  switch (t) {
  case DType::F32: dv = static_cast<const float *>(p)[i]; return;
  case DType::F64: dv = static_cast<const double *>(p)[i]; return;
  case DType::F16: dv = __half2float(static_cast<const __half *>(p)[i]); return;
  case DType::BF16:
    dv = __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    return;
  case DType::I32: isInt = true; iv = static_cast<const int32_t *>(p)[i]; return;
  case DType::I64: isInt = true; iv = static_cast<const int64_t *>(p)[i]; return;
  case DType::I8: isInt = true; iv = static_cast<const int8_t *>(p)[i]; return;
  default: isInt = true; iv = static_cast<const uint8_t *>(p)[i]; return;
  }
}

/// Pow with an exponent of any numeric dtype, as the CPU kernel computes it.
template <class T>
__device__ __forceinline__ T applyPow(T base, DType expType, const void *exps,
                                      int64_t i) {
  using C = Compute<T>;
  bool isInt;
  int64_t ie = 0;
  double de = 0;
  loadNumber(expType, exps, i, isInt, ie, de);
  const C a = toCompute(base);
  if constexpr (std::is_integral_v<C>) {
    if (isInt)
      return intPow(a, ie);
    return saturatingToInt<C>(pow(double(a), de));
  } else {
    const C e = isInt ? C(ie) : C(de);
    if (e == C(2))
      return fromCompute<T>(a * a);
    return fromCompute<T>(pow(a, e));
  }
}

//===----------------------------------------------------------------------===//
// Binary and Where
//===----------------------------------------------------------------------===//


template <class T, class R>
__global__ void binaryStrided(const __grid_constant__ BinaryParams p,
                              const T *a, const void *b, R *out) {
  for (int64_t i = threadIndex(); i < p.layout.numel; i += gridThreads()) {
    int64_t off[3];
    layoutOffsets(p.layout, i, off);
    if constexpr (std::is_same_v<T, R> && !std::is_same_v<T, uint8_t>) {
      if (p.op == BinaryOp::Pow) {
        out[off[0]] = applyPow(a[off[1]], p.rhsType, b, off[2]);
        continue;
      }
    }
    out[off[0]] =
        applyBinary<T, R>(p.op, a[off[1]], static_cast<const T *>(b)[off[2]]);
  }
}

/// Same-shape contiguous operands, V elements per access; the tail that
/// does not fill a vector is done element by element.
template <class T, class R, int V>
__global__ void binaryContiguous(BinaryOp op, const T *a, const T *b, R *out,
                                 int64_t n) {
  const int64_t nv = n / V;
  const auto *av = reinterpret_cast<const Pack<T, V> *>(a);
  const auto *bv = reinterpret_cast<const Pack<T, V> *>(b);
  auto *ov = reinterpret_cast<Pack<R, V> *>(out);
  for (int64_t i = threadIndex(); i < nv; i += gridThreads()) {
    const Pack<T, V> x = av[i], y = bv[i];
    Pack<R, V> z;
#pragma unroll
    for (int k = 0; k < V; ++k)
      z.v[k] = applyBinary<T, R>(op, x.v[k], y.v[k]);
    ov[i] = z;
  }
  for (int64_t i = nv * V + threadIndex(); i < n; i += gridThreads())
    out[i] = applyBinary<T, R>(op, a[i], b[i]);
}

template <class T, class R>
cudaError_t launchBinary(const BinaryParams &p, const void *a,
                         const void *b, void *out, cudaStream_t s) {
  const cpu::StridedLayout<3> &l = p.layout;
  if (l.numel == 0)
    return cudaSuccess;
  constexpr int V = 16 / sizeof(T) > 0 ? int(16 / sizeof(T)) : 1;
  const bool contiguous = p.op != BinaryOp::Pow && l.rank == 1 &&
                          l.strides[0][0] == 1 && l.strides[1][0] == 1 &&
                          l.strides[2][0] == 1;
  if (contiguous && isAligned(a, 16) && isAligned(b, 16) &&
      isAligned(out, V * sizeof(R))) {
    binaryContiguous<T, R, V><<<blocksFor((l.numel + V - 1) / V), kThreads, 0,
                                s>>>(p.op, static_cast<const T *>(a),
                                     static_cast<const T *>(b),
                                     static_cast<R *>(out), l.numel);
  } else {
    binaryStrided<T, R><<<blocksFor(l.numel), kThreads, 0, s>>>(
        p, static_cast<const T *>(a), b, static_cast<R *>(out));
  }
  return cudaGetLastError();
}

/// Calls f(T{}) with the C++ type of an arithmetic dtype.
template <class F> cudaError_t visitArith(DType t, F &&f) {
  switch (t) {
  case DType::F32: return f(float{});
  case DType::F64: return f(double{});
  case DType::F16: return f(__half{});
  case DType::BF16: return f(__nv_bfloat16{});
  case DType::I32: return f(int32_t{});
  case DType::I64: return f(int64_t{});
  default: return cudaErrorInvalidValue;
  }
}

template <class U>
__global__ void whereStrided(const __grid_constant__ WhereParams p,
                             const uint8_t *cond, const U *x, const U *y,
                             U *out) {
  for (int64_t i = threadIndex(); i < p.layout.numel; i += gridThreads()) {
    int64_t off[4];
    layoutOffsets(p.layout, i, off);
    out[off[0]] = cond[off[1]] ? x[off[2]] : y[off[3]];
  }
}

//===----------------------------------------------------------------------===//
// Maps: unary ops, scaling
//===----------------------------------------------------------------------===//

template <class In, class Out, class F, int V>
__global__ void mapKernel(const In *in, Out *out, int64_t n, F f) {
  int64_t start = 0;
  if constexpr (V > 1) {
    const int64_t nv = n / V;
    const auto *iv = reinterpret_cast<const Pack<In, V> *>(in);
    auto *ov = reinterpret_cast<Pack<Out, V> *>(out);
    for (int64_t i = threadIndex(); i < nv; i += gridThreads()) {
      const Pack<In, V> x = iv[i];
      Pack<Out, V> y;
#pragma unroll
      for (int k = 0; k < V; ++k)
        y.v[k] = f(x.v[k]);
      ov[i] = y;
    }
    start = nv * V;
  }
  for (int64_t i = start + threadIndex(); i < n; i += gridThreads())
    out[i] = f(in[i]);
}

/// out[i] = f(in[i]); `out` may alias `in`.
template <class In, class Out, class F>
cudaError_t launchMap(const void *in, void *out, int64_t n, F f,
                      cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  constexpr int V = sizeof(In) >= 16 ? 1 : int(16 / sizeof(In));
  const In *x = static_cast<const In *>(in);
  Out *y = static_cast<Out *>(out);
  if (V > 1 && isAligned(in, 16) && isAligned(out, V * sizeof(Out)))
    mapKernel<In, Out, F, V><<<blocksFor((n + V - 1) / V), kThreads, 0, s>>>(
        x, y, n, f);
  else
    mapKernel<In, Out, F, 1><<<blocksFor(n), kThreads, 0, s>>>(x, y, n, f);
  return cudaGetLastError();
}

/// The unary ops of floats and integers (kernels/Unary.h), in the compute
/// type.
template <class T> struct UnaryFn {
  using C = Compute<T>;
  UnaryOp op;
  C alpha, beta;

  __device__ __forceinline__ T operator()(T in) const {
    const C x = toCompute(in);
    if constexpr (std::is_integral_v<C>)
      return unaryInt<C>(op, x);
    else
      return fromCompute<T>(unaryFloat<C>(op, x, alpha, beta));
  }
};

template <class T> struct IsNaNFn {
  __device__ __forceinline__ uint8_t operator()(T x) const {
    return isnan(toCompute(x)) ? 1 : 0;
  }
};

struct NotFn {
  __device__ __forceinline__ uint8_t operator()(uint8_t x) const {
    return x ? 0 : 1;
  }
};

template <class T> struct ScaleFn {
  Compute<T> scale;
  __device__ __forceinline__ T operator()(T x) const {
    return fromCompute<T>(toCompute(x) * scale);
  }
};

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

/// A source element read exactly: as float (f32, f16, bf16), double or
/// int64 (integers and bool), like the CPU Cast.
struct Scalar {
  enum Kind { F, D, I } kind;
  float f;
  double d;
  int64_t i;
};

__device__ __forceinline__ Scalar loadScalar(DType t, const void *p,
                                             int64_t k) {
  Scalar s{Scalar::I, 0.f, 0.0, 0};
  switch (t) {
  case DType::F32: s.kind = Scalar::F; s.f = static_cast<const float *>(p)[k]; break;
  case DType::F64: s.kind = Scalar::D; s.d = static_cast<const double *>(p)[k]; break;
  case DType::F16:
    s.kind = Scalar::F;
    s.f = __half2float(static_cast<const __half *>(p)[k]);
    break;
  case DType::BF16:
    s.kind = Scalar::F;
    s.f = __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[k]);
    break;
  case DType::I64: s.i = static_cast<const int64_t *>(p)[k]; break;
  case DType::I32: s.i = static_cast<const int32_t *>(p)[k]; break;
  case DType::I8: s.i = static_cast<const int8_t *>(p)[k]; break;
  case DType::U8: s.i = static_cast<const uint8_t *>(p)[k]; break;
  case DType::I16: s.i = static_cast<const int16_t *>(p)[k]; break;
  case DType::U16: s.i = static_cast<const uint16_t *>(p)[k]; break;
  case DType::U32: s.i = static_cast<const uint32_t *>(p)[k]; break;
  // Above 2^63 as a double, which every float target can take.
  case DType::U64: {
    const uint64_t v = static_cast<const uint64_t *>(p)[k];
    if (v > uint64_t(INT64_MAX)) {
      s.kind = Scalar::D;
      s.d = double(v);
    } else {
      s.i = int64_t(v);
    }
    break;
  }
  case DType::Bool: s.i = static_cast<const uint8_t *>(p)[k] != 0; break;
  case DType::F8E4M3FN:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2:
  case DType::F8E5M2FNUZ:
    s.kind = Scalar::F;
    s.f = storage::float8ToFloat(static_cast<const uint8_t *>(p)[k], t);
    break;
  case DType::U4:
  case DType::I4:
  case DType::U2:
  case DType::I2:
    s.i = storage::subByteToInt(static_cast<const uint8_t *>(p)[k], t);
    break;
  }
  return s;
}

/// double -> float rounding to odd, so that a second rounding to a 16-bit
/// float is correct (as the CPU Cast does).
__device__ __forceinline__ float roundOddToFloat(double d) {
  const float f = __double2float_rz(d);
  if (isnan(d) || double(f) == d)
    return f;
  return __uint_as_float(__float_as_uint(f) | 1u);
}

__device__ __forceinline__ float scalarAsFloatFor16(const Scalar &s) {
  if (s.kind == Scalar::F)
    return s.f;
  return roundOddToFloat(s.kind == Scalar::D ? s.d : double(s.i));
}

template <class I> __device__ __forceinline__ I scalarAsInt(const Scalar &s) {
  if (s.kind == Scalar::F)
    return saturatingToInt<I>(double(s.f));
  if (s.kind == Scalar::D)
    return saturatingToInt<I>(s.d);
  return I(s.i);
}

__device__ __forceinline__ void storeScalar(DType t, void *p, int64_t k,
                                            const Scalar &s,
                                            bool saturate = true) {
  switch (t) {
  case DType::F32:
    static_cast<float *>(p)[k] = s.kind == Scalar::F   ? s.f
                                 : s.kind == Scalar::D ? float(s.d)
                                                       : float(s.i);
    return;
  case DType::F64:
    static_cast<double *>(p)[k] = s.kind == Scalar::F   ? double(s.f)
                                  : s.kind == Scalar::D ? s.d
                                                        : double(s.i);
    return;
  case DType::F16:
    static_cast<__half *>(p)[k] = __float2half_rn(scalarAsFloatFor16(s));
    return;
  case DType::BF16:
    static_cast<__nv_bfloat16 *>(p)[k] =
        __float2bfloat16_rn(scalarAsFloatFor16(s));
    return;
  case DType::I64: static_cast<int64_t *>(p)[k] = scalarAsInt<int64_t>(s); return;
  case DType::I32: static_cast<int32_t *>(p)[k] = scalarAsInt<int32_t>(s); return;
  case DType::I8: static_cast<int8_t *>(p)[k] = scalarAsInt<int8_t>(s); return;
  case DType::U8: static_cast<uint8_t *>(p)[k] = scalarAsInt<uint8_t>(s); return;
  case DType::I16: static_cast<int16_t *>(p)[k] = scalarAsInt<int16_t>(s); return;
  case DType::U16: static_cast<uint16_t *>(p)[k] = scalarAsInt<uint16_t>(s); return;
  case DType::U32: static_cast<uint32_t *>(p)[k] = scalarAsInt<uint32_t>(s); return;
  case DType::U64: static_cast<uint64_t *>(p)[k] = scalarAsInt<uint64_t>(s); return;
  case DType::Bool:
    static_cast<uint8_t *>(p)[k] = s.kind == Scalar::F   ? s.f != 0
                                   : s.kind == Scalar::D ? s.d != 0
                                                         : s.i != 0;
    return;
  case DType::F8E4M3FN:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2:
  case DType::F8E5M2FNUZ:
    static_cast<uint8_t *>(p)[k] =
        storage::floatToFloat8(scalarAsFloatFor16(s), t, saturate);
    return;
  case DType::U4:
  case DType::I4:
  case DType::U2:
  case DType::I2:
    static_cast<uint8_t *>(p)[k] =
        s.kind == Scalar::I
            ? storage::intToSubByte(s.i, t)
            : storage::floatToSubByte(s.kind == Scalar::F ? double(s.f) : s.d,
                                      t);
    return;
  }
}

__global__ void castAny(DType from, DType to, const void *in, void *out,
                        int64_t n, bool saturate) {
  for (int64_t i = threadIndex(); i < n; i += gridThreads())
    storeScalar(to, out, i, loadScalar(from, in, i), saturate);
}

//===----------------------------------------------------------------------===//
// Range and the on-device sum
//===----------------------------------------------------------------------===//

template <class T>
__global__ void rangeTyped(const T *start, const T *delta, T *out, int64_t n) {
  // f16 and bf16 compute in float and round each element once.
  const Compute<T> s = toCompute(*start), d = toCompute(*delta);
  for (int64_t i = threadIndex(); i < n; i += gridThreads())
    out[i] = fromCompute<T>(Compute<T>(s + Compute<T>(i) * d));
}

struct SumOperands {
  const void *src[kMaxSumOperands];
  void *dst[kMaxSumOperands];
  int numSrc;
  int numDst;
};

template <class T>
__global__ void sumAcrossTyped(const __grid_constant__ SumOperands ops,
                               size_t count) {
  using C = Compute<T>;
  using Acc = Wrap<C>;
  for (int64_t i = threadIndex(); i < int64_t(count); i += gridThreads()) {
    Acc acc = 0;
    for (int j = 0; j < ops.numSrc; ++j)
      acc += Acc(toCompute(static_cast<const T *>(ops.src[j])[i]));
    const T r = fromCompute<T>(C(acc));
    for (int k = 0; k < ops.numDst; ++k)
      static_cast<T *>(ops.dst[k])[i] = r;
  }
}

} // namespace

cudaError_t binaryKernel(const BinaryParams &p, const void *lhs,
                         const void *rhs, void *out, cudaStream_t stream) {
  if (p.lhsType == DType::Bool)
    return launchBinary<uint8_t, uint8_t>(p, lhs, rhs, out, stream);
  const bool boolOut = cpu::isComparison(p.op) || cpu::isLogical(p.op);
  return visitArith(p.lhsType, [&](auto tag) {
    using T = decltype(tag);
    return boolOut ? launchBinary<T, uint8_t>(p, lhs, rhs, out, stream)
                   : launchBinary<T, T>(p, lhs, rhs, out, stream);
  });
}

cudaError_t whereKernel(const WhereParams &p, const uint8_t *cond,
                        const void *x, const void *y, void *out,
                        cudaStream_t stream) {
  if (p.layout.numel == 0)
    return cudaSuccess;
  return visitUnit(int(p.elemSize), [&](auto size) {
    using U = typename UnitOf<decltype(size)::value>::type;
    whereStrided<U><<<blocksFor(p.layout.numel), kThreads, 0, stream>>>(
        p, cond, static_cast<const U *>(x), static_cast<const U *>(y),
        static_cast<U *>(out));
    return cudaGetLastError();
  });
}

cudaError_t unaryKernel(const UnaryParams &p, const void *in, void *out,
                        cudaStream_t stream) {
  if (p.op == UnaryOp::Not)
    return launchMap<uint8_t, uint8_t>(in, out, p.numel, NotFn{}, stream);
  return visitArith(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    if constexpr (kIsFloat<T>) {
      if (p.op == UnaryOp::IsNaN)
        return launchMap<T, uint8_t>(in, out, p.numel, IsNaNFn<T>{}, stream);
    }
    UnaryFn<T> f{p.op, C(p.alpha), C(p.beta)};
    return launchMap<T, T>(in, out, p.numel, f, stream);
  });
}

cudaError_t castKernel(const CastParams &p, const void *in, void *out,
                       cudaStream_t stream) {
  if (p.numel == 0)
    return cudaSuccess;
  castAny<<<blocksFor(p.numel), kThreads, 0, stream>>>(p.from, p.to, in, out,
                                                      p.numel, p.saturate);
  return cudaGetLastError();
}

cudaError_t scaleKernel(DType dtype, int64_t numel, double scale, void *data,
                        cudaStream_t stream) {
  return visitArith(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloat<T>)
      return launchMap<T, T>(data, data, numel,
                             ScaleFn<T>{Compute<T>(scale)}, stream);
    else
      return cudaErrorInvalidValue;
  });
}

cudaError_t rangeKernel(DType dtype, int64_t numel, const void *start,
                        const void *delta, void *out, cudaStream_t stream) {
  if (numel == 0)
    return cudaSuccess;
  return visitArith(dtype, [&](auto tag) {
    using T = decltype(tag);
    rangeTyped<T><<<blocksFor(numel), kThreads, 0, stream>>>(
        static_cast<const T *>(start), static_cast<const T *>(delta),
        static_cast<T *>(out), numel);
    return cudaGetLastError();
  });
}

cudaError_t sumAcross(DType dtype, size_t count, const void *const *srcs,
                      int numSrcs, void *const *dsts, int numDsts,
                      cudaStream_t stream) {
  if (numSrcs < 1 || numSrcs > kMaxSumOperands || numDsts < 0 ||
      numDsts > kMaxSumOperands)
    return cudaErrorInvalidValue;
  if (count == 0)
    return cudaSuccess;
  SumOperands ops{};
  for (int j = 0; j < numSrcs; ++j)
    ops.src[j] = srcs[j];
  for (int k = 0; k < numDsts; ++k)
    ops.dst[k] = dsts[k];
  ops.numSrc = numSrcs;
  ops.numDst = numDsts;
  return visitArith(dtype, [&](auto tag) {
    using T = decltype(tag);
    sumAcrossTyped<T><<<blocksFor(int64_t(count)), kThreads, 0, stream>>>(
        ops, count);
    return cudaGetLastError();
  });
}

} // namespace tpc::cuda
