//===- Pipeline.h - The compile pipeline ------------------------*- C++ -*-===//
#ifndef TPC_COMPILER_PIPELINE_H
#define TPC_COMPILER_PIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <string>

namespace tpc {

struct CompileOptions {
  /// Tensor-parallel degree: ranks the program is partitioned into.
  int tp = 1;
  /// Weight MatMuls the sharding pass cannot classify stay replicated (with
  /// a warning) instead of failing the compile.
  bool replicateUnclassified = false;
  /// Megatron's vocab-parallel embedding (rows split, all-reduce after).
  bool vocabParallelEmbedding = false;
  /// Column-parallel LM head with an all-gather of the logits.
  bool parallelLmHead = false;
  /// The sharding pass to run (a plugin's pass name), "" for tpc's own.
  std::string shardingPass;
};

/// The pipeline `tpc compile` runs on an imported module, from onnx ops to
/// planned per-rank plan functions. Registered for tpc-opt as
/// `--tpc-compile-pipeline`.
void buildCompilePipeline(mlir::OpPassManager &pm, const CompileOptions &opts);

void registerCompilePipeline();

} // namespace tpc

#endif
