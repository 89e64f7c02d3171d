//===- ShapeImporters.cpp - Data movement, shape and reduction nodes ------===//
//
// ONNX inputs that decide a shape (Reshape's shape, Slice's starts, Split's
// sizes, the Reduce ops' axes) must be constants once input shapes are fixed;
// they become attributes of the imported op.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "compiler/Importer/Emitter.h"
#include "compiler/Importer/NodeImporter.h"

#include "mlir/IR/Matchers.h"

#include <cstring>

using namespace mlir;
using namespace tpc::onnx;

namespace tpc {
namespace {

using Results = SmallVectorImpl<Value>;

LogicalResult reshapeTo(NodeContext &c, ArrayRef<int64_t> shape,
                        Results &results) {
  RankedTensorType in = c.inputType(0);
  if (ShapedType::getNumElements(shape) != in.getNumElements())
    return c.error() << "cannot reshape " << in << " (" << in.getNumElements()
                     << " elements) to [" << llvm::make_range(shape.begin(),
                                                              shape.end())
                     << "]";
  auto type = RankedTensorType::get(shape, in.getElementType());
  results.append(c.create(ReshapeOp::getOperationName(), type, c.input(0)));
  return success();
}

LogicalResult importReshape(NodeContext &c, Results &results) {
  FailureOr<SmallVector<int64_t>> target = c.requireConstInts(1, "shape");
  if (failed(target))
    return failure();
  RankedTensorType in = c.inputType(0);
  bool allowZero = c.attrInt("allowzero", 0) != 0;
  SmallVector<int64_t> shape(*target);
  int64_t inferIdx = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if (int64_t(i) >= in.getRank())
        return c.error() << "shape entry " << i << " is 0 but the input has "
                         << "rank " << in.getRank();
      shape[i] = in.getDimSize(i);
    }
    if (shape[i] == -1) {
      if (inferIdx >= 0)
        return c.error() << "shape has more than one -1";
      inferIdx = i;
      continue;
    }
    if (shape[i] < 0)
      return c.error() << "shape entry " << shape[i] << " is invalid";
    if (__builtin_mul_overflow(known, shape[i], &known))
      return c.error() << "shape entries multiply to more elements than an "
                          "int64 holds";
  }
  if (inferIdx >= 0) {
    if (known == 0 || in.getNumElements() % known != 0)
      return c.error() << "cannot infer the -1 entry of the shape for "
                       << in;
    shape[inferIdx] = in.getNumElements() / known;
  }
  return reshapeTo(c, shape, results);
}

LogicalResult importFlatten(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  RankedTensorType in = c.inputType(0);
  int64_t axis = c.attrInt("axis", 1);
  if (axis < 0)
    axis += in.getRank();
  if (axis < 0 || axis > in.getRank())
    return c.error() << "axis out of range";
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= in.getDimSize(i);
  int64_t shape[2] = {outer, axis == 0 && in.getNumElements() == 0
                                 ? 0
                                 : in.getNumElements() / std::max<int64_t>(outer, 1)};
  return reshapeTo(c, shape, results);
}

/// Axes of Squeeze/Unsqueeze: an input from opset 13 on, the `axes`
/// attribute before (version 11).
FailureOr<SmallVector<int64_t>> axesInput(NodeContext &c, size_t idx) {
  if (c.opset < 13) {
    if (c.inputs.size() > idx)
      return c.error() << "has " << c.inputs.size() << " inputs; "
                       << c.node.op_type() << " before opset 13 takes 1, "
                       << "with its axes as an attribute";
    if (auto a = c.attrInts("axes"))
      return *a;
    return SmallVector<int64_t>();
  }
  if (!c.input(idx))
    return SmallVector<int64_t>();
  return c.constInts(idx, "axes");
}

LogicalResult importSqueeze(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  FailureOr<SmallVector<int64_t>> axes = axesInput(c, 1);
  if (failed(axes))
    return failure();
  RankedTensorType in = c.inputType(0);
  SmallVector<bool> drop(in.getRank(), false);
  if (axes->empty()) {
    for (int64_t i = 0; i < in.getRank(); ++i)
      drop[i] = in.getDimSize(i) == 1;
  }
  for (int64_t a : *axes) {
    FailureOr<int64_t> n = normalizeAxis(a, in.getRank());
    if (failed(n))
      return c.error() << "axis " << a << " out of range";
    if (in.getDimSize(*n) != 1)
      return c.error() << "cannot squeeze axis " << a << " of size "
                       << in.getDimSize(*n);
    drop[*n] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!drop[i])
      shape.push_back(in.getDimSize(i));
  return reshapeTo(c, shape, results);
}

LogicalResult importUnsqueeze(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(c.opset < 13 ? 1 : 2)))
    return failure();
  if (c.opset < 13 && !c.attr("axes"))
    return c.error() << "the 'axes' attribute is required by Unsqueeze "
                        "before opset 13 (the model's opset is "
                     << c.opset << ")";
  FailureOr<SmallVector<int64_t>> axes = axesInput(c, 1);
  if (failed(axes))
    return failure();
  RankedTensorType in = c.inputType(0);
  int64_t outRank = in.getRank() + axes->size();
  SmallVector<bool> inserted(outRank, false);
  for (int64_t a : *axes) {
    FailureOr<int64_t> n = normalizeAxis(a, outRank);
    if (failed(n) || inserted[*n])
      return c.error() << "axis " << a << " out of range or repeated";
    inserted[*n] = true;
  }
  SmallVector<int64_t> shape;
  int64_t next = 0;
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(inserted[i] ? 1 : in.getDimSize(next++));
  return reshapeTo(c, shape, results);
}

LogicalResult importExpand(NodeContext &c, Results &results) {
  FailureOr<SmallVector<int64_t>> target = c.requireConstInts(1, "shape");
  if (failed(target))
    return failure();
  RankedTensorType in = c.inputType(0);
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes({in.getShape(), *target});
  if (failed(shape))
    return c.error() << "cannot expand " << in << " to the shape ["
                     << llvm::make_range(target->begin(), target->end())
                     << "]";
  auto type = RankedTensorType::get(*shape, in.getElementType());
  results.append(c.create(ExpandOp::getOperationName(), type, c.input(0)));
  return success();
}

bool isIdentityPermutation(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (p != int64_t(i))
      return false;
  return true;
}

LogicalResult importTranspose(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  int64_t rank = c.inputType(0).getRank();
  SmallVector<int64_t> perm;
  if (auto p = c.attrInts("perm"))
    perm = *p;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  // A Transpose of a Transpose is one (none when they cancel): dynamo's
  // transposes around a gather meet once the gather moves through them.
  Value in = c.input(0);
  if (auto inner = in.getDefiningOp<TransposeOp>();
      inner && int64_t(perm.size()) == rank &&
      llvm::all_of(perm, [&](int64_t p) { return p >= 0 && p < rank; })) {
    ArrayRef<int64_t> p = inner.getPerm();
    for (int64_t &q : perm)
      q = p[size_t(q)];
    in = inner.getData();
    if (isIdentityPermutation(perm)) {
      results.push_back(in);
      return success();
    }
  }
  return pushAll(c.createInferred<TransposeOp>(
                     in, {c.named("perm", c.b.getDenseI64ArrayAttr(perm))}),
                 results);
}

LogicalResult importConcat(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  if (!c.attr("axis"))
    return c.error() << "the 'axis' attribute is required";
  return pushAll(c.createInferred<ConcatOp>(c.givenInputs(c.inputs.size()),
                                            {c.intAttr("axis", 0)}),
                 results);
}

LogicalResult importSplit(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  RankedTensorType in = c.inputType(0);
  int64_t axis = c.attrInt("axis", 0);
  FailureOr<int64_t> n = normalizeAxis(axis, in.getRank());
  if (failed(n))
    return c.error() << "axis " << axis << " out of range";
  int64_t dim = in.getDimSize(*n);
  SmallVector<int64_t> sizes;
  if (c.opset < 13) {
    // Split-11: the sizes are the `split` attribute, not an input.
    if (c.inputs.size() > 1)
      return c.error() << "has " << c.inputs.size()
                       << " inputs; Split before opset 13 takes 1, with "
                          "'split' as an attribute";
  }
  if (c.opset < 13 && c.attr("split")) {
    sizes = *c.attrInts("split");
  } else if (c.input(1)) {
    FailureOr<SmallVector<int64_t>> s = c.constInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  } else {
    // Even split into the node's outputs (or num_outputs from opset 18 on),
    // the last part smaller when the axis does not divide.
    int64_t parts = c.attrInt("num_outputs", c.node.output_size());
    if (parts <= 0)
      return c.error() << "cannot split into " << parts << " parts";
    int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  if (int64_t(sizes.size()) != c.node.output_size())
    return c.error() << "has " << c.node.output_size() << " outputs but "
                     << sizes.size() << " split sizes";
  return pushAll(c.createInferred<SplitOp>(
                     c.input(0),
                     {c.named("axis", c.b.getI64IntegerAttr(axis)),
                      c.named("split", c.b.getDenseI64ArrayAttr(sizes))}),
                 results);
}

LogicalResult createSlice(NodeContext &c, ArrayRef<int64_t> starts,
                          ArrayRef<int64_t> ends, ArrayRef<int64_t> axes,
                          ArrayRef<int64_t> steps, Results &results) {
  return pushAll(c.createInferred<SliceOp>(
                     c.input(0),
                     {c.named("starts", c.b.getDenseI64ArrayAttr(starts)),
                      c.named("ends", c.b.getDenseI64ArrayAttr(ends)),
                      c.named("axes", c.b.getDenseI64ArrayAttr(axes)),
                      c.named("steps", c.b.getDenseI64ArrayAttr(steps))}),
                 results);
}

/// Slice-1 (opsets 1 to 9): starts, ends and axes are attributes, the step
/// is 1.
LogicalResult importSliceAttrs(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  if (c.inputs.size() > 1)
    return c.error() << "has " << c.inputs.size()
                     << " inputs; Slice before opset 10 takes 1, with starts, "
                        "ends and axes as attributes";
  std::optional<SmallVector<int64_t>> starts = c.attrInts("starts");
  std::optional<SmallVector<int64_t>> ends = c.attrInts("ends");
  if (!starts || !ends || starts->size() != ends->size())
    return c.error() << "Slice before opset 10 needs 'starts' and 'ends' "
                        "attributes of the same length";
  SmallVector<int64_t> axes;
  if (auto a = c.attrInts("axes"))
    axes = *a;
  else
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  SmallVector<int64_t> steps(starts->size(), 1);
  return createSlice(c, *starts, *ends, axes, steps, results);
}

LogicalResult importSlice(NodeContext &c, Results &results) {
  if (c.opset < 10)
    return importSliceAttrs(c, results);
  if (failed(c.requireInputs(3)))
    return failure();
  FailureOr<SmallVector<int64_t>> starts = c.constInts(1, "starts");
  if (failed(starts))
    return failure();
  FailureOr<SmallVector<int64_t>> ends = c.constInts(2, "ends");
  if (failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (c.input(3)) {
    FailureOr<SmallVector<int64_t>> a = c.constInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (c.input(4)) {
    FailureOr<SmallVector<int64_t>> s = c.constInts(4, "steps");
    if (failed(s))
      return failure();
    steps = *s;
  }
  return createSlice(c, *starts, *ends, axes, steps, results);
}

/// Gather(data, indices, axis), with the gather moved through the Transposes
/// that feed it when the indices have rank 0 or 1: Gather(Transpose(x, p),
/// axis) is Transpose(Gather(x, p[axis]), p'), p' being p (1-D indices) or
/// p without the gathered axis (a scalar index). The dynamo exporter writes
/// x[..., k, :] as a Transpose that brings the axis to the front, a gather
/// and a Transpose back; gathering from x itself lets the sharding analysis
/// see which slots of a fused projection each gather picks.
FailureOr<SmallVector<Value>> createGather(NodeContext &c, Value data,
                                           Value indices, int64_t axis) {
  int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
  int64_t idxRank = cast<RankedTensorType>(indices.getType()).getRank();
  if (axis < 0)
    axis += rank;
  auto t = data.getDefiningOp<TransposeOp>();
  if (!t || idxRank > 1 || axis < 0 || axis >= rank ||
      int64_t(t.getPerm().size()) != rank)
    return c.createInferred<GatherOp>(
        {data, indices}, {c.named("axis", c.b.getI64IntegerAttr(axis))});
  ArrayRef<int64_t> p = t.getPerm();
  int64_t inner = p[size_t(axis)];
  FailureOr<SmallVector<Value>> g =
      createGather(c, t.getData(), indices, inner);
  if (failed(g))
    return failure();
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) {
    if (idxRank == 1)
      perm.push_back(p[size_t(i)]);
    else if (i != axis)
      perm.push_back(p[size_t(i)] - (p[size_t(i)] > inner ? 1 : 0));
  }
  if (isIdentityPermutation(perm))
    return g;
  return c.createInferred<TransposeOp>(
      (*g)[0], {c.named("perm", c.b.getDenseI64ArrayAttr(perm))});
}

template <typename OpTy>
LogicalResult importGather(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  if constexpr (std::is_same_v<OpTy, GatherOp>)
    return pushAll(createGather(c, c.input(0), c.input(1), c.attrInt("axis", 0)),
                   results);
  return pushAll(
      c.createInferred<OpTy>({c.input(0), c.input(1)}, {c.intAttr("axis", 0)}),
      results);
}

constexpr const char *kGatherNDImportsAs =
    "onnx.GatherND (onnx.Gather for one-coordinate index tuples)";

LogicalResult importGatherND(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  // Index tuples of one coordinate (batch_dims 0) gather along axis 0:
  // GatherND(data, I) with I [..., 1] is Gather(data, I[..., 0], axis 0).
  auto it = c.inputType(1);
  if (c.attrInt("batch_dims", 0) == 0 && it.getRank() >= 1 &&
      it.getShape().back() == 1 && it.hasStaticShape()) {
    Emitter e(c);
    Value idx = e.reshape(c.input(1), it.getShape().drop_back());
    if (e.failed || !idx)
      return failure();
    return pushAll(createGather(c, c.input(0), idx, 0), results);
  }
  return pushAll(c.createInferred<GatherNDOp>({c.input(0), c.input(1)},
                                              {c.intAttr("batch_dims", 0)}),
                 results);
}

LogicalResult importTile(NodeContext &c, Results &results) {
  FailureOr<SmallVector<int64_t>> reps = c.requireConstInts(1, "repeats");
  if (failed(reps))
    return failure();
  return pushAll(c.createInferred<TileOp>(
                     c.input(0),
                     {c.named("repeats", c.b.getDenseI64ArrayAttr(*reps))}),
                 results);
}

/// The source position of output position `i` of an axis of `n` elements
/// padded by `before` (>= 0) in `mode` (edge, reflect or wrap; numpy.pad's
/// rules, which ONNX follows).
static int64_t padSource(StringRef mode, int64_t i, int64_t before,
                         int64_t n) {
  int64_t p = i - before;
  if (p >= 0 && p < n)
    return p;
  if (mode == "edge")
    return p < 0 ? 0 : n - 1;
  if (mode == "wrap")
    return ((p % n) + n) % n;
  // reflect: mirror about the first and last elements, period 2 (n - 1).
  if (n == 1)
    return 0;
  int64_t period = 2 * (n - 1);
  int64_t q = ((p % period) + period) % period;
  return q < n ? q : period - q;
}

/// Pad in edge, reflect or wrap mode: one Gather per padded axis with the
/// source positions as constant indices, so sharding and every backend
/// treat it as the gather it is.
static LogicalResult importPadByGather(NodeContext &c, StringRef mode,
                                       ArrayRef<int64_t> pads,
                                       Results &results) {
  Value v = c.input(0);
  auto type = cast<RankedTensorType>(v.getType());
  int64_t rank = type.getRank();
  Emitter e(c);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t before = pads[d], after = pads[d + rank];
    if (before == 0 && after == 0)
      continue;
    int64_t n = type.getDimSize(d);
    int64_t size = n + before + after;
    if (size < 0)
      return c.error() << "pads crop axis " << d << " of size " << n
                       << " below zero";
    if (size > (int64_t(1) << 31))
      return c.error() << "pads make axis " << d << " " << size
                       << " long, more than 2^31";
    // Negative pads crop first; the positive ones then pad what is left
    // (onnxruntime's order).
    int64_t lo = std::max<int64_t>(0, -before);
    int64_t kept = n - lo - std::max<int64_t>(0, -after);
    if (kept <= 0 && size > 0)
      return c.error() << "mode '" << mode << "' cannot pad axis " << d
                       << ": no element of it is left to repeat";
    SmallVector<int64_t> idx;
    for (int64_t i = 0; i < size; ++i)
      idx.push_back(lo + padSource(mode, i, std::max<int64_t>(0, before),
                                   kept));
    auto idxType = RankedTensorType::get({size}, c.b.getI64Type());
    v = e.gather(v, e.constant(DenseElementsAttr::get(idxType, ArrayRef(idx))),
                 d);
  }
  return e.finish({v}, results);
}

LogicalResult importPad(NodeContext &c, Results &results) {
  std::string mode = c.attrString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      mode != "wrap")
    return c.error() << "unknown Pad mode '" << mode
                     << "' (ONNX defines constant, edge, reflect and wrap)";
  if (c.opset < 11) {
    // Pad-2: pads and value are attributes.
    if (failed(c.requireInputs(1)))
      return failure();
    std::optional<SmallVector<int64_t>> pads = c.attrInts("pads");
    if (c.inputs.size() > 1 || !pads)
      return c.error() << "Pad before opset 11 takes 1 input and a 'pads' "
                          "attribute";
    if (pads->size() != 2 * size_t(c.inputType(0).getRank()))
      return c.error() << "pads must have two entries per axis";
    if (mode != "constant")
      return importPadByGather(c, mode, *pads, results);
    return pushAll(
        c.createInferred<PadOp>(
            c.input(0), {c.named("pads", c.b.getDenseI64ArrayAttr(*pads)),
                         c.floatAttr("value", 0)}),
        results);
  }
  FailureOr<SmallVector<int64_t>> pads = c.requireConstInts(1, "pads");
  if (failed(pads))
    return failure();
  int64_t rank = c.inputType(0).getRank();
  SmallVector<int64_t> full(*pads);
  if (c.input(3)) {
    FailureOr<SmallVector<int64_t>> axes = c.constInts(3, "axes");
    if (failed(axes))
      return failure();
    if (pads->size() != 2 * axes->size())
      return c.error() << "pads must have two entries per axis";
    full.assign(2 * rank, 0);
    for (size_t i = 0; i < axes->size(); ++i) {
      FailureOr<int64_t> a = normalizeAxis((*axes)[i], rank);
      if (failed(a))
        return c.error() << "axis " << (*axes)[i] << " out of range";
      full[*a] = (*pads)[i];
      full[*a + rank] = (*pads)[i + axes->size()];
    }
  }
  if (full.size() != 2 * size_t(rank))
    return c.error() << "pads must have two entries per axis";
  if (mode != "constant")
    return importPadByGather(c, mode, full, results);
  float value = 0;
  if (Value v = c.input(2)) {
    DenseElementsAttr attr;
    if (!matchPattern(v, m_Constant(&attr)) || attr.getNumElements() != 1)
      return c.error() << "the 'constant_value' input must be a constant";
    value = isa<FloatType>(attr.getElementType())
                ? (*attr.getValues<APFloat>().begin()).convertToFloat()
                : float((*attr.getValues<APInt>().begin()).getSExtValue());
  }
  return pushAll(c.createInferred<PadOp>(
                     c.input(0),
                     {c.named("pads", c.b.getDenseI64ArrayAttr(full)),
                      c.named("value", c.b.getF32FloatAttr(value))}),
                 results);
}

LogicalResult importTrilu(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  int64_t k = 0;
  if (c.input(1)) {
    FailureOr<SmallVector<int64_t>> kv = c.constInts(1, "k");
    if (failed(kv) || kv->size() != 1)
      return failure();
    k = (*kv)[0];
  }
  results.append(c.create(
      TriluOp::getOperationName(), c.input(0).getType(), c.input(0),
      {c.named("upper", c.b.getI64IntegerAttr(c.attrInt("upper", 1))),
       c.named("k", c.b.getI64IntegerAttr(k))}));
  return success();
}

/// The reduction attribute of ScatterND and ScatterElements: absent before
/// opset 16, none/add/mul from 16, max/min too from 18.
FailureOr<std::string> scatterReduction(NodeContext &c) {
  std::string r = c.attrString("reduction", "none");
  if (c.opset < 16) {
    if (c.attr("reduction"))
      return c.error() << "attribute 'reduction' is not defined before "
                          "opset 16 (the model's opset is "
                       << c.opset << ")";
    return r;
  }
  bool ok = r == "none" || r == "add" || r == "mul" ||
            (c.opset >= 18 && (r == "max" || r == "min"));
  if (!ok)
    return c.error() << "attribute 'reduction' must be "
                     << (c.opset >= 18 ? "none, add, mul, max or min"
                                       : "none, add or mul")
                     << " at opset " << c.opset << ", not '" << r << "'";
  return r;
}

/// A scatter's reduction (scatterReduction's rules) on `data`: bool and
/// 8-bit data take none only.
FailureOr<std::string> scatterReductionOn(NodeContext &c,
                                          RankedTensorType data) {
  FailureOr<std::string> reduction = scatterReduction(c);
  if (failed(reduction))
    return failure();
  Type elem = data.getElementType();
  if (*reduction != "none" && (elem.isInteger(1) || elem.isInteger(8)))
    return c.error() << "reduction '" << *reduction
                     << "' is not supported for " << data
                     << " data (it takes floats, int32 and int64)";
  return reduction;
}

/// Appends the scatter `opName` of the node's data, indices and updates
/// (`data` the type of the first) with `attrs` and the reduction
/// (scatterReductionOn).
LogicalResult appendScatter(NodeContext &c, StringRef opName,
                            RankedTensorType data,
                            SmallVector<NamedAttribute> attrs,
                            Results &results) {
  FailureOr<std::string> reduction = scatterReductionOn(c, data);
  if (failed(reduction))
    return failure();
  attrs.push_back(c.named("reduction", c.b.getStringAttr(*reduction)));
  results.append(
      c.create(opName, data, {c.input(0), c.input(1), c.input(2)}, attrs));
  return success();
}

/// ScatterND (opsets 11, 13, 16 and 18): int64 index tuples of k <= rank
/// entries address slices of data; updates.shape must be
/// indices.shape[:-1] + data.shape[k:].
LogicalResult importScatterND(NodeContext &c, Results &results) {
  if (failed(c.requireExactInputs(3, "data, indices, updates")))
    return failure();
  RankedTensorType data = c.inputType(0), idx = c.inputType(1),
                   upd = c.inputType(2);
  if (!idx.getElementType().isInteger(64))
    return c.error() << "the 'indices' input must be int64, not " << idx;
  FailureOr<SmallVector<int64_t>> want = scatterNDUpdatesShape(data, idx);
  if (failed(want))
    return c.error() << "indices " << idx
                     << " must have rank >= 1 and a last dim no larger than "
                        "the data rank "
                     << data.getRank();
  if (upd.getElementType() != data.getElementType() ||
      upd.getShape() != ArrayRef<int64_t>(*want))
    return c.error() << "updates " << upd << " do not match data " << data
                     << " and indices " << idx << ": want "
                     << RankedTensorType::get(*want, data.getElementType())
                     << " (indices.shape[:-1] + data.shape[k:])";
  return appendScatter(c, ScatterNDOp::getOperationName(), data, {}, results);
}

/// ScatterElements (opsets 11, 13, 16 and 18) and the deprecated Scatter
/// (9 and 11: ScatterElements without the reduction attribute): int64 or
/// int32 indices of data's rank address elements along `axis`; updates
/// have the indices' shape.
LogicalResult importScatterElements(NodeContext &c, Results &results) {
  if (failed(c.requireExactInputs(3, "data, indices, updates")))
    return failure();
  if (c.node.op_type() == "Scatter" && c.attr("reduction"))
    return c.error() << "Scatter has no attribute 'reduction' (use "
                        "ScatterElements, which has it from opset 16)";
  RankedTensorType data = c.inputType(0), idx = c.inputType(1),
                   upd = c.inputType(2);
  Type ie = idx.getElementType();
  if (!ie.isInteger(64) && !ie.isInteger(32))
    return c.error() << "the 'indices' input must be int64 or int32, not "
                     << idx;
  int64_t axis = c.attrInt("axis", 0);
  std::string problem = scatterElementsProblem(data, idx, upd, axis);
  if (!problem.empty())
    return c.error() << problem;
  return appendScatter(c, ScatterElementsOp::getOperationName(), data,
                       {c.named("axis", c.b.getI64IntegerAttr(axis))}, results);
}

/// A 0/1 flag attribute; anything else is an error naming the node.
FailureOr<int64_t> flagAttr(NodeContext &c, StringRef name,
                            int64_t dflt = 0) {
  int64_t v = c.attrInt(name, dflt);
  if (v != 0 && v != 1)
    return c.error() << "attribute '" << name << "' must be 0 or 1, not " << v;
  return v;
}

/// CumSum (opsets 11 and 14): the axis input becomes the `axis` attribute.
/// It must be a compile-time constant: the kernels are bound to one axis
/// when an engine loads, and the result type does not depend on it.
LogicalResult importCumSum(NodeContext &c, Results &results) {
  if (failed(c.requireExactInputs(2, "x, axis")))
    return failure();
  FailureOr<SmallVector<int64_t>> axis = c.constInts(1, "axis");
  if (failed(axis))
    return failure();
  if (axis->size() != 1 || c.inputType(1).getRank() > 1)
    return c.error() << "the 'axis' input must be a scalar or a 1-element "
                        "tensor, not "
                     << c.inputType(1);
  RankedTensorType in = c.inputType(0);
  if (failed(normalizeAxis((*axis)[0], in.getRank())))
    return c.error() << "axis " << (*axis)[0] << " is out of range for rank "
                     << in.getRank();
  Type elem = in.getElementType();
  if (elem.isInteger(1) || elem.isInteger(8))
    return c.error() << "input type " << in
                     << " is not supported (CumSum takes floats, int32 and "
                        "int64)";
  FailureOr<int64_t> exclusive = flagAttr(c, "exclusive");
  if (failed(exclusive))
    return failure();
  FailureOr<int64_t> reverse = flagAttr(c, "reverse");
  if (failed(reverse))
    return failure();
  results.append(
      c.create(CumSumOp::getOperationName(), in, c.input(0),
               {c.named("axis", c.b.getI64IntegerAttr((*axis)[0])),
                c.named("exclusive", c.b.getI64IntegerAttr(*exclusive)),
                c.named("reverse", c.b.getI64IntegerAttr(*reverse))}));
  return success();
}

/// TopK's k, once its X input is there: the attribute at opset 1, the
/// 1-element K input from opset 10 on, which must be a compile-time constant
/// (the result shape depends on it).
FailureOr<int64_t> topKCount(NodeContext &c) {
  if (failed(c.requireInputs(1)))
    return failure();
  if (c.opset < 10) {
    if (c.inputs.size() > 1)
      return c.error() << "has " << c.inputs.size()
                       << " inputs; TopK before opset 10 takes 1, with 'k' "
                          "as an attribute";
    if (!c.attr("k"))
      return c.error() << "the 'k' attribute is required before opset 10";
    return c.attrInt("k", 0);
  }
  if (c.inputs.size() > 2)
    return c.error() << "has " << c.inputs.size()
                     << " inputs; TopK takes 2 (X, K)";
  if (c.attr("k"))
    return c.error() << "attribute 'k' is not defined from opset 10 on (k is "
                        "the 'K' input)";
  FailureOr<SmallVector<int64_t>> k = c.requireConstInts(1, "K");
  if (failed(k))
    return failure();
  if (k->size() != 1 || c.inputType(1).getRank() > 1)
    return c.error() << "the 'K' input must hold one value, not "
                     << c.inputType(1);
  return (*k)[0];
}

/// TopK (opsets 1, 10, 11 and 24): the k largest or smallest elements
/// along an axis and their indices. largest and sorted came at 11 (tpc's
/// results are sorted either way), bfloat16 at 24.
LogicalResult importTopK(NodeContext &c, Results &results) {
  FailureOr<int64_t> k = topKCount(c);
  if (failed(k))
    return failure();
  if (c.opset < 11)
    for (StringRef name : {"largest", "sorted"})
      if (c.attr(name))
        return c.error() << "attribute '" << name
                         << "' is not defined before opset 11 (the model's "
                            "opset is "
                         << c.opset << ")";
  FailureOr<int64_t> largest = flagAttr(c, "largest", 1);
  if (failed(largest))
    return failure();
  FailureOr<int64_t> sorted = flagAttr(c, "sorted", 1);
  if (failed(sorted))
    return failure();
  RankedTensorType x = c.inputType(0);
  if (x.getElementType().isInteger(1))
    return c.error() << "input type " << x
                     << " is not supported (TopK takes numbers)";
  int64_t axis = c.attrInt("axis", -1);
  FailureOr<int64_t> a = normalizeAxis(axis, x.getRank());
  if (failed(a))
    return c.error() << "axis " << axis << " is out of range for rank "
                     << x.getRank();
  if (*k < 0 || *k > x.getDimSize(*a))
    return c.error() << "k is " << *k << ", outside [0, "
                     << x.getDimSize(*a) << "], the size of axis " << axis
                     << " of " << x;
  return pushAll(
      c.createInferred<TopKOp>(
          c.input(0), {c.named("k", c.b.getI64IntegerAttr(*k)),
                       c.named("axis", c.b.getI64IntegerAttr(axis)),
                       c.named("largest", c.b.getI64IntegerAttr(*largest)),
                       c.named("sorted", c.b.getI64IntegerAttr(*sorted))}),
      results);
}

LogicalResult importShape(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  SmallVector<NamedAttribute> attrs;
  if (c.attr("start"))
    attrs.push_back(c.named("start", c.b.getI64IntegerAttr(c.attrInt("start", 0))));
  if (c.attr("end"))
    attrs.push_back(c.named("end", c.b.getI64IntegerAttr(c.attrInt("end", 0))));
  return pushAll(c.createInferred<ShapeOp>(c.input(0), attrs), results);
}

LogicalResult importSize(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  return pushAll(c.createInferred<SizeOp>(c.input(0)), results);
}

LogicalResult importRange(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(3)))
    return failure();
  double v[3];
  for (int i = 0; i < 3; ++i) {
    DenseElementsAttr attr;
    if (!matchPattern(c.input(i), m_Constant(&attr)) ||
        attr.getNumElements() != 1)
      return c.error() << "start, limit and delta must be compile-time "
                          "constants: the output length would be dynamic";
    v[i] = isa<FloatType>(attr.getElementType())
               ? (*attr.getValues<APFloat>().begin()).convertToDouble()
               : double((*attr.getValues<APInt>().begin()).getSExtValue());
  }
  if (v[2] == 0)
    return c.error() << "delta is 0";
  Type elem = c.inputType(0).getElementType();
  if (c.opset >= 27 && c.attrInt("stash_type", 1) != 1 &&
      (elem.isF16() || elem.isBF16()))
    return c.error() << "stash_type " << c.attrInt("stash_type", 1)
                     << " (accumulating in " << elem
                     << ") is not supported; tpc computes Range in float "
                        "(stash_type 1)";
  int64_t n = std::max<int64_t>(0, int64_t(std::ceil((v[1] - v[0]) / v[2])));
  auto type = RankedTensorType::get({n}, c.inputType(0).getElementType());
  results.append(c.create(RangeOp::getOperationName(), type,
                          {c.input(0), c.input(1), c.input(2)}));
  return success();
}

LogicalResult importConstantOfShape(NodeContext &c, Results &results) {
  FailureOr<SmallVector<int64_t>> shape = c.requireConstInts(0, "input");
  if (failed(shape))
    return failure();
  DenseElementsAttr value;
  if (const ::onnx::AttributeProto *a = c.attr("value")) {
    std::string err;
    value = tensorToAttr(c.b.getContext(), a->t(), err);
    if (!value)
      return c.error() << err;
  } else {
    value = DenseElementsAttr::get(
        RankedTensorType::get({1}, c.b.getF32Type()), 0.0f);
  }
  auto type = RankedTensorType::get(*shape, value.getElementType());
  results.append(c.create(ConstantOfShapeOp::getOperationName(), type, {},
                          {c.named("value", value)}));
  return success();
}

LogicalResult importConstant(NodeContext &c, Results &results) {
  if (c.node.attribute_size() != 1)
    return c.error() << "expects exactly one value attribute";
  const ::onnx::AttributeProto &a = c.node.attribute(0);
  MLIRContext *ctx = c.b.getContext();
  DenseElementsAttr value;
  std::string name = a.name();
  if (name == "value") {
    // External data was read (or made a weight) before the node's import.
    std::string err;
    value = tensorToAttr(ctx, a.t(), err);
    if (!value)
      return c.error() << err;
  } else if (name == "value_float") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, c.b.getF32Type()),
                                   a.f());
  } else if (name == "value_floats") {
    SmallVector<float> v(a.floats().begin(), a.floats().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({int64_t(v.size())}, c.b.getF32Type()),
        ArrayRef<float>(v));
  } else if (name == "value_int") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, c.b.getI64Type()),
                                   int64_t(a.i()));
  } else if (name == "value_ints") {
    SmallVector<int64_t> v(a.ints().begin(), a.ints().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({int64_t(v.size())}, c.b.getI64Type()),
        ArrayRef<int64_t>(v));
  } else {
    return c.error() << "unsupported value attribute '" << name << "'";
  }
  results.push_back(c.b.create<ConstantOp>(c.loc, value.getType(), value));
  return success();
}

/// Reductions; `axesFromInput` for the opsets where axes moved to an input.
template <typename OpTy, bool axesFromInput>
LogicalResult importReduce(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  FailureOr<SmallVector<NamedAttribute>> attrs = c.reduceAttrs(axesFromInput);
  if (failed(attrs))
    return failure();
  return pushAll(c.createInferred<OpTy>(c.input(0), *attrs), results);
}

template <typename OpTy>
LogicalResult importArg(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  return pushAll(
      c.createInferred<OpTy>(
          c.input(0),
          {c.named("axis", c.b.getI64IntegerAttr(c.attrInt("axis", 0))),
           c.named("keepdims", c.b.getI64IntegerAttr(c.attrInt("keepdims", 1))),
           c.named("select_last_index",
                   c.b.getI64IntegerAttr(c.attrInt("select_last_index", 0)))}),
      results);
}

/// A reduction's versions: those in `attrVersions` take the axes as an
/// attribute, those in `inputVersions` as an input.
template <class Op>
void addReduce(std::vector<OpTableEntry> &t,
               std::initializer_list<int> attrVersions,
               std::initializer_list<int> inputVersions) {
  static constexpr llvm::StringLiteral kAs = Op::getOperationName();
  const char *name = kAs.data() + std::strlen("onnx.");
  addVersions(t, name, attrVersions, importReduce<Op, false>, kAs.data());
  addVersions(t, name, inputVersions, importReduce<Op, true>, kAs.data());
}

} // namespace

void addShapeImporters(std::vector<OpTableEntry> &t) {
  // Each op's versions, all imported alike: where versions differ, the
  // handler looks at the opset (Squeeze-1/11, Unsqueeze-1/11 and
  // Split-2/11 take axes and sizes as attributes, Slice-1/10 and Pad-2
  // their attributes, ReduceSum before 13 and the other reductions before
  // 18 their axes attribute, TopK-1 its k attribute); the other versions
  // added element types or negative axes. Opsets 23 to 25 added only
  // element types tpc does not take (4-bit integers and floats,
  // float8e8m0, 2-bit integers).
  addVersions(t, "Reshape", {5, 13, 14, 19, 21, 23, 24, 25}, importReshape,
              "onnx.Reshape");
  addVersions(t, "Flatten", {1, 9, 11, 13, 21, 23, 24, 25}, importFlatten,
              "onnx.Reshape");
  addVersions(t, "Squeeze", {1, 11, 13, 21, 23, 24, 25}, importSqueeze,
              "onnx.Reshape");
  addVersions(t, "Unsqueeze", {1, 11, 13, 21, 23, 24, 25}, importUnsqueeze,
              "onnx.Reshape");
  addVersions(t, "Transpose", {1, 13, 21, 23, 24, 25}, importTranspose,
              "onnx.Transpose");
  addVersions(t, "Size", {1, 13, 19, 21, 23, 24, 25}, importSize, "onnx.Size");
  addVersions(t, "Shape", {1, 13, 15, 19, 21, 23, 24, 25}, importShape,
              "onnx.Shape (folded)");
  addVersions(t, "Expand", {8, 13}, importExpand, "onnx.Expand");
  addVersions(t, "Concat", {4, 11, 13}, importConcat, "onnx.Concat");
  addVersions(t, "Split", {2, 11, 13, 18}, importSplit, "onnx.Split");
  addVersions(t, "Slice", {1, 10, 11, 13}, importSlice, "onnx.Slice");
  addVersions(t, "Gather", {1, 11, 13}, importGather<GatherOp>, "onnx.Gather");
  addVersions(t, "GatherElements", {11, 13}, importGather<GatherElementsOp>,
              "onnx.GatherElements");
  // GatherND-11 has no batch_dims (it is 0); 12 added it.
  addVersions(t, "GatherND", {11, 12, 13}, importGatherND, kGatherNDImportsAs);
  addVersions(t, "Tile", {6, 13}, importTile, "onnx.Tile");
  addVersions(t, "Pad", {2, 11, 13, 18, 19, 21, 23, 24, 25}, importPad,
              "onnx.Pad");
  addVersions(t, "Trilu", {14}, importTrilu, "onnx.Trilu");
  // Constant-11 added sparse_value (refused), 12 value_float(s)/int(s).
  addVersions(t, "Constant", {1, 9, 11, 12, 13, 19, 21, 23, 24, 25},
              importConstant, "onnx.Constant");
  addVersions(t, "ConstantOfShape", {9, 20, 21, 23, 24, 25},
              importConstantOfShape, "onnx.ConstantOfShape (folded)");
  // Range-27 added stash_type, which only float16 and bfloat16 read.
  addVersions(t, "Range", {11, 27}, importRange, "onnx.Range (folded)");
  // 13 added bf16, 16 the add and mul reductions, 18 max and min.
  addVersions(t, "ScatterND", {11, 13, 16, 18}, importScatterND,
              "onnx.ScatterND");
  addVersions(t, "ScatterElements", {11, 13, 16, 18}, importScatterElements,
              "onnx.ScatterElements");
  // Scatter-11 only deprecated Scatter-9 for ScatterElements-11.
  addVersions(t, "Scatter", {9, 11}, importScatterElements,
              "onnx.ScatterElements");
  // 10 moved k to an input, 11 added largest, sorted and integers, 24 bf16.
  addVersions(t, "TopK", {1, 10, 11, 24}, importTopK, "onnx.TopK");
  // Opset 14 only added f16 and bf16 inputs.
  addVersions(t, "CumSum", {11, 14}, importCumSum, "onnx.CumSum");
  // ArgMax-11 has no select_last_index (it is 0); 12 added it.
  addVersions(t, "ArgMax", {1, 11, 12, 13}, importArg<ArgMaxOp>, "onnx.ArgMax");
  addVersions(t, "ArgMin", {1, 11, 12, 13}, importArg<ArgMinOp>, "onnx.ArgMin");
  // Reductions: 11 added negative axes, ReduceMax-12 and ReduceMin-12 int8
  // and uint8, -20 bool.
  addReduce<ReduceSumOp>(t, {1, 11}, {13});
  addReduce<ReduceMeanOp>(t, {1, 11, 13}, {18});
  addReduce<ReduceMaxOp>(t, {1, 11, 12, 13}, {18, 20});
  addReduce<ReduceMinOp>(t, {1, 11, 12, 13}, {18, 20});
  addReduce<ReduceProdOp>(t, {1, 11, 13}, {18});
  addReduce<ReduceL2Op>(t, {1, 11, 13}, {18});
  addReduce<ReduceSumSquareOp>(t, {1, 11, 13}, {18});
}

} // namespace tpc
