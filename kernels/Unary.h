//===- Unary.h - The elementwise unary kernels, for every backend -*- C++ -*-===//
//
// One list of the unary kernels (TPC_UNARY_KERNELS), the params both
// backends run from (makeUnaryParams validates the tensors and reads the
// attributes), and each op's formula (unaryFloat, unaryInt), which the CPU
// loops and the CUDA kernels both evaluate. A kernel reads only the
// attributes the plan carries: their defaults are the onnx dialect's
// (ODS), which the compiler writes into every plan, so a default is stated
// once. Adding a unary kernel is one line in TPC_UNARY_KERNELS and one case
// in unaryFloat (or unaryInt); the kernel tables, the CUDA adapter and the
// CUDA parity cases follow the list.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_UNARY_H
#define TPC_KERNELS_UNARY_H

#include "kernels/HostDevice.h"
#include "kernels/Types.h"

#include <math.h>
#include <type_traits>

namespace tpc {

/// The element types a unary kernel takes.
enum class UnaryDomain {
  Float,   ///< f32, f64, f16, bf16
  Signed,  ///< Float and the signed integers (i64, i32, i8)
  Numeric, ///< Signed and u8
  IsFloat, ///< Float in, bool out
  Bool,    ///< bool in, bool out
};

// X(Name, summary, domain, first float attribute, second float attribute):
// the attributes, nullptr when unused, become UnaryParams::alpha and beta.
#define TPC_UNARY_KERNELS(X)                                                   \
  X(Sqrt, "square root", Float, nullptr, nullptr)                              \
  X(Reciprocal, "1 / x", Float, nullptr, nullptr)                              \
  X(Neg, "-x (ints wrap)", Signed, nullptr, nullptr)                           \
  X(Abs, "|x|", Numeric, nullptr, nullptr)                                     \
  X(Exp, "e^x", Float, nullptr, nullptr)                                       \
  X(Log, "natural log", Float, nullptr, nullptr)                               \
  X(Erf, "error function", Float, nullptr, nullptr)                            \
  X(Tanh, "hyperbolic tangent", Float, nullptr, nullptr)                       \
  X(Sigmoid, "1 / (1 + e^-x)", Float, nullptr, nullptr)                        \
  X(Relu, "max(x, 0)", Numeric, nullptr, nullptr)                              \
  X(Cos, "cosine", Float, nullptr, nullptr)                                    \
  X(Sin, "sine", Float, nullptr, nullptr)                                      \
  X(Tan, "tangent", Float, nullptr, nullptr)                                   \
  X(Asin, "arcsine", Float, nullptr, nullptr)                                  \
  X(Acos, "arccosine", Float, nullptr, nullptr)                                \
  X(Atan, "arctangent", Float, nullptr, nullptr)                               \
  X(Sinh, "hyperbolic sine", Float, nullptr, nullptr)                          \
  X(Cosh, "hyperbolic cosine", Float, nullptr, nullptr)                        \
  X(Asinh, "inverse hyperbolic sine", Float, nullptr, nullptr)                 \
  X(Acosh, "inverse hyperbolic cosine", Float, nullptr, nullptr)               \
  X(Atanh, "inverse hyperbolic tangent", Float, nullptr, nullptr)              \
  X(Round, "round to nearest, ties to even", Float, nullptr, nullptr)          \
  X(Floor, "round down", Float, nullptr, nullptr)                              \
  X(Ceil, "round up", Float, nullptr, nullptr)                                 \
  X(Sign, "-1, 0 or 1", Numeric, nullptr, nullptr)                             \
  X(Softplus, "log(1 + e^x)", Float, nullptr, nullptr)                         \
  X(HardSigmoid, "clamp(alpha * x + beta, 0, 1)", Float, "alpha", "beta")      \
  X(LeakyRelu, "x < 0 ? alpha * x : x", Float, "alpha", nullptr)               \
  X(Elu, "x < 0 ? alpha * (e^x - 1) : x", Float, "alpha", nullptr)             \
  X(Gelu, "Gaussian error linear unit (attr approximate)", Float, nullptr,     \
    nullptr)                                                                   \
  X(IsNaN, "x != x -> bool", IsFloat, nullptr, nullptr)                        \
  X(Not, "logical not of bools", Bool, nullptr, nullptr)

enum class UnaryOp {
#define TPC_UNARY_ENUM(NAME, ...) NAME,
  TPC_UNARY_KERNELS(TPC_UNARY_ENUM)
#undef TPC_UNARY_ENUM
  /// Gelu with approximate = "tanh": a params value, not a kernel name.
  GeluTanh,
};

/// One row of TPC_UNARY_KERNELS.
struct UnaryKernelInfo {
  const char *name;
  const char *summary;
  UnaryOp op;
  UnaryDomain domain;
  const char *alphaAttr;
  const char *betaAttr;
};

inline constexpr UnaryKernelInfo kUnaryKernels[] = {
#define TPC_UNARY_INFO(NAME, SUMMARY, DOMAIN, A, B)                            \
  {#NAME, SUMMARY, UnaryOp::NAME, UnaryDomain::DOMAIN, A, B},
    TPC_UNARY_KERNELS(TPC_UNARY_INFO)
#undef TPC_UNARY_INFO
};

struct UnaryParams {
  UnaryOp op = UnaryOp::Neg;
  /// Input dtype; also the output's except for IsNaN (bool).
  DType dtype = DType::F32;
  int64_t numel = 0;
  double alpha = 0;
  double beta = 0;
};

/// Checks one input and one output of `info`'s domain and the same shape,
/// and binds the attributes (each one the kernel reads must be present).
Status makeUnaryParams(const UnaryKernelInfo &info,
                       const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       UnaryParams &p);

/// `op` of a floating-point value (float or double).
template <class C>
TPC_HOST_DEVICE C unaryFloat(UnaryOp op, C x, C alpha, C beta) {
  switch (op) {
  case UnaryOp::Sqrt:
    return sqrt(x);
  case UnaryOp::Reciprocal:
    return C(1) / x;
  case UnaryOp::Neg:
    return -x;
  case UnaryOp::Abs:
    return fabs(x);
  case UnaryOp::Exp:
    return exp(x);
  case UnaryOp::Log:
    return log(x);
  case UnaryOp::Erf:
    return erf(x);
  case UnaryOp::Tanh:
    return tanh(x);
  case UnaryOp::Sigmoid:
    // Never exponentiate a positive number, so that neither branch
    // overflows.
    if (x >= 0)
      return C(1) / (C(1) + exp(-x));
    else {
      const C e = exp(x);
      return e / (C(1) + e);
    }
  case UnaryOp::Relu:
    // x < 0 rather than max(x, 0) so that NaN passes through.
    return x < 0 ? C(0) : x;
  case UnaryOp::Cos:
    return cos(x);
  case UnaryOp::Sin:
    return sin(x);
  case UnaryOp::Tan:
    return tan(x);
  case UnaryOp::Asin:
    return asin(x);
  case UnaryOp::Acos:
    return acos(x);
  case UnaryOp::Atan:
    return atan(x);
  case UnaryOp::Sinh:
    return sinh(x);
  case UnaryOp::Cosh:
    return cosh(x);
  case UnaryOp::Asinh:
    return asinh(x);
  case UnaryOp::Acosh:
    return acosh(x);
  case UnaryOp::Atanh:
    return atanh(x);
  case UnaryOp::Round:
    // rint rounds in the default mode: to nearest, ties to even.
    return rint(x);
  case UnaryOp::Floor:
    return floor(x);
  case UnaryOp::Ceil:
    return ceil(x);
  case UnaryOp::Sign:
    return isnan(x) ? x : C((x > C(0)) - (x < C(0)));
  case UnaryOp::Softplus:
    // log(1 + e^x) = max(x, 0) + log1p(e^-|x|), stable for large |x|.
    return (x > 0 ? x : C(0)) + log1p(exp(-fabs(x)));
  case UnaryOp::HardSigmoid: {
    const C v = alpha * x + beta;
    return v < 0 ? C(0) : (v > 1 ? C(1) : v);
  }
  case UnaryOp::LeakyRelu:
    return x < 0 ? alpha * x : x;
  case UnaryOp::Elu:
    return x < 0 ? alpha * expm1(x) : x;
  case UnaryOp::Gelu:
    return C(0.5) * x * (C(1) + erf(x * C(0.70710678118654752440)));
  case UnaryOp::GeluTanh: {
    const C inner = C(0.79788456080286535588) * (x + C(0.044715) * x * x * x);
    return C(0.5) * x * (C(1) + tanh(inner));
  }
  default:
    return x;
  }
}

/// `op` of an integer, for the ops of the Signed and Numeric domains. Negation
/// goes through unsigned so that -MIN wraps instead of being undefined.
template <class C> TPC_HOST_DEVICE C unaryInt(UnaryOp op, C x) {
  using U = std::make_unsigned_t<C>;
  const C negated = static_cast<C>(U(0) - static_cast<U>(x));
  bool negative = false;
  if constexpr (std::is_signed_v<C>)
    negative = x < C(0);
  switch (op) {
  case UnaryOp::Neg:
    return negated;
  case UnaryOp::Abs:
    return negative ? negated : x;
  case UnaryOp::Relu:
    return negative ? C(0) : x;
  case UnaryOp::Sign:
    return static_cast<C>(int(x > C(0)) - int(negative));
  default:
    return x;
  }
}

} // namespace tpc

#endif // TPC_KERNELS_UNARY_H
