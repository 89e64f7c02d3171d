//===- ONNXOps.cpp - onnx op type inference and verifiers -----------------===//
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "compiler/Dialect/TP/IR/TPOps.h"
#include "kernels/Movement.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace tpc::onnx;

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static LogicalResult err(std::optional<Location> loc, const Twine &msg) {
  return emitOptionalError(loc, msg);
}

/// One result of `x`'s element type and shape `shape`.
static LogicalResult inferLike(RankedTensorType x, ArrayRef<int64_t> shape,
                               SmallVectorImpl<Type> &results) {
  results.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

/// `axis` of `x` in [0, rank); the error "`op` axis out of range" when it
/// is outside [-rank, rank).
static FailureOr<int64_t> inferAxis(std::optional<Location> loc, int64_t axis,
                                    RankedTensorType x, StringRef op) {
  FailureOr<int64_t> a = normalizeAxis(axis, x.getRank());
  if (failed(a))
    return err(loc, op + " axis out of range");
  return a;
}

/// The result dim i of an op on `x` (inferPerAxis), or failure after an
/// error.
using AxisDim = function_ref<FailureOr<int64_t>(RankedTensorType x, int64_t i)>;

/// One result of `x`'s element type whose dim i is `dim(x, i)`, for an op
/// whose `entries` hold `perAxis` values for each axis of `x` (else the
/// error `badLength`).
static LogicalResult inferPerAxis(std::optional<Location> loc,
                                  RankedTensorType x, ArrayRef<int64_t> entries,
                                  int64_t perAxis, StringRef badLength,
                                  AxisDim dim, SmallVectorImpl<Type> &results) {
  if ((int64_t)entries.size() != perAxis * x.getRank())
    return err(loc, badLength);
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < x.getRank(); ++i) {
    FailureOr<int64_t> d = dim(x, i);
    if (failed(d))
      return failure();
    out.push_back(*d);
  }
  return inferLike(x, out, results);
}

LogicalResult tpc::onnx::inferBroadcast(std::optional<Location> loc,
                                        ValueRange operands, Type elem,
                                        SmallVectorImpl<Type> &results,
                                        bool sameElementType) {
  if (operands.empty())
    return err(loc, "expects at least one operand");
  SmallVector<ArrayRef<int64_t>> shapes;
  Type first = tensorOf(operands[0]).getElementType();
  for (Value v : operands) {
    RankedTensorType t = tensorOf(v);
    if (sameElementType && t.getElementType() != first)
      return err(loc, "operands have different element types");
    shapes.push_back(t.getShape());
  }
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  if (failed(shape))
    return err(loc, "operand shapes do not broadcast");
  results.push_back(RankedTensorType::get(*shape, elem ? elem : first));
  return success();
}

LogicalResult IsNaNOp::inferReturnTypes(MLIRContext *ctx,
                                        std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  results.push_back(RankedTensorType::get(tensorOf(adaptor.getX()).getShape(),
                                          IntegerType::get(ctx, 1)));
  return success();
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  if (tensorOf(adaptor.getX()).getElementType() !=
      tensorOf(adaptor.getY()).getElementType())
    return err(loc, "X and Y have different element types");
  return inferBroadcast(loc, adaptor.getOperands(),
                        tensorOf(adaptor.getX()).getElementType(), results,
                        /*sameElementType=*/false);
}

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  RankedTensorType a = tensorOf(adaptor.getA()), b = tensorOf(adaptor.getB());
  if (a.getElementType() != b.getElementType())
    return err(loc, "MatMul operands have different element types");
  if (a.getRank() == 0 || b.getRank() == 0)
    return err(loc, "MatMul operands must have rank >= 1");
  SmallVector<int64_t> as(a.getShape()), bs(b.getShape());
  bool promoteA = as.size() == 1, promoteB = bs.size() == 1;
  if (promoteA)
    as.insert(as.begin(), 1);
  if (promoteB)
    bs.push_back(1);
  int64_t k = as.back(), kb = bs[bs.size() - 2];
  if (k != kb)
    return err(loc, "MatMul contraction dims differ: " + Twine(k) + " vs " +
                        Twine(kb));
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(as).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bs).drop_back(2);
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes({aBatch, bBatch});
  if (failed(batch))
    return err(loc, "MatMul batch dims do not broadcast");
  SmallVector<int64_t> out = *batch;
  if (!promoteA)
    out.push_back(as[as.size() - 2]);
  if (!promoteB)
    out.push_back(bs.back());
  return inferLike(a, out, results);
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  RankedTensorType a = tensorOf(adaptor.getA()), b = tensorOf(adaptor.getB());
  if (a.getRank() != 2 || b.getRank() != 2)
    return err(loc, "Gemm operands A and B must be 2-D");
  int64_t m = adaptor.getTransA() ? a.getDimSize(1) : a.getDimSize(0);
  int64_t ka = adaptor.getTransA() ? a.getDimSize(0) : a.getDimSize(1);
  int64_t kb = adaptor.getTransB() ? b.getDimSize(1) : b.getDimSize(0);
  int64_t n = adaptor.getTransB() ? b.getDimSize(0) : b.getDimSize(1);
  if (ka != kb)
    return err(loc, "Gemm contraction dims differ: " + Twine(ka) + " vs " +
                        Twine(kb));
  if (Value c = adaptor.getC()) {
    int64_t mn[2] = {m, n};
    FailureOr<SmallVector<int64_t>> s =
        broadcastShapes({tensorOf(c).getShape(), mn});
    if (failed(s) || (*s)[0] != m || (*s)[1] != n)
      return err(loc, "Gemm C does not broadcast to [M, N]");
  }
  return inferLike(a, {m, n}, results);
}

LogicalResult LayerNormalizationOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  RankedTensorType x = tensorOf(adaptor.getX());
  if (failed(inferAxis(loc, adaptor.getAxis(), x, "LayerNormalization")))
    return failure();
  results.push_back(x);
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  ArrayRef<int64_t> perm = adaptor.getPerm();
  SmallVector<bool> seen(perm.size(), false);
  auto permuted = [&](RankedTensorType x, int64_t i) -> FailureOr<int64_t> {
    int64_t p = perm[i];
    if (p < 0 || p >= x.getRank() || seen[p])
      return err(loc, "Transpose perm is not a permutation");
    seen[p] = true;
    return x.getDimSize(p);
  };
  return inferPerAxis(loc, tensorOf(adaptor.getData()), perm, 1,
                      "Transpose perm has the wrong length", permuted, results);
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  if (adaptor.getInputs().empty())
    return err(loc, "Concat needs at least one input");
  RankedTensorType first = tensorOf(adaptor.getInputs()[0]);
  FailureOr<int64_t> axis = inferAxis(loc, adaptor.getAxis(), first, "Concat");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> out(first.getShape());
  out[*axis] = 0;
  for (Value v : adaptor.getInputs()) {
    RankedTensorType t = tensorOf(v);
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return err(loc, "Concat inputs differ in rank or element type");
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (i != *axis && t.getDimSize(i) != first.getDimSize(i))
        return err(loc, "Concat inputs differ off the concat axis");
    out[*axis] += t.getDimSize(*axis);
  }
  return inferLike(first, out, results);
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  RankedTensorType x = tensorOf(adaptor.getInput());
  FailureOr<int64_t> axis = inferAxis(loc, adaptor.getAxis(), x, "Split");
  if (failed(axis))
    return failure();
  int64_t total = 0;
  for (int64_t s : adaptor.getSplit()) {
    if (s < 0)
      return err(loc, "Split sizes must be non-negative");
    total += s;
    SmallVector<int64_t> shape(x.getShape());
    shape[*axis] = s;
    results.push_back(RankedTensorType::get(shape, x.getElementType()));
  }
  if (total != x.getDimSize(*axis))
    return err(loc, "Split sizes sum to " + Twine(total) + ", not the axis size " +
                        Twine(x.getDimSize(*axis)));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  RankedTensorType x = tensorOf(adaptor.getData());
  ArrayRef<int64_t> starts = adaptor.getStarts(), ends = adaptor.getEnds(),
                    axes = adaptor.getAxes(), steps = adaptor.getSteps();
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return err(loc, "Slice starts, ends, axes and steps differ in length");
  SmallVector<int64_t> out(x.getShape());
  SmallVector<bool> seen(x.getRank(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = normalizeAxis(axes[i], x.getRank());
    if (failed(axis) || seen[*axis])
      return err(loc, "Slice axes out of range or repeated");
    seen[*axis] = true;
    if (steps[i] == 0)
      return err(loc, "Slice step is 0");
    out[*axis] =
        sliceAxis(x.getDimSize(*axis), starts[i], ends[i], steps[i]).size;
  }
  return inferLike(x, out, results);
}

static LogicalResult inferGather(std::optional<Location> loc, Value data,
                                 Value indices, int64_t axisAttr,
                                 bool elements,
                                 SmallVectorImpl<Type> &results) {
  RankedTensorType x = tensorOf(data), idx = tensorOf(indices);
  FailureOr<int64_t> axis = inferAxis(loc, axisAttr, x, "gather");
  if (failed(axis))
    return failure();
  if (elements) {
    if (idx.getRank() != x.getRank())
      return err(loc, "GatherElements indices must have the data's rank");
    return inferLike(x, idx.getShape(), results);
  }
  SmallVector<int64_t> out(x.getShape().take_front(*axis));
  llvm::append_range(out, idx.getShape());
  llvm::append_range(out, x.getShape().drop_front(*axis + 1));
  return inferLike(x, out, results);
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  return inferGather(loc, adaptor.getData(), adaptor.getIndices(),
                     adaptor.getAxis(), false, results);
}

LogicalResult GatherElementsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  return inferGather(loc, adaptor.getData(), adaptor.getIndices(),
                     adaptor.getAxis(), true, results);
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  RankedTensorType x = tensorOf(adaptor.getData());
  RankedTensorType idx = tensorOf(adaptor.getIndices());
  int64_t b = adaptor.getBatchDims();
  if (idx.getRank() < 1 || b < 0 || b >= std::min(x.getRank(), idx.getRank()))
    return err(loc, "GatherND batch_dims or indices rank out of range");
  int64_t k = idx.getShape().back();
  if (k < 1 || b + k > x.getRank())
    return err(loc, "GatherND indices' last dimension is out of range");
  for (int64_t i = 0; i < b; ++i)
    if (x.getDimSize(i) != idx.getDimSize(i))
      return err(loc, "GatherND batch dimensions differ");
  SmallVector<int64_t> out(idx.getShape().drop_back());
  llvm::append_range(out, x.getShape().drop_front(b + k));
  return inferLike(x, out, results);
}

LogicalResult TileOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  ArrayRef<int64_t> reps = adaptor.getRepeats();
  auto tiled = [&](RankedTensorType x, int64_t i) -> FailureOr<int64_t> {
    if (reps[i] < 0)
      return err(loc, "Tile repeats must be non-negative");
    return x.getDimSize(i) * reps[i];
  };
  return inferPerAxis(loc, tensorOf(adaptor.getInput()), reps, 1,
                      "Tile repeats must have one entry per axis", tiled,
                      results);
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  ArrayRef<int64_t> pads = adaptor.getPads();
  auto padded = [&](RankedTensorType x, int64_t i) -> FailureOr<int64_t> {
    int64_t d = x.getDimSize(i) + pads[i] + pads[i + x.getRank()];
    if (d < 0)
      return err(loc, "Pad makes a negative dimension");
    return d;
  };
  return inferPerAxis(loc, tensorOf(adaptor.getData()), pads, 2,
                      "Pad pads must have two entries per axis", padded,
                      results);
}

LogicalResult ShapeOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  int64_t rank = tensorOf(adaptor.getData()).getRank();
  int64_t start = adaptor.getStart() ? int64_t(*adaptor.getStart()) : 0;
  int64_t end = adaptor.getEnd() ? int64_t(*adaptor.getEnd()) : rank;
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  results.push_back(RankedTensorType::get({std::max<int64_t>(end - start, 0)},
                                          IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult SizeOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location>,
                                       Adaptor, SmallVectorImpl<Type> &results) {
  results.push_back(RankedTensorType::get({}, IntegerType::get(ctx, 64)));
  return success();
}

static LogicalResult inferReduce(std::optional<Location> loc, Value data,
                                 ArrayRef<int64_t> axes, bool keepDims,
                                 bool noopWithEmptyAxes, Type elem,
                                 SmallVectorImpl<Type> &results) {
  RankedTensorType x = tensorOf(data);
  SmallVector<int64_t> norm;
  if (axes.empty() && !noopWithEmptyAxes) {
    for (int64_t i = 0; i < x.getRank(); ++i)
      norm.push_back(i);
  }
  for (int64_t a : axes) {
    FailureOr<int64_t> n = normalizeAxis(a, x.getRank());
    if (failed(n))
      return err(loc, "reduction axis " + Twine(a) + " out of range");
    norm.push_back(*n);
  }
  results.push_back(RankedTensorType::get(
      reducedShape(x.getShape(), norm, keepDims),
      elem ? elem : x.getElementType()));
  return success();
}

#define TPC_REDUCE_OP(OP)                                                      \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &results) {         \
    return inferReduce(loc, adaptor.getData(), adaptor.getAxes(),              \
                       adaptor.getKeepdims(), adaptor.getNoopWithEmptyAxes(),  \
                       nullptr, results);                                      \
  }
TPC_REDUCE_OP(ReduceMeanOp)
TPC_REDUCE_OP(ReduceSumOp)
TPC_REDUCE_OP(ReduceMaxOp)
TPC_REDUCE_OP(ReduceMinOp)
TPC_REDUCE_OP(ReduceProdOp)
TPC_REDUCE_OP(ReduceL2Op)
TPC_REDUCE_OP(ReduceSumSquareOp)
#undef TPC_REDUCE_OP

#define TPC_ARG_OP(OP)                                                         \
  LogicalResult OP::inferReturnTypes(MLIRContext *ctx,                         \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &results) {         \
    int64_t axis = adaptor.getAxis();                                          \
    return inferReduce(loc, adaptor.getData(), {axis}, adaptor.getKeepdims(),  \
                       false, IntegerType::get(ctx, 64), results);             \
  }
TPC_ARG_OP(ArgMaxOp)
TPC_ARG_OP(ArgMinOp)
#undef TPC_ARG_OP

LogicalResult TopKOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  RankedTensorType x = tensorOf(adaptor.getX());
  int64_t k = adaptor.getK();
  FailureOr<int64_t> axis = inferAxis(loc, adaptor.getAxis(), x, "TopK");
  if (failed(axis))
    return failure();
  if (k < 0 || k > x.getDimSize(*axis))
    return err(loc, "TopK k " + Twine(k) + " is outside [0, " +
                        Twine(x.getDimSize(*axis)) + "]");
  SmallVector<int64_t> shape(x.getShape());
  shape[*axis] = k;
  results.push_back(RankedTensorType::get(shape, x.getElementType()));
  results.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  RankedTensorType t = getType();
  // A part of a weight quantized as the engine is written
  // (--tpc-quantize-weights): the bytes are the float source's.
  if (auto q = (*this)->getAttrOfType<DictionaryAttr>("onnx.quantize")) {
    auto part = q.getAs<StringAttr>("part");
    // A QDQ weight's codes, scales or zero points repacked from the bytes
    // of its initializer: [k, n] codes or [k / block_size, n] parameters.
    if (part && part.getValue().starts_with("repack_")) {
      auto kk = q.getAs<IntegerAttr>("k"), nn = q.getAs<IntegerAttr>("n");
      auto bits = q.getAs<IntegerAttr>("bits");
      auto block = q.getAs<IntegerAttr>("block_size");
      auto from = q.getAs<TypeAttr>("source_type");
      if (!kk || !nn || !bits || !block || !from || block.getInt() <= 0)
        return emitOpError("onnx.quantize of a repacked weight needs k, n, "
                           "bits, block_size and source_type");
      int64_t count = part.getValue() == "repack_codes"
                          ? kk.getInt() * nn.getInt()
                          : kk.getInt() / block.getInt() * nn.getInt();
      int64_t width = from.getValue().getIntOrFloatBitWidth();
      int64_t bytes = (count * width + 7) / 8;
      if (getLength() != bytes)
        return emitOpError("length ") << getLength() << " differs from the "
                                      << bytes << " bytes of its source";
      return success();
    }
    auto src = (*this)->getAttrOfType<DenseI64ArrayAttr>(tp::kSourceShapeAttr);
    auto from = q.getAs<TypeAttr>("source_type");
    if (!src || src.size() != 2 || !from || !part ||
        !isa<FloatType>(from.getValue()) || !q.getAs<IntegerAttr>("bits") ||
        !q.getAs<IntegerAttr>("block_size") || !q.getAs<IntegerAttr>("k_axis"))
      return emitOpError("onnx.quantize needs part, bits, block_size, k_axis, "
                         "source_type and a 2-D tp.source_shape");
    int64_t bytes = ShapedType::getNumElements(src.asArrayRef()) *
                    elementBytes(from.getValue());
    if (getLength() != bytes)
      return emitOpError("length ") << getLength() << " differs from the "
                                    << bytes << " bytes of its float source";
    return success();
  }
  Type stored = t.getElementType();
  // After --tpc-convert-float-type the file holds another element type.
  if (auto src = (*this)->getAttrOfType<TypeAttr>("onnx.source_type")) {
    if (!src.getValue().isF32() || !isa<FloatType>(t.getElementType()))
      return emitOpError("onnx.source_type must be f32 on a float weight");
    stored = src.getValue();
  }
  int64_t numel = t.getNumElements();
  // A rank's slice (after partitioning) covers part of the stored tensor.
  if (auto src = (*this)->getAttrOfType<DenseI64ArrayAttr>(tp::kSourceShapeAttr))
    numel = ShapedType::getNumElements(src.asArrayRef());
  int64_t bytes = numel * elementBytes(stored);
  if (getLength() != bytes)
    return emitOpError("length ") << getLength() << " differs from the "
                                  << bytes << " bytes of " << t;
  if ((int64_t)getOffset() < 0)
    return emitOpError("negative offset");
  return success();
}

/// The error "`name` must be "`a`" or "`b`", not "`value`"" unless `value` is
/// one of them.
static LogicalResult verifyEither(Operation *op, StringRef name,
                                  StringRef value, StringRef a, StringRef b) {
  if (value != a && value != b)
    return op->emitOpError(name) << " must be \"" << a << "\" or \"" << b
                                 << "\", not \"" << value << "\"";
  return success();
}

LogicalResult GeluOp::verify() {
  return verifyEither(*this, "approximate", getApproximate(), "none", "tanh");
}

template <typename OpTy> static LogicalResult verifyAxisOp(OpTy op) {
  if (failed(normalizeAxis(op.getAxis(), op.getType().getRank())))
    return op.emitOpError("axis ") << int64_t(op.getAxis()) << " out of range";
  return success();
}
LogicalResult SoftmaxOp::verify() { return verifyAxisOp(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifyAxisOp(*this); }

LogicalResult CumSumOp::verify() {
  if (failed(verifyAxisOp(*this)))
    return failure();
  // ONNX defines the flags as 0 or 1 only; the kernels refuse other values,
  // so catch them here rather than when an engine loads.
  if (getExclusive() != 0 && getExclusive() != 1)
    return emitOpError("exclusive must be 0 or 1, not ") << getExclusive();
  if (getReverse() != 0 && getReverse() != 1)
    return emitOpError("reverse must be 0 or 1, not ") << getReverse();
  return success();
}

/// A scatter's reduction: one the kernels know, on data they can combine
/// (the arithmetic dtypes, not bool or 8-bit).
static LogicalResult verifyScatterReduction(Operation *op, StringRef r,
                                            Type elem) {
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    return op->emitOpError(
               "reduction must be none, add, mul, max or min, not \"")
           << r << "\"";
  if (r != "none" && (elem.isInteger(1) || elem.isInteger(8)))
    return op->emitOpError("reduction \"")
           << r << "\" is not supported for " << elem << " data";
  return success();
}

LogicalResult ScatterNDOp::verify() {
  RankedTensorType data = getData().getType();
  RankedTensorType indices = getIndices().getType();
  RankedTensorType updates = getUpdates().getType();
  FailureOr<SmallVector<int64_t>> want = scatterNDUpdatesShape(data, indices);
  if (failed(want))
    return emitOpError("indices ")
           << indices << " must have rank >= 1 and a last dim <= data rank "
           << data.getRank();
  if (updates.getElementType() != data.getElementType() ||
      updates.getShape() != ArrayRef<int64_t>(*want))
    return emitOpError("updates ")
           << updates << " do not match data " << data << " and indices "
           << indices << " (want shape indices.shape[:-1] + data.shape[k:])";
  return verifyScatterReduction(*this, getReduction(), data.getElementType());
}

LogicalResult ScatterElementsOp::verify() {
  RankedTensorType data = getData().getType();
  std::string problem = scatterElementsProblem(
      data, getIndices().getType(), getUpdates().getType(), getAxis());
  if (!problem.empty())
    return emitOpError(problem);
  return verifyScatterReduction(*this, getReduction(), data.getElementType());
}

LogicalResult TopKOp::verify() {
  if (getLargest() != 0 && getLargest() != 1)
    return emitOpError("largest must be 0 or 1, not ") << getLargest();
  if (getSorted() != 0 && getSorted() != 1)
    return emitOpError("sorted must be 0 or 1, not ") << getSorted();
  return success();
}

LogicalResult BitShiftOp::verify() {
  return verifyEither(*this, "direction", getDirection(), "LEFT", "RIGHT");
}

LogicalResult BitCastOp::verify() {
  std::optional<int64_t> to = onnxTypeNumber(getType().getElementType());
  if (!to || *to != int64_t(getTo()))
    return emitOpError("to = ") << getTo() << " does not name the result type "
                                << getType().getElementType();
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError("result shape differs from the input shape");
  // bool is a byte, as ONNX counts it.
  auto width = [](Type t) { return t.isInteger(1) ? 8u : t.getIntOrFloatBitWidth(); };
  if (width(getInput().getType().getElementType()) !=
      width(getType().getElementType()))
    return emitOpError("the bit widths of ")
           << getInput().getType().getElementType() << " and "
           << getType().getElementType() << " differ";
  return success();
}

LogicalResult CastOp::verify() {
  Type want = onnxElementType(getContext(), getTo());
  if (!want)
    return emitOpError("unsupported target type number ") << getTo();
  if (want != getType().getElementType())
    return emitOpError("result element type ")
           << getType().getElementType() << " differs from `to` (" << want
           << ")";
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError("result shape differs from the input shape");
  if (std::optional<uint64_t> sat = getSaturate(); sat && *sat > 1)
    return emitOpError("saturate must be 0 or 1, not ") << int64_t(*sat);
  return success();
}

LogicalResult ReshapeOp::verify() {
  if (getData().getType().getNumElements() != getType().getNumElements())
    return emitOpError("element count changes from ")
           << getData().getType() << " to " << getType();
  if (getData().getType().getElementType() != getType().getElementType())
    return emitOpError("element type changes");
  return success();
}

LogicalResult ExpandOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  FailureOr<SmallVector<int64_t>> s =
      broadcastShapes({in.getShape(), out.getShape()});
  if (failed(s) || ArrayRef<int64_t>(*s) != out.getShape())
    return emitOpError("cannot broadcast ") << in << " to " << out;
  return success();
}

#define GET_OP_CLASSES
#include "compiler/Dialect/ONNX/IR/ONNXOps.cpp.inc"
