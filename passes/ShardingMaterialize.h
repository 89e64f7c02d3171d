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

namespace tpc {

/// Rewrites Gemm(A, W, C) with a weight W into Gemm(A, W) + C, so that the
/// bias of a row-parallel Gemm is added once, after the all-reduce. Run it
/// before the analysis.
void splitGemmBias(mlir::func::FuncOp func);

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

} // namespace tpc

#endif
