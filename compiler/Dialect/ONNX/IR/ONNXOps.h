//===- ONNXOps.h - onnx dialect ---------------------------------*- C++ -*-===//
#ifndef TPC_DIALECT_ONNX_IR_ONNXOPS_H
#define TPC_DIALECT_ONNX_IR_ONNXOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tpc::onnx {
/// Folds `op` when every operand is a constant, by running the CPU reference
/// kernel of the same name on the constant data (ONNXFold.cpp).
mlir::OpFoldResult foldOp(mlir::Operation *op,
                          llvm::ArrayRef<mlir::Attribute> operands);
mlir::LogicalResult
foldMultiResultOp(mlir::Operation *op, llvm::ArrayRef<mlir::Attribute> operands,
                  llvm::SmallVectorImpl<mlir::OpFoldResult> &results);
/// The result type of a broadcasting op (ONNX_BroadcastOp): the operands'
/// broadcast shape, of element type `elem` or, when null, the first
/// operand's; with `sameElementType` the operands' element types must agree.
mlir::LogicalResult inferBroadcast(std::optional<mlir::Location> loc,
                                   mlir::ValueRange operands, mlir::Type elem,
                                   llvm::SmallVectorImpl<mlir::Type> &results,
                                   bool sameElementType = true);
/// The onnx.Constant holding a folded `value` of `type` (the constant
/// materializer of the onnx and tpc dialects); nullptr for other values.
mlir::Operation *materializeElements(mlir::OpBuilder &builder,
                                     mlir::Attribute value, mlir::Type type,
                                     mlir::Location loc);
} // namespace tpc::onnx

#include "compiler/Dialect/ONNX/IR/ONNXOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "compiler/Dialect/ONNX/IR/ONNXOps.h.inc"

#endif // TPC_DIALECT_ONNX_IR_ONNXOPS_H
