//===- Unary.cpp - Elementwise unary kernels and their adapters -----------===//
#include "kernels/cpu/Unary.h"
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace tpc::cpu {
namespace {

template <class T, class Fn>
void mapLoop(const void *in, void *out, int64_t n, Fn fn) {
  const T *x = static_cast<const T *>(in);
  T *y = static_cast<T *>(out);
  for (int64_t i = 0; i < n; ++i)
    y[i] = fn(x[i]);
}

/// x < 0, without a comparison that is always false for unsigned types.
template <class T> bool isNegative(T x) {
  if constexpr (std::is_unsigned_v<T>)
    return false;
  else
    return x < 0;
}

/// Ops defined for integers as well as floats.
template <class T>
bool intCapableOp(const UnaryParams &p, const void *in, void *out) {
  const int64_t n = p.numel;
  switch (p.op) {
  case UnaryOp::Neg:
    if constexpr (std::is_integral_v<T>)
      // Through unsigned so that -MIN wraps instead of being undefined.
      mapLoop<T>(in, out, n, [](T x) {
        return static_cast<T>(std::make_unsigned_t<T>(0) -
                              static_cast<std::make_unsigned_t<T>>(x));
      });
    else
      mapLoop<T>(in, out, n, [](T x) { return -x; });
    return true;
  case UnaryOp::Abs:
    mapLoop<T>(in, out, n, [](T x) {
      if constexpr (std::is_integral_v<T>)
        return isNegative(x)
                   ? static_cast<T>(std::make_unsigned_t<T>(0) -
                                    static_cast<std::make_unsigned_t<T>>(x))
                   : x;
      else
        return std::fabs(x);
    });
    return true;
  case UnaryOp::Relu:
    // x < 0 rather than max(x, 0) so that NaN passes through.
    mapLoop<T>(in, out, n, [](T x) { return isNegative(x) ? T(0) : x; });
    return true;
  case UnaryOp::Sign:
    mapLoop<T>(in, out, n, [](T x) {
      if constexpr (!std::is_integral_v<T>)
        if (std::isnan(x))
          return x;
      return static_cast<T>((x > T(0)) - isNegative(x));
    });
    return true;
  default:
    return false;
  }
}

template <class T>
void floatOp(const UnaryParams &p, const void *in, void *out) {
  const int64_t n = p.numel;
  if constexpr (std::is_same_v<T, float>) {
    // The activations transformers spend time in, eight lanes at a time.
    const float *x = static_cast<const float *>(in);
    float *y = static_cast<float *>(out);
    switch (p.op) {
    case UnaryOp::Exp:
      return vecExp(x, y, n);
    case UnaryOp::Erf:
      return vecErf(x, y, n);
    case UnaryOp::Tanh:
      return vecTanh(x, y, n);
    case UnaryOp::Sigmoid:
      return vecSigmoid(x, y, n);
    case UnaryOp::Gelu:
      return vecGelu(x, y, n);
    case UnaryOp::GeluTanh:
      return vecGeluTanh(x, y, n);
    default:
      break;
    }
  }
  const T alpha = static_cast<T>(p.alpha);
  const T beta = static_cast<T>(p.beta);
  switch (p.op) {
  case UnaryOp::Sqrt:
    return mapLoop<T>(in, out, n, [](T x) { return std::sqrt(x); });
  case UnaryOp::Reciprocal:
    return mapLoop<T>(in, out, n, [](T x) { return T(1) / x; });
  case UnaryOp::Exp:
    return mapLoop<T>(in, out, n, [](T x) { return std::exp(x); });
  case UnaryOp::Log:
    return mapLoop<T>(in, out, n, [](T x) { return std::log(x); });
  case UnaryOp::Erf:
    return mapLoop<T>(in, out, n, [](T x) { return std::erf(x); });
  case UnaryOp::Tanh:
    return mapLoop<T>(in, out, n, [](T x) { return std::tanh(x); });
  case UnaryOp::Sigmoid:
    // Never exponentiate a positive number, so that neither branch
    // overflows.
    return mapLoop<T>(in, out, n, [](T x) {
      if (x >= 0)
        return T(1) / (T(1) + std::exp(-x));
      T e = std::exp(x);
      return e / (T(1) + e);
    });
  case UnaryOp::Cos:
    return mapLoop<T>(in, out, n, [](T x) { return std::cos(x); });
  case UnaryOp::Sin:
    return mapLoop<T>(in, out, n, [](T x) { return std::sin(x); });
  case UnaryOp::Floor:
    return mapLoop<T>(in, out, n, [](T x) { return std::floor(x); });
  case UnaryOp::Ceil:
    return mapLoop<T>(in, out, n, [](T x) { return std::ceil(x); });
  case UnaryOp::Softplus:
    // log(1 + e^x) = max(x, 0) + log1p(e^-|x|), stable for large |x|.
    return mapLoop<T>(in, out, n, [](T x) {
      return (x > 0 ? x : T(0)) + std::log1p(std::exp(-std::fabs(x)));
    });
  case UnaryOp::HardSigmoid:
    return mapLoop<T>(in, out, n, [=](T x) {
      T v = alpha * x + beta;
      return v < 0 ? T(0) : (v > 1 ? T(1) : v);
    });
  case UnaryOp::LeakyRelu:
    return mapLoop<T>(in, out, n, [=](T x) { return x < 0 ? alpha * x : x; });
  case UnaryOp::Elu:
    return mapLoop<T>(in, out, n,
                      [=](T x) { return x < 0 ? alpha * std::expm1(x) : x; });
  case UnaryOp::Gelu:
    return mapLoop<T>(in, out, n, [](T x) {
      const T invSqrt2 = T(0.70710678118654752440);
      return T(0.5) * x * (T(1) + std::erf(x * invSqrt2));
    });
  case UnaryOp::GeluTanh:
    return mapLoop<T>(in, out, n, [](T x) {
      const T sqrt2OverPi = T(0.79788456080286535588);
      T inner = sqrt2OverPi * (x + T(0.044715) * x * x * x);
      return T(0.5) * x * (T(1) + std::tanh(inner));
    });
  case UnaryOp::IsNaN: {
    const T *x = static_cast<const T *>(in);
    uint8_t *y = static_cast<uint8_t *>(out);
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::isnan(x[i]) ? 1 : 0;
    return;
  }
  default:
    intCapableOp<T>(p, in, out);
    return;
  }
}

/// A 16-bit float op: blocks of the input are widened to float, computed
/// as float and rounded back (to nearest even).
template <class S, float (*Load)(S), S (*Store)(float)>
void float16Op(const UnaryParams &p, const void *in, void *out) {
  const S *x = static_cast<const S *>(in);
  if (p.op == UnaryOp::IsNaN) {
    uint8_t *y = static_cast<uint8_t *>(out);
    for (int64_t i = 0; i < p.numel; ++i)
      y[i] = std::isnan(Load(x[i])) ? 1 : 0;
    return;
  }
  S *y = static_cast<S *>(out);
  constexpr int64_t kBlock = 256;
  float buf[kBlock];
  UnaryParams blockParams = p;
  for (int64_t start = 0; start < p.numel; start += kBlock) {
    int64_t n = std::min(kBlock, p.numel - start);
    for (int64_t i = 0; i < n; ++i)
      buf[i] = Load(x[start + i]);
    blockParams.numel = n;
    floatOp<float>(blockParams, buf, buf);
    for (int64_t i = 0; i < n; ++i)
      y[start + i] = Store(buf[i]);
  }
}

} // namespace

void unaryKernel(const UnaryParams &p, const void *in, void *out) {
  if (p.op == UnaryOp::Not) {
    const uint8_t *x = static_cast<const uint8_t *>(in);
    uint8_t *y = static_cast<uint8_t *>(out);
    for (int64_t i = 0; i < p.numel; ++i)
      y[i] = x[i] ? 0 : 1;
    return;
  }
  switch (p.dtype) {
  case DType::F32:
    return floatOp<float>(p, in, out);
  case DType::F64:
    return floatOp<double>(p, in, out);
  case DType::I64:
    intCapableOp<int64_t>(p, in, out);
    return;
  case DType::I32:
    intCapableOp<int32_t>(p, in, out);
    return;
  case DType::I8:
    intCapableOp<int8_t>(p, in, out);
    return;
  case DType::U8:
    intCapableOp<uint8_t>(p, in, out);
    return;
  case DType::F16:
    return float16Op<Half, halfToFloat, floatToHalf>(p, in, out);
  case DType::BF16:
    return float16Op<BFloat16, bfloat16ToFloat, floatToBFloat16>(p, in, out);
  default:
    return;
  }
}

namespace {

bool takesInts(UnaryOp op) {
  return op == UnaryOp::Neg || op == UnaryOp::Abs || op == UnaryOp::Relu ||
         op == UnaryOp::Sign;
}

template <UnaryOp Op>
Status prepareUnary(const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  UnaryParams p;
  p.op = Op;
  p.dtype = in[0].dtype;
  p.numel = in[0].numel();
  DType outType = in[0].dtype;
  if (Op == UnaryOp::Not)
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", {DType::Bool}));
  else if (Op == UnaryOp::Neg)
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0",
                                   {DType::F32, DType::F64, DType::F16,
                                    DType::BF16, DType::I64, DType::I32,
                                    DType::I8}));
  else if (takesInts(Op))
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0",
                                   {DType::F32, DType::F64, DType::F16,
                                    DType::BF16, DType::I64, DType::I32,
                                    DType::I8, DType::U8}));
  else
    TPC_RETURN_IF_ERROR(checkDType(
        in[0], "input 0", {DType::F32, DType::F64, DType::F16, DType::BF16}));
  if (Op == UnaryOp::IsNaN)
    outType = DType::Bool;
  if (out[0].dtype != outType)
    return Status::error(std::string("output 0 has dtype ") +
                         dtypeName(out[0].dtype) + ", expected " +
                         dtypeName(outType));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));

  switch (Op) {
  case UnaryOp::HardSigmoid:
    p.alpha = attrs.getFloat("alpha", 0.2);
    p.beta = attrs.getFloat("beta", 0.5);
    break;
  case UnaryOp::LeakyRelu:
    p.alpha = attrs.getFloat("alpha", 0.01);
    break;
  case UnaryOp::Elu:
    p.alpha = attrs.getFloat("alpha", 1.0);
    break;
  case UnaryOp::Gelu: {
    std::string approx = attrs.getString("approximate", "none");
    if (approx == "tanh")
      p.op = UnaryOp::GeluTanh;
    else if (approx != "none")
      return Status::error("attribute approximate must be \"none\" or "
                           "\"tanh\", got \"" +
                           approx + "\"");
    break;
  }
  default:
    break;
  }
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &) { unaryKernel(p, i[0], o[0]); });
  return Status::ok();
}

} // namespace

void addUnaryKernels(KernelTable &t) {
  const size_t first = t.size();
  t.push_back({"Sqrt", "square root", prepareUnary<UnaryOp::Sqrt>});
  t.push_back({"Reciprocal", "1 / x", prepareUnary<UnaryOp::Reciprocal>});
  t.push_back({"Neg", "-x (ints wrap)", prepareUnary<UnaryOp::Neg>});
  t.push_back({"Abs", "|x|", prepareUnary<UnaryOp::Abs>});
  t.push_back({"Exp", "e^x", prepareUnary<UnaryOp::Exp>});
  t.push_back({"Log", "natural log", prepareUnary<UnaryOp::Log>});
  t.push_back({"Erf", "error function", prepareUnary<UnaryOp::Erf>});
  t.push_back({"Tanh", "hyperbolic tangent", prepareUnary<UnaryOp::Tanh>});
  t.push_back({"Sigmoid", "1 / (1 + e^-x)", prepareUnary<UnaryOp::Sigmoid>});
  t.push_back({"Relu", "max(x, 0)", prepareUnary<UnaryOp::Relu>});
  t.push_back({"Cos", "cosine", prepareUnary<UnaryOp::Cos>});
  t.push_back({"Sin", "sine", prepareUnary<UnaryOp::Sin>});
  t.push_back({"Floor", "round down", prepareUnary<UnaryOp::Floor>});
  t.push_back({"Ceil", "round up", prepareUnary<UnaryOp::Ceil>});
  t.push_back({"Sign", "-1, 0 or 1", prepareUnary<UnaryOp::Sign>});
  t.push_back({"Softplus", "log(1 + e^x)", prepareUnary<UnaryOp::Softplus>});
  t.push_back({"HardSigmoid", "clamp(alpha * x + beta, 0, 1)",
               prepareUnary<UnaryOp::HardSigmoid>});
  t.push_back(
      {"LeakyRelu", "x < 0 ? alpha * x : x", prepareUnary<UnaryOp::LeakyRelu>});
  t.push_back(
      {"Elu", "x < 0 ? alpha * (e^x - 1) : x", prepareUnary<UnaryOp::Elu>});
  t.push_back({"Gelu", "Gaussian error linear unit (attr approximate)",
               prepareUnary<UnaryOp::Gelu>});
  t.push_back({"IsNaN", "x != x -> bool", prepareUnary<UnaryOp::IsNaN>});
  t.push_back({"Not", "logical not of bools", prepareUnary<UnaryOp::Not>});
  // y[i] = f(x[i]) in one pass: every unary kernel may run in place.
  for (size_t i = first; i < t.size(); ++i)
    t[i].elementwise = true;
}

} // namespace tpc::cpu
