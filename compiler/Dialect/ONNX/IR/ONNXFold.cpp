//===- ONNXFold.cpp - constant folding through the CPU kernels ------------===//
//
// Shape plumbing in exported graphs (Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape, Range, ConstantOfShape, arithmetic on shapes) folds once input
// shapes are static. Instead of a hand-written folder per op, an op whose
// operands are all constants is evaluated with the CPU reference kernel of
// the same name, so folding agrees with what the runtime computes.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/KernelBridge.h"
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "kernels/cpu/Registry.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace tpc::onnx {

/// Results larger than this stay ops: folding them would bloat the IR.
static constexpr int64_t kMaxFoldedElements = 1 << 18;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// Folds that need no constant data.
static OpFoldResult foldFromTypes(Operation *op) {
  if (auto shape = dyn_cast<ShapeOp>(op)) {
    auto rt = shape.getData().getType();
    int64_t rank = rt.getRank();
    int64_t n = shape.getType().getNumElements();
    int64_t start = shape.getStart() ? int64_t(*shape.getStart()) : 0;
    if (start < 0)
      start += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    SmallVector<int64_t> dims(rt.getShape().begin() + start,
                              rt.getShape().begin() + start + n);
    return DenseElementsAttr::get(shape.getType(), ArrayRef<int64_t>(dims));
  }
  if (auto size = dyn_cast<SizeOp>(op))
    return DenseElementsAttr::get(size.getType(),
                                  size.getData().getType().getNumElements());
  // Ops that leave their single operand unchanged when types agree.
  if (isa<ReshapeOp, ExpandOp, CastOp>(op) &&
      op->getOperand(0).getType() == op->getResult(0).getType())
    return op->getOperand(0);
  if (auto t = dyn_cast<TransposeOp>(op)) {
    bool identity = true;
    for (auto [i, p] : llvm::enumerate(t.getPerm()))
      identity &= int64_t(i) == p;
    if (identity)
      return t.getData();
  }
  return {};
}

/// Runs the op's kernel on constant operands; fills `results` on success.
static LogicalResult evaluate(Operation *op, ArrayRef<Attribute> operands,
                              SmallVectorImpl<OpFoldResult> &results) {
  for (Type t : op->getResultTypes()) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || !rt.hasStaticShape())
      return failure();
    // Counted without overflow: getNumElements() wraps for shapes whose
    // product passes int64, which would pass the limit.
    int64_t n = 1;
    for (int64_t d : rt.getShape())
      if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > kMaxFoldedElements)
        return failure();
  }
  const cpu::KernelDef *def = cpu::lookupKernel(kernelName(op).str());
  if (!def)
    return failure();
  std::vector<TensorDesc> inDescs, outDescs;
  std::vector<std::vector<uint8_t>> inData, outData;
  for (auto [value, attr] : llvm::zip(op->getOperands(), operands)) {
    auto elements = dyn_cast_or_null<ElementsAttr>(attr);
    std::optional<TensorDesc> desc = descOf(value.getType());
    if (!elements || !desc)
      return failure();
    std::optional<std::vector<uint8_t>> bytes = elementsBytes(elements);
    if (!bytes || bytes->size() != desc->bytes())
      return failure();
    inDescs.push_back(*desc);
    inData.push_back(std::move(*bytes));
  }
  for (Type t : op->getResultTypes()) {
    std::optional<TensorDesc> desc = descOf(t);
    if (!desc)
      return failure();
    outDescs.push_back(*desc);
    outData.emplace_back(desc->bytes());
  }
  std::unique_ptr<cpu::PreparedKernel> kernel;
  if (!def->prepare(inDescs, outDescs, kernelAttrs(op), kernel).isOk())
    return failure();
  std::vector<const void *> ins;
  std::vector<void *> outs;
  for (auto &d : inData)
    ins.push_back(d.data());
  for (auto &d : outData)
    outs.push_back(d.data());
  kernel->run(ins.data(), outs.data(), cpu::ExecContext{});
  if (!kernel->runStatus().isOk())
    return failure(); // left to the run, which reports the bad index
  for (auto [t, bytes] : llvm::zip(op->getResultTypes(), outData))
    results.push_back(elementsFromBytes(cast<RankedTensorType>(t), bytes));
  return success();
}

OpFoldResult foldOp(Operation *op, ArrayRef<Attribute> operands) {
  if (OpFoldResult r = foldFromTypes(op))
    return r;
  SmallVector<OpFoldResult, 1> results;
  if (failed(evaluate(op, operands, results)))
    return {};
  return results.front();
}

LogicalResult foldMultiResultOp(Operation *op, ArrayRef<Attribute> operands,
                                SmallVectorImpl<OpFoldResult> &results) {
  return evaluate(op, operands, results);
}

} // namespace tpc::onnx
