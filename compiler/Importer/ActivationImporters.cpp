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

using Results = SmallVectorImpl<Value>;

/// Clip: Min(Max(x, min), max), with min and max from the attributes
/// (Clip-6) or the optional scalar inputs (Clip-11 and later). When min >
/// max every element becomes max, as ONNX defines; NaN stays NaN.
LogicalResult importClip(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  Emitter e(c);
  Value x = c.input(0);
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
  return e.finish({x}, results);
}

/// Softsign: x / (1 + |x|).
LogicalResult importSoftsign(NodeContext &c, Results &results) {
  if (failed(c.requireFloatInput()))
    return failure();
  Emitter e(c);
  Value x = c.input(0);
  Value den = e.binary<AddOp>(e.scalar(elementTypeOf(x), 1), e.unary<AbsOp>(x));
  return e.finish({e.binary<DivOp>(x, den)}, results);
}

/// An Elu of `x` with `alpha`.
Value elu(Emitter &e, Value x, float alpha) {
  if (!e.ok({x}))
    return Value();
  return e.c.create(EluOp::getOperationName(), x.getType(), x,
                    {e.c.named("alpha", e.c.b.getF32FloatAttr(alpha))})[0];
}

/// Selu: gamma * (x > 0 ? x : alpha * (e^x - 1)) = gamma * Elu(x, alpha).
LogicalResult importSelu(NodeContext &c, Results &results) {
  if (failed(c.requireFloatInput()))
    return failure();
  Emitter e(c);
  Value x = c.input(0);
  float alpha = c.attrFloat("alpha", 1.67326319217681884765625f);
  float gamma = c.attrFloat("gamma", 1.05070102214813232421875f);
  Value y = e.binary<MulOp>(elu(e, x, alpha), e.scalar(elementTypeOf(x), gamma));
  return e.finish({y}, results);
}

/// Celu: max(0, x) + min(0, alpha * (e^(x / alpha) - 1)); the second term
/// is alpha * Elu(x / alpha, 1) for x < 0 and not above 0 otherwise.
LogicalResult importCelu(NodeContext &c, Results &results) {
  if (failed(c.requireFloatInput()))
    return failure();
  Emitter e(c);
  Value x = c.input(0);
  Type elem = elementTypeOf(x);
  float alpha = c.attrFloat("alpha", 1.0f);
  if (alpha == 0)
    return c.error() << "alpha must not be 0";
  Value a = e.scalar(elem, alpha), zero = e.scalar(elem, 0);
  Value neg = e.binary<MulOp>(a, elu(e, e.binary<DivOp>(x, a), 1.0f));
  Value y = e.binary<AddOp>(e.inferred<MaxOp>({zero, x}),
                            e.inferred<MinOp>({zero, neg}));
  return e.finish({y}, results);
}

/// ThresholdedRelu: x > alpha ? x : 0.
LogicalResult importThresholdedRelu(NodeContext &c, Results &results) {
  if (failed(c.requireFloatInput()))
    return failure();
  Emitter e(c);
  Value x = c.input(0);
  Type elem = elementTypeOf(x);
  Value keep = e.binary<GreaterOp>(x, e.scalar(elem, c.attrFloat("alpha", 1)));
  return e.finish({e.where(keep, x, e.scalar(elem, 0))}, results);
}

/// HardSwish: x * HardSigmoid(x) with alpha 1/6 and beta 1/2.
LogicalResult importHardSwish(NodeContext &c, Results &results) {
  if (failed(c.requireFloatInput()))
    return failure();
  Emitter e(c);
  Value x = c.input(0);
  Value gate = c.create(HardSigmoidOp::getOperationName(), x.getType(), x,
                        {c.named("alpha", c.b.getF32FloatAttr(1.0f / 6)),
                         c.named("beta", c.b.getF32FloatAttr(0.5f))})[0];
  return e.finish({e.binary<MulOp>(x, gate)}, results);
}

/// Mish: x * tanh(softplus(x)).
LogicalResult importMish(NodeContext &c, Results &results) {
  if (failed(c.requireFloatInput()))
    return failure();
  Emitter e(c);
  Value x = c.input(0);
  Value y = e.binary<MulOp>(x, e.unary<TanhOp>(e.unary<SoftplusOp>(x)));
  return e.finish({y}, results);
}

/// Swish: x * sigmoid(alpha * x).
LogicalResult importSwish(NodeContext &c, Results &results) {
  if (failed(c.requireFloatInput()))
    return failure();
  Emitter e(c);
  Value x = c.input(0);
  float alpha = c.attrFloat("alpha", 1.0f);
  Value ax = alpha == 1.0f
                 ? x
                 : e.binary<MulOp>(x, e.scalar(elementTypeOf(x), alpha));
  return e.finish({e.binary<MulOp>(x, e.unary<SigmoidOp>(ax))}, results);
}

/// Shrink: x < -lambd ? x + bias : (x > lambd ? x - bias : 0).
LogicalResult importShrink(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  Emitter e(c);
  Value x = c.input(0);
  Type elem = elementTypeOf(x);
  float lambd = c.attrFloat("lambd", 0.5f), bias = c.attrFloat("bias", 0.0f);
  if (!isa<FloatType>(elem) &&
      (lambd != std::trunc(lambd) || bias != std::trunc(bias)))
    return c.error() << "lambd " << lambd << " and bias " << bias
                     << " must be whole numbers on " << elem << " tensors";
  Value lo = e.binary<LessOp>(x, e.scalar(elem, -lambd));
  Value hi = e.binary<GreaterOp>(x, e.scalar(elem, lambd));
  Value b = e.scalar(elem, bias);
  Value y = e.where(lo, e.binary<AddOp>(x, b),
                    e.where(hi, e.binary<SubOp>(x, b), e.scalar(elem, 0)));
  return e.finish({y}, results);
}

/// IsInf: x == +inf (detect_positive) or x == -inf (detect_negative).
LogicalResult importIsInf(NodeContext &c, Results &results) {
  if (failed(c.requireFloatInput()))
    return failure();
  Emitter e(c);
  Value x = c.input(0);
  Type elem = elementTypeOf(x);
  bool pos = c.attrInt("detect_positive", 1) != 0;
  bool neg = c.attrInt("detect_negative", 1) != 0;
  auto boolType = RankedTensorType::get(c.inputType(0).getShape(),
                                        c.b.getI1Type());
  Value y;
  if (pos && neg)
    y = e.binary<EqualOp>(e.unary<AbsOp>(x), e.scalar(elem, INFINITY));
  else if (pos || neg)
    y = e.binary<EqualOp>(x, e.scalar(elem, pos ? INFINITY : -INFINITY));
  else
    y = e.constant(DenseElementsAttr::get(boolType, false));
  return e.finish({y}, results);
}

} // namespace

void addActivationImporters(std::vector<OpTableEntry> &t) {
  const char *minMax = "onnx.Max, onnx.Min";
  for (int v : {6, 11, 12, 13})
    t.push_back({"Clip", v, importClip, minMax});
  for (int v : {1, 22})
    t.push_back({"Softsign", v, importSoftsign, "onnx.Abs, onnx.Add, onnx.Div"});
  for (int v : {6, 22})
    t.push_back({"Selu", v, importSelu, "onnx.Elu, onnx.Mul"});
  for (int v : {12, 28})
    t.push_back({"Celu", v, importCelu, "onnx.Elu, onnx.Max, onnx.Min"});
  for (int v : {10, 22})
    t.push_back({"ThresholdedRelu", v, importThresholdedRelu,
                 "onnx.Greater, onnx.Where"});
  for (int v : {14, 22})
    t.push_back({"HardSwish", v, importHardSwish, "onnx.HardSigmoid, onnx.Mul"});
  for (int v : {18, 22})
    t.push_back({"Mish", v, importMish, "onnx.Softplus, onnx.Tanh, onnx.Mul"});
  t.push_back({"Swish", 24, importSwish, "onnx.Sigmoid, onnx.Mul"});
  t.push_back({"Shrink", 9, importShrink, "onnx.Less, onnx.Greater, onnx.Where"});
  for (int v : {10, 20})
    t.push_back({"IsInf", v, importIsInf, "onnx.Abs, onnx.Equal"});
}

} // namespace tpc
