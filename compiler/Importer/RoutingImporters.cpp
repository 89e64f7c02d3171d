//===- RoutingImporters.cpp - OneHot and NonZero ---------------------------===//
//
// The ops mixture-of-experts exports route tokens with. OneHot becomes a
// comparison with a constant range; NonZero of a constant is folded, and of
// a run-time value computed densely (Selection.h).
//
//===----------------------------------------------------------------------===//
#include "compiler/Importer/Emitter.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace tpc {
using namespace onnx;

namespace {

using Results = SmallVectorImpl<Value>;

/// The one value of a constant scalar (or one-element) input, integer or
/// float; an error naming `what` otherwise.
FailureOr<double> constScalar(NodeContext &c, size_t i, StringRef what) {
  DenseElementsAttr attr;
  if (!c.input(i) || !matchPattern(c.input(i), m_Constant(&attr)) ||
      attr.getNumElements() != 1)
    return c.error() << "the '" << what
                     << "' input must be a compile-time constant with one "
                        "value";
  if (isa<FloatType>(attr.getElementType()))
    return (*attr.getValues<APFloat>().begin()).convertToDouble();
  if (attr.getElementType().isInteger(1))
    return double(*attr.getValues<bool>().begin());
  return double((*attr.getValues<APInt>().begin()).getSExtValue());
}

/// OneHot (opsets 9 and 11): out[..., j, ...] = values[1] where the index
/// (negative ones counted from depth, since 11) is j, else values[0]; an
/// index outside [-depth, depth) gives a row of values[0].
LogicalResult importOneHot(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(3)))
    return failure();
  FailureOr<double> depthValue = constScalar(c, 1, "depth");
  if (failed(depthValue))
    return failure();
  int64_t depth = int64_t(*depthValue);
  if (depth < 1)
    return c.error() << "depth " << *depthValue << " is not positive";
  RankedTensorType valuesType = c.inputType(2);
  if (valuesType.getRank() != 1 || valuesType.getDimSize(0) != 2)
    return c.error() << "'values' must be [off_value, on_value], not "
                     << valuesType;
  int64_t rank = c.inputType(0).getRank();
  int64_t axis = c.attrInt("axis", -1);
  FailureOr<int64_t> a = normalizeAxis(axis, rank + 1);
  if (failed(a))
    return c.error() << "axis " << axis << " is out of range for indices of "
                     << "rank " << rank;
  Emitter e(c);
  Type i64 = c.b.getI64Type();
  // Float indices are truncated towards zero, as onnxruntime casts them.
  Value idx = e.cast(c.input(0), i64);
  if (c.opset >= 11) {
    Value d = e.scalar(i64, double(depth));
    Value neg = e.binary<LessOp>(idx, e.scalar(i64, 0));
    idx = e.where(neg, e.binary<AddOp>(idx, d), idx);
  }
  SmallVector<int64_t> shape(c.inputType(0).getShape());
  shape.insert(shape.begin() + *a, 1);
  SmallVector<int64_t> rangeShape(size_t(rank + 1), 1);
  rangeShape[size_t(*a)] = depth;
  Value hot = e.binary<EqualOp>(e.reshape(idx, shape),
                                e.range(rangeShape, i64));
  Value off = e.slice(c.input(2), 0, 0, 1);
  Value on = e.slice(c.input(2), 0, 1, 2);
  return e.finish({e.where(hot, on, off)}, results);
}

/// NonZero of a compile-time constant: its coordinates, [rank, count] (a
/// scalar counts as one element of rank 1, as numpy takes it). A run-time
/// input is imported densely before this handler is reached.
LogicalResult importNonZero(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  DenseElementsAttr attr;
  if (!matchPattern(c.input(0), m_Constant(&attr)))
    return c.error() << "NonZero of a run-time value must be imported "
                        "densely";
  SmallVector<int64_t> shape(attr.getType().getShape());
  if (shape.empty())
    shape.push_back(1);
  SmallVector<bool> nonzero;
  Type elem = attr.getElementType();
  if (isa<FloatType>(elem)) {
    for (const APFloat &x : attr.getValues<APFloat>())
      nonzero.push_back(!x.isZero());
  } else if (elem.isInteger(1)) {
    for (bool x : attr.getValues<bool>())
      nonzero.push_back(x);
  } else {
    for (const APInt &x : attr.getValues<APInt>())
      nonzero.push_back(!x.isZero());
  }
  int64_t rank = int64_t(shape.size());
  int64_t count = llvm::count(nonzero, true);
  SmallVector<int64_t> coords(size_t(rank * count));
  int64_t k = 0;
  for (auto [j, nz] : llvm::enumerate(nonzero)) {
    if (!nz)
      continue;
    int64_t rest = int64_t(j);
    for (int64_t d = rank - 1; d >= 0; --d) {
      coords[size_t(d * count + k)] = rest % shape[d];
      rest /= shape[d];
    }
    ++k;
  }
  auto type = RankedTensorType::get({rank, count}, c.b.getI64Type());
  Emitter e(c);
  return e.finish({e.constant(DenseElementsAttr::get(
                      type, ArrayRef<int64_t>(coords)))},
                  results);
}

} // namespace

void addRoutingImporters(std::vector<OpTableEntry> &t) {
  t.push_back({"OneHot", 9, importOneHot, "onnx.Equal, onnx.Where"});
  t.push_back({"OneHot", 11, importOneHot, "onnx.Equal, onnx.Where"});
  // 28 added bfloat16 values, which 11's handler takes.
  t.push_back({"OneHot", 28, importOneHot, "onnx.Equal, onnx.Where"});
  t.push_back({"NonZero", 9, importNonZero,
               "coordinates of every element, masked (dense)"});
  t.push_back({"NonZero", 13, importNonZero,
               "coordinates of every element, masked (dense)"});
}

} // namespace tpc
