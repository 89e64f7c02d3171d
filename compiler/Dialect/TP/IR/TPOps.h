//===- TPOps.h - tp dialect -------------------------------------*- C++ -*-===//
#ifndef TPC_DIALECT_TP_IR_TPOPS_H
#define TPC_DIALECT_TP_IR_TPOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#include "compiler/Dialect/TP/IR/TPOpsDialect.h.inc"

#include "compiler/Dialect/TP/IR/TPOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "compiler/Dialect/TP/IR/TPOpsAttrs.h.inc"

#define GET_OP_CLASSES
#include "compiler/Dialect/TP/IR/TPOps.h.inc"

namespace tpc::tp {

// The attributes the sharding and partitioning passes leave on ops of other
// dialects, each checked by the tp dialect wherever it appears
// (TPDialect::verifyOperationAttribute).

/// On a module: the tensor-parallel degree (an integer >= 1).
inline constexpr llvm::StringLiteral kSizeAttr = "tp.size";
/// On a rank's function: its rank, in [0, tp.size).
inline constexpr llvm::StringLiteral kRankAttr = "tp.rank";
/// On an op with results: one #tp.sharding per result.
inline constexpr llvm::StringLiteral kShardingAttr = "tp.sharding";
/// On a weight MatMul or Gemm: a #tp.role (column, row or replicated).
inline constexpr llvm::StringLiteral kRoleAttr = "tp.role";
/// On a replicated weight MatMul: why (a sentence for the summary).
inline constexpr llvm::StringLiteral kReasonAttr = "tp.reason";
/// On a rank's slice of a weight: the whole weight's shape, the axis it is
/// cut along, and the [start, size] ranges of that axis the rank holds.
inline constexpr llvm::StringLiteral kSourceShapeAttr = "tp.source_shape";
inline constexpr llvm::StringLiteral kAxisAttr = "tp.axis";
inline constexpr llvm::StringLiteral kRangesAttr = "tp.ranges";

/// The role of `op` (its kRoleAttr), if it has one.
inline std::optional<Role> roleOf(mlir::Operation *op) {
  if (auto role = op->getAttrOfType<RoleAttr>(kRoleAttr))
    return role.getValue();
  return std::nullopt;
}
/// Sets `op`'s kRoleAttr.
inline void setRole(mlir::Operation *op, Role role) {
  op->setAttr(kRoleAttr, RoleAttr::get(op->getContext(), role));
}

} // namespace tpc::tp

#endif
