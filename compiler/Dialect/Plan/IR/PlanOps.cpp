//===- PlanOps.cpp - plan dialect -----------------------------------------===//
#include "compiler/Dialect/Plan/IR/PlanOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace tpc::plan;

#include "compiler/Dialect/Plan/IR/PlanOpsDialect.cpp.inc"

void PlanDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/Plan/IR/PlanOps.cpp.inc"
      >();
}

LogicalResult KernelOp::verify() {
  if (getKernel().empty())
    return emitOpError("needs a kernel name");
  if (auto offs = getOffsets())
    if (offs->size() != getNumResults())
      return emitOpError("has ") << offs->size() << " offsets for "
                                 << getNumResults() << " results";
  return success();
}

LogicalResult WeightOp::verify() {
  ArrayRef<int64_t> src = getSourceShape();
  RankedTensorType t = getType();
  // A part of a block-quantized float source: its shape is the part's.
  if (std::optional<DictionaryAttr> q = getQuantize()) {
    auto part = q->getAs<StringAttr>("part");
    if (part && part.getValue().starts_with("repack_"))
      return src.size() == size_t(t.getRank())
                 ? success()
                 : emitOpError("source shape rank differs from the result "
                               "rank");
    return src.size() == 2 ? success()
                           : emitOpError("a quantized weight's source is 2-D");
  }
  if (std::optional<Type> from = getSourceType()) {
    Type to = t.getElementType();
    if (!from->isF32() || !(to.isF16() || to.isBF16()))
      return emitOpError("converts ")
             << *from << " to " << to
             << "; only f32 weights convert, to f16 or bf16";
  }
  if (int64_t(src.size()) != t.getRank())
    return emitOpError("source shape rank differs from the result rank");
  if (!getRanges()) {
    if (src != t.getShape())
      return emitOpError("unsliced weight must have its source shape");
    return success();
  }
  if (!getAxis())
    return emitOpError("ranges need an axis");
  int64_t axis = *getAxis();
  if (axis < 0 || axis >= t.getRank())
    return emitOpError("axis out of range");
  ArrayRef<int64_t> r = *getRanges();
  if (r.size() % 2 != 0)
    return emitOpError("ranges must be [start, size] pairs");
  int64_t total = 0;
  for (size_t i = 0; i < r.size(); i += 2) {
    if (r[i] < 0 || r[i + 1] < 0 || r[i] + r[i + 1] > src[axis])
      return emitOpError("range [") << r[i] << ", " << r[i] + r[i + 1]
                                    << ") leaves the source axis of size "
                                    << src[axis];
    total += r[i + 1];
  }
  for (int64_t d = 0; d < t.getRank(); ++d) {
    int64_t want = d == axis ? total : src[d];
    if (t.getDimSize(d) != want)
      return emitOpError("result dimension ") << d << " is " << t.getDimSize(d)
                                              << ", the slice gives " << want;
  }
  return success();
}

#define GET_OP_CLASSES
#include "compiler/Dialect/Plan/IR/PlanOps.cpp.inc"
