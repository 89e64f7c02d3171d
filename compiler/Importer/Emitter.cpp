//===- Emitter.cpp - Straight-line onnx op building for importers ---------===//
#include "compiler/Importer/Emitter.h"

using namespace mlir;

namespace tpc {
using namespace onnx;

bool Emitter::ok(std::initializer_list<Value> vs) {
  for (Value v : vs)
    if (!v)
      failed = true;
  return !failed;
}

Value Emitter::first(FailureOr<SmallVector<Value>> r) {
  if (::mlir::failed(r) || r->empty()) {
    failed = true;
    return Value();
  }
  return (*r)[0];
}

Value Emitter::where(Value cond, Value x, Value y) {
  if (!ok({cond, x, y}))
    return Value();
  return first(c.createInferred<WhereOp>({cond, x, y}));
}

/// An op whose result is `v` with another shape (Reshape, Expand); `v`
/// itself when the shape is already that.
static Value reshaped(Emitter &e, StringRef opName, Value v,
                      ArrayRef<int64_t> shape) {
  if (!e.ok({v}))
    return Value();
  auto t = llvm::cast<RankedTensorType>(v.getType());
  if (t.getShape() == shape)
    return v;
  return e.c.create(opName, RankedTensorType::get(shape, t.getElementType()),
                    v)[0];
}

Value Emitter::reshape(Value v, ArrayRef<int64_t> shape) {
  return reshaped(*this, ReshapeOp::getOperationName(), v, shape);
}

Value Emitter::expand(Value v, ArrayRef<int64_t> shape) {
  return reshaped(*this, ExpandOp::getOperationName(), v, shape);
}

Value Emitter::transpose(Value v, ArrayRef<int64_t> perm) {
  if (!ok({v}))
    return Value();
  return first(c.createInferred<TransposeOp>(
      v, {c.named("perm", c.b.getDenseI64ArrayAttr(perm))}));
}

Value Emitter::slice(Value v, int64_t axis, int64_t start, int64_t end,
                     int64_t step) {
  if (!ok({v}))
    return Value();
  return first(c.createInferred<SliceOp>(
      v, {c.named("starts", c.b.getDenseI64ArrayAttr({start})),
          c.named("ends", c.b.getDenseI64ArrayAttr({end})),
          c.named("axes", c.b.getDenseI64ArrayAttr({axis})),
          c.named("steps", c.b.getDenseI64ArrayAttr({step}))}));
}

Value Emitter::concat(ArrayRef<Value> vs, int64_t axis) {
  for (Value v : vs)
    if (!ok({v}))
      return Value();
  return first(c.createInferred<ConcatOp>(
      vs, {c.named("axis", c.b.getI64IntegerAttr(axis))}));
}

Value Emitter::gather(Value table, Value indices, int64_t axis) {
  if (!ok({table, indices}))
    return Value();
  return first(c.createInferred<GatherOp>(
      {table, indices}, {c.named("axis", c.b.getI64IntegerAttr(axis))}));
}

Value Emitter::reduce(StringRef opName, Value v, ArrayRef<int64_t> axes) {
  if (!ok({v}))
    return Value();
  auto t = llvm::cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(t.getShape());
  for (int64_t a : axes)
    shape[a < 0 ? a + t.getRank() : a] = 1;
  return c.create(opName, RankedTensorType::get(shape, t.getElementType()), v,
                  {c.named("axes", c.b.getDenseI64ArrayAttr(axes)),
                   c.named("keepdims", c.b.getI64IntegerAttr(1)),
                   c.named("noop_with_empty_axes",
                           c.b.getI64IntegerAttr(0))})[0];
}

Value Emitter::reduceMean(Value v, ArrayRef<int64_t> axes) {
  return reduce(ReduceMeanOp::getOperationName(), v, axes);
}

Value Emitter::reduceMax(Value v, ArrayRef<int64_t> axes) {
  return reduce(ReduceMaxOp::getOperationName(), v, axes);
}

Value Emitter::softmax(Value v, int64_t axis) {
  if (!ok({v}))
    return Value();
  return c.create(SoftmaxOp::getOperationName(), v.getType(), v,
                  {c.named("axis", c.b.getI64IntegerAttr(axis))})[0];
}

Value Emitter::cast(Value v, Type elem) {
  if (!ok({v}))
    return Value();
  auto t = llvm::cast<RankedTensorType>(v.getType());
  if (t.getElementType() == elem)
    return v;
  std::optional<int64_t> to = onnxTypeNumber(elem);
  if (!to) {
    c.error() << "cannot cast to " << elem;
    failed = true;
    return Value();
  }
  return c.create(CastOp::getOperationName(),
                  RankedTensorType::get(t.getShape(), elem), v,
                  {c.named("to", c.b.getI64IntegerAttr(*to))})[0];
}

Value Emitter::scalar(Type elem, double value) {
  auto t = RankedTensorType::get({}, elem);
  Attribute a = isa<FloatType>(elem)
                    ? Attribute(c.b.getFloatAttr(elem, value))
                    : Attribute(c.b.getIntegerAttr(elem, int64_t(value)));
  return c.b.create<ConstantOp>(c.loc, t, DenseElementsAttr::get(t, a));
}

Value Emitter::constant(DenseElementsAttr value) {
  return c.b.create<ConstantOp>(c.loc, value.getType(), value);
}

Value Emitter::range(ArrayRef<int64_t> shape, Type elem, int64_t start) {
  auto t = RankedTensorType::get(shape, elem);
  SmallVector<APInt> values;
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    values.push_back(APInt(elem.getIntOrFloatBitWidth(), start + i, true));
  return constant(DenseElementsAttr::get(t, values));
}

Value Emitter::swish(Value v, float alpha) {
  if (!ok({v}))
    return Value();
  Value scaled =
      alpha == 1.0f ? v : binary<MulOp>(v, scalar(elementTypeOf(v), alpha));
  return binary<MulOp>(v, unary<SigmoidOp>(scaled));
}

Value Emitter::gelu(Value v, StringRef approximate) {
  if (!ok({v}))
    return Value();
  return c.create(GeluOp::getOperationName(), v.getType(), v,
                  {c.named("approximate", c.b.getStringAttr(approximate))})[0];
}

Value Emitter::layerNorm(Value x, Value gamma, Value beta, float epsilon) {
  if (!ok({x, gamma}))
    return Value();
  SmallVector<Value> operands{x, gamma};
  if (beta)
    operands.push_back(beta);
  return first(c.createInferred<LayerNormalizationOp>(
      operands, {c.named("axis", c.b.getI64IntegerAttr(-1)),
                 c.named("epsilon", c.b.getF32FloatAttr(epsilon))}));
}

namespace {
/// Axes `axis` (negative counts from the end) to the last of `x`: what
/// layer and RMS norms normalise over.
SmallVector<int64_t> axesFrom(Value x, int64_t axis) {
  auto t = llvm::cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> axes;
  for (int64_t a = axis < 0 ? axis + t.getRank() : axis; a < t.getRank(); ++a)
    axes.push_back(a);
  return axes;
}
} // namespace

Value Emitter::layerNormStats(Value x, int64_t axis, float epsilon,
                              Value &invStd) {
  if (!ok({x}))
    return Value();
  Type f32 = c.b.getF32Type();
  SmallVector<int64_t> axes = axesFrom(x, axis);
  Value xf = cast(x, f32);
  Value mean = reduceMean(xf, axes);
  Value d = binary<SubOp>(xf, mean);
  Value var = reduceMean(binary<MulOp>(d, d), axes);
  invStd = unary<ReciprocalOp>(
      unary<SqrtOp>(binary<AddOp>(var, scalar(f32, epsilon))));
  return mean;
}

Value Emitter::rmsNorm(Value x, Value gamma, float epsilon, int64_t axis,
                       Value *invRms) {
  if (!ok({x, gamma}))
    return Value();
  auto t = llvm::cast<RankedTensorType>(x.getType());
  Type f32 = c.b.getF32Type();
  SmallVector<int64_t> axes = axesFrom(x, axis);
  Value xf = cast(x, f32);
  Value ms = reduceMean(binary<MulOp>(xf, xf), axes);
  Value inv =
      unary<ReciprocalOp>(unary<SqrtOp>(binary<AddOp>(ms, scalar(f32, epsilon))));
  if (invRms)
    *invRms = inv;
  return binary<MulOp>(cast(binary<MulOp>(xf, inv), t.getElementType()), gamma);
}

LogicalResult Emitter::finish(ArrayRef<Value> values,
                              SmallVectorImpl<Value> &results) {
  if (failed)
    return failure();
  results.append(values.begin(), values.end());
  return success();
}

} // namespace tpc
