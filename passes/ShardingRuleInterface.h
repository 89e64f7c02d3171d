//===- ShardingRuleInterface.h - How shardings flow through an op -*- C++ -*-===//
#ifndef TPC_PASSES_SHARDINGRULEINTERFACE_H
#define TPC_PASSES_SHARDINGRULEINTERFACE_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

namespace tpc {
class ShardingAnalysis;
} // namespace tpc

#include "passes/ShardingRuleInterface.h.inc"

namespace tpc {

/// Attaches tpc's sharding rules to the onnx ops (when the onnx dialect
/// loads).
void registerShardingRules(mlir::DialectRegistry &registry);

} // namespace tpc

#endif
