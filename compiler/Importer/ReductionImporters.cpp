//===- ReductionImporters.cpp - Reductions defined by other ops -----------===//
//
// ReduceL1, ReduceLogSum and ReduceLogSumExp are ReduceSum of |x|, the log
// of ReduceSum and the log of ReduceSum of e^x, and are imported so (the
// last shifted by the maximum, so that e^x cannot overflow); Hardmax is the
// one-hot of ArgMax; EyeLike compares row and column index ranges.
// Sharding, fusion and both backends then see ops they know.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "compiler/Importer/Emitter.h"
#include "compiler/Importer/NodeImporter.h"

#include <cmath>

using namespace mlir;

namespace tpc {
using namespace onnx;

namespace {

using Results = SmallVectorImpl<Value>;

/// The reduction OpTy of `v` with the node's axes and flags; `keep` forces
/// keepdims to 1.
template <typename OpTy>
Value reduceOf(Emitter &e, Value v, bool axesFromInput, bool keep = false) {
  if (!e.ok({v}))
    return Value();
  NodeContext &c = e.c;
  FailureOr<SmallVector<NamedAttribute>> attrs = c.reduceAttrs(axesFromInput);
  if (failed(attrs)) {
    e.failed = true;
    return Value();
  }
  if (keep)
    for (NamedAttribute &a : *attrs)
      if (a.getName() == "keepdims")
        a.setValue(c.b.getI64IntegerAttr(1));
  return e.inferred<OpTy>(v, *attrs);
}

/// ReduceL1: ReduceSum(|x|).
template <bool axesFromInput> FailureOr<Value> reduceL1(Emitter &e, Value x) {
  return reduceOf<ReduceSumOp>(e, e.unary<AbsOp>(x), axesFromInput);
}

/// ReduceLogSum: log(ReduceSum(x)).
template <bool axesFromInput>
FailureOr<Value> reduceLogSum(Emitter &e, Value x) {
  return e.unary<LogOp>(reduceOf<ReduceSumOp>(e, x, axesFromInput));
}

/// ReduceLogSumExp: m + log(ReduceSum(e^(x - m))) with m the maximum over
/// the same axes (0 where it is not finite, so that an all -inf row gives
/// -inf rather than NaN).
template <bool axesFromInput>
FailureOr<Value> reduceLogSumExp(Emitter &e, Value x) {
  Type elem = elementTypeOf(x);
  Value m = reduceOf<ReduceMaxOp>(e, x, axesFromInput, /*keep=*/true);
  Value zero = e.scalar(elem, 0);
  Value finite = e.binary<LessOp>(e.unary<AbsOp>(m), e.scalar(elem, INFINITY));
  m = e.where(finite, m, zero);
  Value s = reduceOf<ReduceSumOp>(e, e.unary<ExpOp>(e.binary<SubOp>(x, m)),
                                  axesFromInput);
  if (!e.ok({s}))
    return failure();
  // m has the axes kept; the sum has them as the node asks.
  auto sType = cast<RankedTensorType>(s.getType());
  if (cast<RankedTensorType>(m.getType()).getShape() != sType.getShape())
    m = e.reshape(m, sType.getShape());
  return e.binary<AddOp>(e.unary<LogOp>(s), m);
}

/// Hardmax: 1 where ArgMax along the axis points, else 0. Before opset 13
/// the input is seen as 2-D, [prod(dims before axis), prod(the rest)].
FailureOr<Value> hardmax(Emitter &e, Value x) {
  NodeContext &c = e.c;
  RankedTensorType type = tensorTypeOf(x);
  int64_t rank = type.getRank();
  bool coerced = c.opset < 13;
  FailureOr<int64_t> axis =
      normalizeAxis(c.attrInt("axis", coerced ? 1 : -1), rank);
  if (failed(axis))
    return c.error() << "axis " << c.attrInt("axis", coerced ? 1 : -1)
                     << " is out of range for rank " << rank;
  Value v = x;
  int64_t a = *axis;
  if (coerced) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < a ? outer : inner) *= type.getDimSize(d);
    v = e.reshape(x, {outer, inner});
    a = 1;
    if (!e.ok({v}))
      return failure();
  }
  auto vType = cast<RankedTensorType>(v.getType());
  int64_t n = vType.getDimSize(a);
  Value idx = e.inferred<ArgMaxOp>(
      v, {c.named("axis", c.b.getI64IntegerAttr(a)),
          c.named("keepdims", c.b.getI64IntegerAttr(1))});
  SmallVector<int64_t> positions(vType.getRank(), 1);
  positions[a] = n;
  Value hit = e.binary<EqualOp>(idx, e.range(positions, c.b.getI64Type()));
  Type elem = type.getElementType();
  Value y = e.where(hit, e.scalar(elem, 1), e.scalar(elem, 0));
  // Where broadcasts to hit's shape, which is v's.
  if (coerced)
    y = e.reshape(y, type.getShape());
  return y;
}

/// EyeLike: ones where column - row == k in a 2-D shape, computed from the
/// row and column indices (a constant once folded).
LogicalResult importEyeLike(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  RankedTensorType in = c.inputType(0);
  if (in.getRank() != 2)
    return c.error() << "takes a 2-D input, not " << in;
  Type elem = in.getElementType();
  if (c.attr("dtype")) {
    elem = onnxElementType(c.b.getContext(), c.attrInt("dtype", 1));
    if (!elem)
      return c.error() << "unsupported dtype " << c.attrInt("dtype", 1);
  }
  if (!isa<FloatType>(elem) && !elem.isInteger())
    return c.error() << "unsupported output type " << elem;
  int64_t k = c.attrInt("k", 0);
  int64_t rows = in.getDimSize(0), cols = in.getDimSize(1);
  Emitter e(c);
  Type i64 = c.b.getI64Type();
  Value row = e.binary<AddOp>(e.range({rows, 1}, i64), e.scalar(i64, double(k)));
  Value hit = e.binary<EqualOp>(row, e.range({1, cols}, i64));
  Value y = elem.isInteger(1) ? hit : e.cast(hit, elem);
  return e.finish({y}, results);
}

} // namespace

void addReductionImporters(std::vector<OpTableEntry> &t) {
  // Axes are an attribute up to version 13 and an input from 18.
  const char *l1 = "onnx.Abs, onnx.ReduceSum";
  for (int v : {1, 11, 13})
    t.push_back({"ReduceL1", v,
                 importDefinition<reduceL1<false>, InputCheck::Present>, l1});
  t.push_back({"ReduceL1", 18,
               importDefinition<reduceL1<true>, InputCheck::Present>, l1});
  const char *logSum = "onnx.ReduceSum, onnx.Log";
  const char *logSumExp = "onnx.ReduceMax, onnx.Exp, onnx.ReduceSum, onnx.Log";
  for (int v : {1, 11, 13}) {
    t.push_back(
        {"ReduceLogSum", v, importDefinition<reduceLogSum<false>>, logSum});
    t.push_back({"ReduceLogSumExp", v, importDefinition<reduceLogSumExp<false>>,
                 logSumExp});
  }
  for (int v : {18, 28}) {
    t.push_back(
        {"ReduceLogSum", v, importDefinition<reduceLogSum<true>>, logSum});
    t.push_back({"ReduceLogSumExp", v, importDefinition<reduceLogSumExp<true>>,
                 logSumExp});
  }
  for (int v : {1, 11, 13})
    t.push_back({"Hardmax", v, importDefinition<hardmax, InputCheck::Present>,
                 "onnx.ArgMax, onnx.Equal, onnx.Where"});
  for (int v : {9, 22})
    t.push_back({"EyeLike", v, importEyeLike, "onnx.Equal of index ranges (folded)"});
}

} // namespace tpc
