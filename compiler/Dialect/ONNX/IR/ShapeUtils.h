//===- ShapeUtils.h - ONNX shape rules --------------------------*- C++ -*-===//
//
// The shape rules of ONNX operators, shared by result-type inference, the
// verifiers and the importer.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_DIALECT_ONNX_IR_SHAPEUTILS_H
#define TPC_DIALECT_ONNX_IR_SHAPEUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace tpc::onnx {

/// Numpy multidirectional broadcasting; failure when dims disagree.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// `axis` in [-rank, rank) normalised to [0, rank); failure when outside.
mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// `shape` without its leading unit dims, so that [1, 1, 64] and [64]
/// compare equal (a per-channel operand with broadcast dims).
llvm::ArrayRef<int64_t> stripLeadingOnes(llvm::ArrayRef<int64_t> shape);

/// Result shape of a reduction.
llvm::SmallVector<int64_t> reducedShape(llvm::ArrayRef<int64_t> shape,
                                        llvm::ArrayRef<int64_t> normAxes,
                                        bool keepDims);

/// Maps an ONNX TensorProto data type number to an MLIR element type.
mlir::Type onnxElementType(mlir::MLIRContext *ctx, int64_t onnxType);
/// ONNX's name of TensorProto data type `onnxType` with its number
/// ("float4e2m1 (23)"), for errors about types tpc does not take.
std::string onnxTypeName(int64_t onnxType);
/// Inverse of onnxElementType; nullopt for types ONNX has no number for.
std::optional<int64_t> onnxTypeNumber(mlir::Type elementType);

/// Bytes one element of `elementType` takes in a buffer, a constant or an
/// engine file: bool and the 4- and 2-bit integers take a whole byte each
/// (the value in its low bits), every other type its bit width / 8.
int64_t elementBytes(mlir::Type elementType);

/// The updates shape that ScatterND's data and indices imply:
/// indices.shape[:-1] + data.shape[k:], with k = indices.shape[-1]; failure
/// when indices has rank 0 or k exceeds the data rank.
mlir::FailureOr<llvm::SmallVector<int64_t>>
scatterNDUpdatesShape(mlir::RankedTensorType data,
                      mlir::RankedTensorType indices);

/// What is wrong with ScatterElements' data, indices and updates along
/// `axis` (indices of data's rank, no dim but `axis` larger than data's,
/// updates of indices' shape and data's element type); "" when nothing is.
std::string scatterElementsProblem(mlir::RankedTensorType data,
                                   mlir::RankedTensorType indices,
                                   mlir::RankedTensorType updates,
                                   int64_t axis);

} // namespace tpc::onnx

#endif
