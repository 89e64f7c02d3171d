//===- Pipeline.h - The compile pipeline ------------------------*- C++ -*-===//
#ifndef TPC_COMPILER_PIPELINE_H
#define TPC_COMPILER_PIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace tpc {

struct CompileOptions {
  /// Tensor-parallel degree: ranks the program is partitioned into.
  int tp = 1;
  /// Globs of weight MatMuls (ONNX node or weight name) that may stay
  /// replicated where an op blocks their split; any other such MatMul fails
  /// the compile.
  std::vector<std::string> allowReplicated;
  /// A sharding plan file (passes/ShardingPlan.h) of roles the pass must
  /// honour or reject; "" for none.
  std::string shardingPlan;
  /// Megatron's vocab-parallel embedding (rows split, all-reduce after).
  bool vocabParallelEmbedding = false;
  /// Column-parallel LM head with an all-gather of the logits.
  bool parallelLmHead = false;
  /// A decode engine with a KV cache of this many positions (0: none): the
  /// export's past/present pairs become engine state (tpc-kv-cache), before
  /// sharding, which splits the caches by kv heads.
  int64_t kvCacheLength = 0;
  /// Compile as if the model carried no ONNX sharding annotations
  /// (ShardingSpecProto); tpc-tp-shard honours them otherwise.
  bool ignoreShardingAnnotations = false;
  /// The sharding pass to run, looked up by name in the pass registry (a
  /// plugin's pass, once the plugin is loaded); "" for tpc-tp-shard with
  /// the three options above.
  std::string shardingPass;
  /// More options for `shardingPass` ("key=value ..."); it always gets
  /// tp=<tp> first.
  std::string shardingOptions;
  /// Element type of the computation and the weights: "fp32", "fp16" or
  /// "bf16" (see isComputeDType).
  std::string dtype = "fp32";
  /// Run the fusion passes (addFusionPasses) on the partitioned program.
  bool fusion = true;
};

/// The fusion passes in the order the pipeline runs them, per rank after
/// partitioning: layer norms before RMS norms (a centred RMS norm is a
/// layer norm), residual adds into the norms, then GELU, SwiGLU,
/// attention, and last the MatMul epilogues (which take fused GELUs).
void addFusionPasses(mlir::OpPassManager &pm);

/// Whether `dtype` names a type CompileOptions::dtype accepts.
bool isComputeDType(llvm::StringRef dtype);
/// The accepted names, for messages: "fp32, fp16 or bf16".
const char *computeDTypeNames();

/// The pipeline `tpc compile` runs on an imported module, from onnx ops to
/// planned per-rank plan functions. Fails, through `errorHandler`, when
/// `shardingPass` names no registered pass or the pass refuses its options,
/// or when `dtype` is not one of computeDTypeNames().
/// Registered for tpc-opt as `--tpc-compile-pipeline`.
mlir::LogicalResult buildCompilePipeline(
    mlir::OpPassManager &pm, const CompileOptions &opts,
    llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
        errorHandler);

void registerCompilePipeline();

/// Loads an MLIR pass plugin and runs its registration callback, so that its
/// passes can be named as CompileOptions::shardingPass (or on tpc-opt's
/// command line). Fails with a one-line message in `error` when the file is
/// missing, does not load, or is not a pass plugin.
mlir::LogicalResult loadPassPlugin(const std::string &path,
                                   std::string &error);

} // namespace tpc

#endif
