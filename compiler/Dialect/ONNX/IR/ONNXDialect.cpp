//===- ONNXDialect.cpp - onnx dialect registration ------------------------===//
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"

using namespace mlir;
using namespace tpc::onnx;

#include "compiler/Dialect/ONNX/IR/ONNXOpsDialect.cpp.inc"

void ONNXDialect::initialize() { registerOps(); }

void ONNXDialect::registerOps() {
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/ONNX/IR/ONNXOps.cpp.inc"
      >();
}

Operation *tpc::onnx::materializeElements(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}

Operation *ONNXDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  return materializeElements(builder, value, type, loc);
}
