//===- MlpOnlySharding.h - Example sharding plugin --------------*- C++ -*-===//
//
// An example of a sharding policy built outside tpc's own passes: attention
// stays replicated on every rank, only the MLPs are split (column-parallel
// up projection, row-parallel down projection, one all-reduce per layer).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_PASSES_PLUGIN_MLPONLYSHARDING_H
#define TPC_PASSES_PLUGIN_MLPONLYSHARDING_H

#include "mlir/IR/BuiltinOps.h"

namespace tpc::plugin {

/// Shards `@main` of `module` over `tp` ranks with the MLP-only policy and
/// leaves the annotations tpc-spmd-partition expects. Errors are emitted on
/// the module.
mlir::LogicalResult shardMlpOnly(mlir::ModuleOp module, int64_t tp);

/// Registers the plugin's passes (Passes.td): `tpc-mlp-only-shard`.
void registerMlpOnlyShardingPasses();

} // namespace tpc::plugin

#endif
