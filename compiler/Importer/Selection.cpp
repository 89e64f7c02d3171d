//===- Selection.cpp - NonZero's data-dependent results, computed densely -===//
#include "compiler/Importer/Selection.h"
#include "compiler/Importer/Emitter.h"
#include "compiler/Dialect/ONNX/IR/ValueUtils.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace tpc {
using namespace onnx;

namespace {

using Results = SmallVectorImpl<Value>;

ArrayRef<int64_t> dimsOf(Value v) {
  return llvm::cast<RankedTensorType>(v.getType()).getShape();
}
int64_t rankOf(Value v) { return int64_t(dimsOf(v).size()); }

Type boolType(NodeContext &c) { return c.b.getI1Type(); }

/// Nodes that compute each output element from the elements at the same
/// (broadcast) position of their operands and import as more than one op
/// (or as an op without the Elementwise trait, which the broadcasting ones
/// cannot carry).
bool isElementwise(StringRef op) {
  return llvm::StringSwitch<bool>(op)
      .Cases("Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", true)
      .Cases("Sum", "Mean", "Equal", "Less", "Greater", "LessOrEqual", true)
      .Cases("GreaterOrEqual", "And", "Or", "Xor", "Where", true)
      .Cases("Cast", "CastLike", "Identity", "FastGelu", "QuickGelu", true)
      .Cases("IsInf", "Round", "Clip", "Dropout", "PRelu", "Expand", true)
      .Case("BiasGelu", true)
      .Default(false);
}

/// Whether the node imported as one op with the Elementwise trait applied
/// to the node's own inputs (every unary op).
bool importedElementwise(NodeContext &c, ArrayRef<Value> results) {
  if (results.size() != 1 || !results[0])
    return false;
  Operation *op = results[0].getDefiningOp();
  if (!op || !op->hasTrait<OpTrait::Elementwise>())
    return false;
  SmallVector<Value> inputs;
  for (Value v : c.inputs)
    if (v)
      inputs.push_back(v);
  return llvm::equal(op->getOperands(), inputs);
}

/// Ops that only reshape (row-major order kept).
bool isReshape(StringRef op) {
  return llvm::StringSwitch<bool>(op)
      .Cases("Reshape", "Squeeze", "Unsqueeze", "Flatten", true)
      .Default(false);
}

/// Ops through which a value holding NonZero's count still only builds
/// shapes.
bool carriesCount(StringRef op) {
  return llvm::StringSwitch<bool>(op)
      .Cases("Concat", "Gather", "Unsqueeze", "Squeeze", "Slice", true)
      .Cases("Cast", "Identity", "Reshape", true)
      .Default(false);
}

/// a AND b, either of which may be null.
Value andValid(Emitter &e, Value a, Value b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return e.binary<AndOp>(a, b);
}

} // namespace

void Selections::set(Value v, Selection s) {
  if (!v)
    return;
  // An enumeration of one coordinate is the whole value standing for it.
  if (s.axis >= 0 && dimsOf(v)[s.axis] == 1)
    s.axis = -1;
  map[v] = std::move(s);
}

/// The error about node `c` meeting the selection of `s`.
static InFlightDiagnostic selectionError(NodeContext &c, const Selection &s) {
  return c.error() << "uses the result of NonZero node '" << s.origin
                   << "', whose count is known only at run time; tpc "
                      "computes it densely (every coordinate, the absent "
                      "ones masked), and ";
}

FailureOr<bool> Selections::importSpecial(NodeContext &c, Results &results) {
  StringRef op = c.node.op_type();
  if (!c.node.domain().empty() && c.node.domain() != "ai.onnx")
    return false;
  if (op == "NonZero") {
    if (failed(c.requireInputs(1)))
      return failure();
    if (matchPattern(c.input(0), m_Constant()))
      return false; // folded exactly by the table's handler
    if (failed(importNonZero(c, results)))
      return failure();
    return true;
  }
  if (op == "ScatterElements" || op == "Scatter" || op == "ScatterND") {
    if (!lookup(c.input(1)) && !lookup(c.input(2)))
      return false;
    if (failed(importScatter(c, results)))
      return failure();
    return true;
  }
  if (op == "Split" && c.input(0)) {
    const Selection *s = lookup(c.input(0));
    if (!s || s->axis < 0)
      return false;
    FailureOr<int64_t> axis =
        normalizeAxis(c.attrInt("axis", 0), rankOf(c.input(0)));
    if (failed(axis) || *axis != s->axis)
      return false;
    if (failed(importSplit(c, results)))
      return failure();
    return true;
  }
  return false;
}

LogicalResult Selections::importNonZero(NodeContext &c, Results &results) {
  Value x = c.input(0);
  const Selection *in = lookup(x);
  if (in && (in->axis >= 0 || in->count))
    return selectionError(c, *in)
           << "a NonZero of coordinates that are themselves selected is not "
              "supported";
  // A scalar has one coordinate, as numpy's nonzero takes it.
  SmallVector<int64_t> shape(dimsOf(x));
  if (shape.empty())
    shape.push_back(1);
  int64_t rank = int64_t(shape.size());
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  // Every coordinate of x, in row-major order: NonZero's result when no
  // element is zero.
  SmallVector<int64_t> coords(size_t(rank * n));
  for (int64_t j = 0; j < n; ++j) {
    int64_t rest = j;
    for (int64_t d = rank - 1; d >= 0; --d) {
      coords[size_t(d * n + j)] = rest % shape[d];
      rest /= shape[d];
    }
  }
  Emitter e(c);
  auto type = RankedTensorType::get({rank, n}, c.b.getI64Type());
  Value result = e.constant(DenseElementsAttr::get(
      type, ArrayRef<int64_t>(coords.data(), size_t(rank * n))));
  Value valid = e.reshape(e.cast(x, boolType(c)), {n});
  valid = andValid(e, valid, in ? in->valid : Value());
  if (e.failed)
    return failure();
  results.push_back(result);
  set(result, {1, valid, false, c.node.name()});
  return success();
}

LogicalResult Selections::importSplit(NodeContext &c, Results &results) {
  const Selection s = *lookup(c.input(0));
  int64_t extent = dimsOf(c.input(0))[s.axis];
  // The sizes a traced loop fixed: they must cover every coordinate.
  SmallVector<int64_t> sizes;
  if (c.opset < 13 && c.attr("split")) {
    sizes = *c.attrInts("split");
  } else if (c.opset >= 13 && c.input(1)) {
    FailureOr<SmallVector<int64_t>> v = c.constInts(1, "split");
    if (failed(v))
      return failure();
    sizes = *v;
  }
  int64_t sum = 0;
  for (int64_t v : sizes)
    sum += v;
  if (!sizes.empty() && sum != extent)
    return selectionError(c, s)
           << "this Split cuts it into pieces of fixed sizes that add up to "
           << sum << ", not to the " << extent
           << " coordinates NonZero may return: the export fixed a count "
              "that depends on the data (a traced loop over NonZero's "
              "result); export with every coordinate taken (for mixture of "
              "experts, inputs that route tokens to every expert)";
  const OpTableEntry *entry = lookupOp("Split", c.opset);
  if (!entry || failed(entry->handler(c, results)))
    return failure();
  Emitter e(c);
  int64_t offset = 0;
  for (Value piece : results) {
    int64_t size = dimsOf(piece)[s.axis];
    Value valid = e.slice(s.valid, 0, offset, offset + size);
    if (e.failed)
      return failure();
    set(piece, {s.axis, valid, false, s.origin});
    offset += size;
  }
  return success();
}

LogicalResult Selections::importScatter(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(3)))
    return failure();
  StringRef op = c.node.op_type();
  Value data = c.input(0), indices = c.input(1), updates = c.input(2);
  const Selection *si = lookup(indices);
  const Selection *su = lookup(updates);
  const Selection &any = si ? *si : *su;
  if (lookup(data))
    return selectionError(c, *lookup(data))
           << "scattering into a selected value is not supported";
  if (!si || !su || si->axis < 0 || su->axis < 0 || si->count || su->count ||
      si->valid != su->valid)
    return selectionError(c, any)
           << "a scatter is supported where its indices and updates are "
              "the same selected rows";
  bool nd = op == "ScatterND";
  if ((nd && (si->axis != su->axis || si->axis >= rankOf(indices) - 1)) ||
      (!nd && si->axis != su->axis))
    return selectionError(c, any)
           << "its indices and updates enumerate the coordinates along "
              "different axes";
  std::string reduction = c.attrString("reduction", "none");
  if (reduction == "none" && !isZeroTensor(data))
    return selectionError(c, any)
           << "a scatter without reduction is supported into zeros only "
              "(the absent rows then add nothing)";
  if (reduction != "none" && reduction != "add")
    return selectionError(c, any)
           << "reduction '" << reduction << "' is not supported on selected "
              "rows (none into zeros, or add, are)";
  // With distinct targets (ONNX leaves duplicates undefined without a
  // reduction), writing the present rows into zeros is adding every row
  // with the absent ones zeroed.
  Emitter e(c);
  SmallVector<int64_t> maskShape(size_t(rankOf(updates)), 1);
  maskShape[size_t(su->axis)] = dimsOf(updates)[su->axis];
  Value mask = e.reshape(su->valid, maskShape);
  Type elem = llvm::cast<RankedTensorType>(updates.getType()).getElementType();
  Value zero = e.scalar(elem, 0.0);
  Value masked = e.where(mask, updates, zero);
  if (e.failed)
    return failure();
  SmallVector<NamedAttribute> attrs{
      c.named("reduction", c.b.getStringAttr("add"))};
  if (!nd)
    attrs.push_back(
        c.named("axis", c.b.getI64IntegerAttr(c.attrInt("axis", 0))));
  StringRef name = nd ? "onnx.ScatterND" : "onnx.ScatterElements";
  Value out = c.create(name, data.getType(), {data, indices, masked}, attrs)[0];
  results.push_back(out);
  return success();
}

LogicalResult Selections::propagate(NodeContext &c, ArrayRef<Value> results) {
  StringRef op = c.node.op_type();
  SmallVector<std::pair<size_t, const Selection *>> axisSels;
  Emitter e(c);
  Value whole;
  std::string origin;
  bool count = false;
  for (auto [i, v] : llvm::enumerate(c.inputs)) {
    const Selection *s = v ? lookup(v) : nullptr;
    if (!s)
      continue;
    origin = s->origin;
    if (s->count) {
      if ((op == "Reshape" || op == "Expand") && i == 1)
        continue; // a shape operand: the dense shape is the right one
      if (!carriesCount(op))
        return selectionError(c, *s)
               << "this " << op
               << " would use the count as a value, which differs";
      count = true;
    } else if (s->axis < 0) {
      whole = andValid(e, whole, s->valid);
    } else {
      axisSels.push_back({i, s});
    }
  }
  if (origin.empty())
    return success();
  if (e.failed)
    return failure();
  if (op == "Shape" || op == "Size") {
    if (!axisSels.empty())
      for (Value r : results)
        set(r, {-1, Value(), true, origin});
    return success();
  }
  if (axisSels.empty()) {
    for (Value r : results)
      set(r, count ? Selection{-1, Value(), true, origin}
                   : Selection{-1, whole, false, origin});
    return success();
  }
  if (count)
    return selectionError(c, *axisSels[0].second)
           << "this " << op << " mixes its count with the coordinates";

  const Selection &s = *axisSels[0].second;
  Value in0 = c.input(axisSels[0].first);
  int64_t outAxis = -1;
  auto same = [&](int64_t axis) {
    for (auto &[i, t] : axisSels)
      if (t->valid != s.valid)
        return false;
    outAxis = axis;
    return true;
  };
  auto bad = [&]() { return selectionError(c, s); };
  Value r0 = results.empty() ? Value() : results[0];
  if (!r0)
    return bad() << "this " << op << " has no result to carry them";

  if (isElementwise(op) || importedElementwise(c, results)) {
    int64_t rank = rankOf(r0);
    for (auto &[i, t] : axisSels) {
      int64_t o = t->axis + rank - rankOf(c.input(i));
      if (t->valid != s.valid || (outAxis >= 0 && o != outAxis))
        return bad() << "this " << op
                     << " combines two different selections";
      outAxis = o;
    }
    for (auto [j, v] : llvm::enumerate(c.inputs)) {
      if (!v || lookup(v) || (op == "Expand" && j == 1))
        continue;
      int64_t p = outAxis - (rank - rankOf(v));
      if (p >= 0 && dimsOf(v)[p] != 1)
        return bad() << "this " << op << " broadcasts operand " << j
                     << " (extent " << dimsOf(v)[p]
                     << ") against the coordinates";
    }
  } else if (isReshape(op)) {
    if (axisSels[0].first != 0)
      return bad() << "it shapes a Reshape";
    ArrayRef<int64_t> in = dimsOf(in0), out = dimsOf(r0);
    int64_t prefix = 1;
    for (int64_t d = 0; d < s.axis; ++d)
      prefix *= in[d];
    int64_t p = 1;
    for (size_t j = 0; j < out.size(); ++j) {
      if (p == prefix && out[j] == in[s.axis]) {
        outAxis = int64_t(j);
        break;
      }
      p *= out[j];
    }
    if (outAxis < 0)
      return bad() << "this " << op
                   << " merges the coordinates' axis with another";
  } else if (op == "Transpose") {
    SmallVector<int64_t> perm;
    if (auto p = c.attrInts("perm"))
      perm = *p;
    else
      for (int64_t i = rankOf(in0) - 1; i >= 0; --i)
        perm.push_back(i);
    for (auto [j, p] : llvm::enumerate(perm))
      if (p == s.axis)
        outAxis = int64_t(j);
  } else if (op == "Split" || op == "Concat") {
    FailureOr<int64_t> axis =
        normalizeAxis(c.attrInt("axis", 0), rankOf(in0));
    if (op == "Concat" && axisSels.size() != size_t(llvm::count_if(
                                                  c.inputs, [](Value v) {
                                                    return bool(v);
                                                  })))
      return bad() << "this Concat joins them with unselected values";
    if (failed(axis) || *axis == s.axis || !same(s.axis))
      return bad() << "this " << op << " cuts or joins the coordinates";
  } else if (op == "Slice") {
    if (axisSels[0].first != 0 || dimsOf(r0)[s.axis] != dimsOf(in0)[s.axis])
      return bad() << "this Slice takes part of the coordinates";
    if (c.input(4)) {
      FailureOr<SmallVector<int64_t>> steps = c.constInts(4, "steps");
      if (failed(steps))
        return failure();
      if (llvm::any_of(*steps, [](int64_t x) { return x < 0; }))
        return bad() << "this Slice reverses an axis";
    }
    outAxis = s.axis;
  } else if (op == "Gather") {
    int64_t dataRank = rankOf(c.input(0));
    FailureOr<int64_t> g = normalizeAxis(c.attrInt("axis", 0), dataRank);
    if (failed(g) || axisSels.size() != 1)
      return bad() << "this Gather selects by selected indices from "
                      "selected data";
    if (axisSels[0].first == 0) {
      if (*g == s.axis)
        return bad() << "this Gather picks among the coordinates";
      outAxis = s.axis < *g ? s.axis : s.axis + rankOf(c.input(1)) - 1;
    } else {
      outAxis = *g + s.axis;
    }
  } else if (op == "MatMul") {
    if (axisSels.size() != 1 || axisSels[0].first != 0 || rankOf(in0) < 2 ||
        s.axis == rankOf(in0) - 1)
      return bad() << "this MatMul contracts over the coordinates";
    outAxis = s.axis + rankOf(r0) - rankOf(in0);
  } else if (op == "Softmax" || op == "LogSoftmax" ||
             op == "LayerNormalization" ||
             op == "SimplifiedLayerNormalization") {
    int64_t dflt = (op.ends_with("Softmax") && c.opset < 13) ? 1 : -1;
    FailureOr<int64_t> axis =
        normalizeAxis(c.attrInt("axis", dflt), rankOf(in0));
    bool rowwise = succeeded(axis) && axisSels[0].first == 0 &&
                   (op.ends_with("Softmax") && c.opset >= 13
                        ? *axis != s.axis
                        : s.axis < *axis);
    if (!rowwise)
      return bad() << "this " << op << " normalizes across the coordinates";
    outAxis = s.axis;
  } else {
    return bad() << "it cannot carry them through " << op;
  }
  if (outAxis < 0)
    return bad() << "this " << op << " loses the coordinates' axis";
  Value valid = andValid(e, s.valid, whole);
  if (e.failed)
    return failure();
  for (Value r : results)
    set(r, {outAxis, valid, false, s.origin});
  return success();
}

} // namespace tpc
