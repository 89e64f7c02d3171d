//===- ActivationImporters.cpp - Ops defined by other elementwise ops -----===//
//
// ONNX ops whose definition is a short expression of ops tpc already has:
// Clip, the activations Softsign, Selu, Celu, ThresholdedRelu, HardSwish,
// Mish, Swish and Shrink, and IsInf. Each is imported as that expression
// (the function body ONNX gives it, or an equal one), so sharding, fusion
// and both backends see ops they know; none is a kernel of its own.
//
//===----------------------------------------------------------------------===//
#include "compiler/Importer/Emitter.h"
#include "compiler/Importer/NodeImporter.h"

#include <cfloat>
#include <cmath>

using namespace mlir;

namespace tpc {
using namespace onnx;

namespace {

/// Clip: Min(Max(x, min), max), with min and max from the attributes
/// (Clip-6) or the optional scalar inputs (Clip-11 and later). When min >
/// max every element becomes max, as ONNX defines; NaN stays NaN.
FailureOr<Value> clip(Emitter &e, Value x) {
  NodeContext &c = e.c;
  Type elem = elementTypeOf(x);
  Value lo, hi;
  if (c.opset < 11) {
    if (!isa<FloatType>(elem))
      return c.error() << "Clip before opset 12 takes floating-point tensors";
    if (c.attr("min"))
      lo = e.scalar(elem, c.attrFloat("min", -FLT_MAX));
    if (c.attr("max"))
      hi = e.scalar(elem, c.attrFloat("max", FLT_MAX));
  } else {
    for (size_t i : {1, 2}) {
      Value bound = c.input(i);
      if (!bound)
        continue;
      auto t = c.inputType(i);
      if (t.getNumElements() != 1 || t.getRank() > 1)
        return c.error() << (i == 1 ? "min" : "max")
                         << " must be a scalar, not " << t;
      if (t.getElementType() != elem)
        return c.error() << (i == 1 ? "min" : "max") << " has type "
                         << t.getElementType() << ", the input " << elem;
      // A one-element 1-D bound broadcasts like a scalar.
      (i == 1 ? lo : hi) = t.getRank() ? e.reshape(bound, {}) : bound;
    }
  }
  if (lo)
    x = e.inferred<MaxOp>({x, lo});
  if (hi)
    x = e.inferred<MinOp>({x, hi});
  return x;
}

/// Softsign: x / (1 + |x|).
FailureOr<Value> softsign(Emitter &e, Value x) {
  Value den = e.binary<AddOp>(e.scalar(elementTypeOf(x), 1), e.unary<AbsOp>(x));
  return e.binary<DivOp>(x, den);
}

/// An Elu of `x` with `alpha`.
Value elu(Emitter &e, Value x, float alpha) {
  if (!e.ok({x}))
    return Value();
  return e.c.create(EluOp::getOperationName(), x.getType(), x,
                    {e.c.named("alpha", e.c.b.getF32FloatAttr(alpha))})[0];
}

/// Selu: gamma * (x > 0 ? x : alpha * (e^x - 1)) = gamma * Elu(x, alpha).
FailureOr<Value> selu(Emitter &e, Value x) {
  float alpha = e.c.attrFloat("alpha", 1.67326319217681884765625f);
  float gamma = e.c.attrFloat("gamma", 1.05070102214813232421875f);
  return e.binary<MulOp>(elu(e, x, alpha), e.scalar(elementTypeOf(x), gamma));
}

/// Celu: max(0, x) + min(0, alpha * (e^(x / alpha) - 1)); the second term
/// is alpha * Elu(x / alpha, 1) for x < 0 and not above 0 otherwise.
FailureOr<Value> celu(Emitter &e, Value x) {
  Type elem = elementTypeOf(x);
  float alpha = e.c.attrFloat("alpha", 1.0f);
  if (alpha == 0)
    return e.c.error() << "alpha must not be 0";
  Value a = e.scalar(elem, alpha), zero = e.scalar(elem, 0);
  Value neg = e.binary<MulOp>(a, elu(e, e.binary<DivOp>(x, a), 1.0f));
  return e.binary<AddOp>(e.inferred<MaxOp>({zero, x}),
                         e.inferred<MinOp>({zero, neg}));
}

/// ThresholdedRelu: x > alpha ? x : 0.
FailureOr<Value> thresholdedRelu(Emitter &e, Value x) {
  Type elem = elementTypeOf(x);
  Value keep =
      e.binary<GreaterOp>(x, e.scalar(elem, e.c.attrFloat("alpha", 1)));
  return e.where(keep, x, e.scalar(elem, 0));
}

/// HardSwish: x * HardSigmoid(x) with alpha 1/6 and beta 1/2.
FailureOr<Value> hardSwish(Emitter &e, Value x) {
  NodeContext &c = e.c;
  Value gate = c.create(HardSigmoidOp::getOperationName(), x.getType(), x,
                        {c.named("alpha", c.b.getF32FloatAttr(1.0f / 6)),
                         c.named("beta", c.b.getF32FloatAttr(0.5f))})[0];
  return e.binary<MulOp>(x, gate);
}

/// Mish: x * tanh(softplus(x)).
FailureOr<Value> mish(Emitter &e, Value x) {
  return e.binary<MulOp>(x, e.unary<TanhOp>(e.unary<SoftplusOp>(x)));
}

/// Swish: x * sigmoid(alpha * x).
FailureOr<Value> swish(Emitter &e, Value x) {
  return e.swish(x, e.c.attrFloat("alpha", 1.0f));
}

/// Shrink: x < -lambd ? x + bias : (x > lambd ? x - bias : 0).
FailureOr<Value> shrink(Emitter &e, Value x) {
  NodeContext &c = e.c;
  Type elem = elementTypeOf(x);
  float lambd = c.attrFloat("lambd", 0.5f), bias = c.attrFloat("bias", 0.0f);
  if (!isa<FloatType>(elem) &&
      (lambd != std::trunc(lambd) || bias != std::trunc(bias)))
    return c.error() << "lambd " << lambd << " and bias " << bias
                     << " must be whole numbers on " << elem << " tensors";
  Value lo = e.binary<LessOp>(x, e.scalar(elem, -lambd));
  Value hi = e.binary<GreaterOp>(x, e.scalar(elem, lambd));
  Value b = e.scalar(elem, bias);
  return e.where(lo, e.binary<AddOp>(x, b),
                 e.where(hi, e.binary<SubOp>(x, b), e.scalar(elem, 0)));
}

/// IsInf: x == +inf (detect_positive) or x == -inf (detect_negative).
FailureOr<Value> isInf(Emitter &e, Value x) {
  Type elem = elementTypeOf(x);
  bool pos = e.c.attrInt("detect_positive", 1) != 0;
  bool neg = e.c.attrInt("detect_negative", 1) != 0;
  if (pos && neg)
    return e.binary<EqualOp>(e.unary<AbsOp>(x), e.scalar(elem, INFINITY));
  if (pos || neg)
    return e.binary<EqualOp>(x, e.scalar(elem, pos ? INFINITY : -INFINITY));
  auto boolType =
      RankedTensorType::get(tensorTypeOf(x).getShape(), e.c.b.getI1Type());
  return e.constant(DenseElementsAttr::get(boolType, false));
}

} // namespace

void addActivationImporters(std::vector<OpTableEntry> &t) {
  addVersions(t, "Clip", {6, 11, 12, 13},
              importDefinition<clip, InputCheck::Present>,
              "onnx.Max, onnx.Min");
  addVersions(t, "Softsign", {1, 22}, importDefinition<softsign>,
              "onnx.Abs, onnx.Add, onnx.Div");
  addVersions(t, "Selu", {6, 22}, importDefinition<selu>, "onnx.Elu, onnx.Mul");
  addVersions(t, "Celu", {12, 28}, importDefinition<celu>,
              "onnx.Elu, onnx.Max, onnx.Min");
  addVersions(t, "ThresholdedRelu", {10, 22}, importDefinition<thresholdedRelu>,
              "onnx.Greater, onnx.Where");
  addVersions(t, "HardSwish", {14, 22}, importDefinition<hardSwish>,
              "onnx.HardSigmoid, onnx.Mul");
  addVersions(t, "Mish", {18, 22}, importDefinition<mish>,
              "onnx.Softplus, onnx.Tanh, onnx.Mul");
  addVersions(t, "Swish", {24}, importDefinition<swish>,
              "onnx.Sigmoid, onnx.Mul");
  addVersions(t, "Shrink", {9}, importDefinition<shrink, InputCheck::Present>,
              "onnx.Less, onnx.Greater, onnx.Where");
  addVersions(t, "IsInf", {10, 20}, importDefinition<isInf>,
              "onnx.Abs, onnx.Equal");
}

} // namespace tpc
