//===- ValueUtils.h - Facts about onnx values known at compile time -*- C++ -*-===//
#ifndef TPC_COMPILER_DIALECT_ONNX_IR_VALUEUTILS_H
#define TPC_COMPILER_DIALECT_ONNX_IR_VALUEUTILS_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"

#include <string>

namespace tpc::onnx {

/// Whether every element of `v` is zero at compile time: a constant, or a
/// ConstantOfShape of zero (its default value).
bool isZeroTensor(mlir::Value v);

} // namespace tpc::onnx

namespace tpc {
/// The ONNX node name carried by a location, or "" when there is none.
std::string nodeNameOf(mlir::Location loc);
} // namespace tpc

#endif
