//===- Pipeline.h - The compile pipeline ------------------------*- C++ -*-===//
#ifndef TPC_COMPILER_PIPELINE_H
#define TPC_COMPILER_PIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>
#include <vector>

namespace tpc {

/// What `tpc compile` (the driver and the Python API, through it) and
/// `tpc-opt --tpc-compile-pipeline="..."` take, in one type: the driver sets
/// the fields from its flags, tpc-opt parses the same fields from the
/// pipeline's option string, under the names given here.
struct CompileOptions : mlir::PassPipelineOptions<CompileOptions> {
  Option<int> tp{*this, "tp",
                 llvm::cl::desc("Tensor-parallel degree: ranks the program "
                                "is partitioned into"),
                 llvm::cl::init(1)};
  ListOption<std::string> allowReplicated{
      *this, "allow-replicated",
      llvm::cl::desc("Globs of weight MatMuls (node or weight name) that "
                     "may stay replicated where an op blocks their split; "
                     "any other such MatMul fails the compile")};
  Option<std::string> shardingPlan{
      *this, "sharding-plan",
      llvm::cl::desc("JSON file of weight MatMul roles to honour or reject "
                     "(passes/ShardingPlan.h)")};
  Option<bool> vocabParallelEmbedding{
      *this, "vocab-parallel-embedding",
      llvm::cl::desc("Split embeddings by vocabulary rows (Megatron's "
                     "masked lookup, all-reduce after)"),
      llvm::cl::init(false)};
  Option<std::string> lmHead{
      *this, "lm-head",
      llvm::cl::desc("How output projections (the LM head) are sharded: "
                     "auto, column or replicated (tpc-tp-shard's lm-head)"),
      llvm::cl::init("auto")};
  Option<int64_t> kvCacheLength{
      *this, "kv-cache",
      llvm::cl::desc("A decode engine with a KV cache of this many positions "
                     "(0: none): the export's past/present pairs become "
                     "engine state before sharding, which splits the caches "
                     "by kv heads"),
      llvm::cl::init(0)};
  Option<bool> ignoreShardingAnnotations{
      *this, "ignore-sharding-annotations",
      llvm::cl::desc("Compile as if the model carried no ONNX sharding "
                     "annotations (ShardingSpecProto)"),
      llvm::cl::init(false)};
  Option<std::string> shardingPass{
      *this, "sharding",
      llvm::cl::desc("Registered sharding pass to run instead of "
                     "tpc-tp-shard (a plugin's, once loaded); it gets tp=<tp> "
                     "and sharding-options, not the tpc-tp-shard options "
                     "above")};
  Option<std::string> shardingOptions{
      *this, "sharding-options",
      llvm::cl::desc("More options for the sharding pass (\"key=value "
                     "...\"), after tp")};
  Option<std::string> dtype{
      *this, "dtype",
      llvm::cl::desc("Element type of the computation and the weights: "
                     "fp32, fp16 or bf16 (see isComputeDType)"),
      llvm::cl::init("fp32")};
  Option<std::string> quantize{
      *this, "quantize",
      llvm::cl::desc("Weight-only quantization of the weight MatMuls at "
                     "compile time: none, int4 or int8 "
                     "(tpc-quantize-weights)"),
      llvm::cl::init("none")};
  Option<int64_t> quantizeBlockSize{
      *this, "quantize-block-size",
      llvm::cl::desc("Elements of K per scale with quantize: 16, 32, 64, "
                     "128 or 256"),
      llvm::cl::init(32)};
  Option<bool> quantizeSymmetric{
      *this, "quantize-symmetric",
      llvm::cl::desc("Symmetric codes (no zero points) with quantize"),
      llvm::cl::init(true)};
  ListOption<std::string> quantizeSkip{
      *this, "quantize-skip",
      llvm::cl::desc("Globs of weight MatMuls (node or weight name) kept in "
                     "full precision with quantize")};
  Option<bool> fusion{*this, "fusion",
                      llvm::cl::desc("Run the fusion passes (addFusionPasses) "
                                     "on the partitioned program"),
                      llvm::cl::init(true)};
};

/// The fusion passes in the order the pipeline runs them, per rank after
/// partitioning: block-quantized weights into their MatMuls first, then
/// layer norms before RMS norms (a centred RMS norm is a
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
