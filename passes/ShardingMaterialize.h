//===- ShardingMaterialize.h - Writing shardings into the IR ----*- C++ -*-===//
//
// What a sharding pass leaves behind once it has chosen shardings: tp
// collectives where an op needs an operand in another sharding, `tp.sharding`
// on every op, `tp.role` on every weight MatMul. tpc's own pass and sharding
// plugins share these so that both leave what tpc-spmd-partition expects.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_PASSES_SHARDINGMATERIALIZE_H
#define TPC_PASSES_SHARDINGMATERIALIZE_H

#include "passes/ShardingAnalysis.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>

namespace tpc {

/// Rewrites Gemm(A, W, C) with a weight W into Gemm(A, W) + C, so that the
/// bias of a row-parallel Gemm is added once, after the all-reduce. Run it
/// before the analysis.
void splitGemmBias(mlir::func::FuncOp func);

/// Gives each cut of a grouped fused projection ([..., groups, slots, dim],
/// Falcon's query_key_value) its own MatMul over a view of the weight's
/// columns, where tp is a multiple of the groups and does not divide the
/// q heads of each group but does divide them all: the fused layout cannot
/// give every rank whole heads there. Returns how many it split. Run it
/// before the analysis.
int64_t splitGroupedProjections(mlir::func::FuncOp func, int64_t tp);

/// Whether splitGroupedProjections at `tp` would split the projection that
/// `reshape` (its reshape to [..., groups, slots, dim]) belongs to.
bool groupedSplitApplies(mlir::Operation *reshape, int64_t tp);

/// Sets `tp.sharding` on `op`: one #tp.sharding per result.
void annotateShardings(mlir::Operation *op,
                       llvm::ArrayRef<Sharding> shardings);

/// Annotates every op of `func` replicated and every weight MatMul with
/// role "replicated": the whole program at tp = 1.
void annotateReplicated(mlir::func::FuncOp func);

/// Writes the analysis's choices into `func`: converts each operand an op
/// wants in another sharding (tp.AllReduce of a partial value, tp.AllGather
/// of a split one, tp.Shard of a replicated one, each made once per value),
/// annotates every op's results and records each weight MatMul's role.
void materializeShardings(mlir::func::FuncOp func, const ShardingAnalysis &a);

/// The start every sharding pass shares: checks that `tp` is at least 1 and
/// that `module` defines @main (each error emitted on the module, naming
/// `passName`) and sets the module's tp.size. Returns @main, or a null
/// function after an error.
mlir::func::FuncOp beginSharding(mlir::ModuleOp module, int64_t tp,
                                 llvm::StringRef passName);

/// Runs ShardingAnalysis on `func` until a run learns nothing new (each
/// run's lessons go into `hints`; at most 1000 runs), calling `configure`
/// on each analysis before it runs and `inspect` after. Returns the last
/// analysis, or null when a run failed (its errors are emitted).
std::unique_ptr<ShardingAnalysis> analyzeUntilStable(
    mlir::func::FuncOp func, int64_t tp, OutputHeadPolicy outputHeads,
    ShardingHints &hints,
    llvm::function_ref<void(ShardingAnalysis &)> configure = {},
    llvm::function_ref<void(const ShardingAnalysis &)> inspect = {});

/// A whole sharding pass for a policy that only steers tpc's analysis:
/// beginSharding; at tp 1 every value replicated; otherwise Gemm biases
/// split off, `seed` fills the hints (e.g. MatMuls to keep replicated),
/// analyzeUntilStable, materializeShardings. What a plugin's
/// runOnOperation calls (passes/plugin/MlpOnlySharding.cpp).
mlir::LogicalResult
shardModule(mlir::ModuleOp module, int64_t tp, llvm::StringRef passName,
            llvm::function_ref<void(mlir::func::FuncOp, ShardingHints &)> seed,
            OutputHeadPolicy outputHeads = OutputHeadPolicy::Auto);

} // namespace tpc

#endif
