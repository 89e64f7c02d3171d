//===- Pipeline.cpp - The compile pipeline --------------------------------===//
#include "compiler/Pipeline.h"
#include "compiler/Transforms/Passes.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace tpc {

void buildCompilePipeline(OpPassManager &pm, const CompileOptions &opts) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  TpShardPassOptions shard;
  shard.tp = opts.tp;
  shard.replicateUnclassified = opts.replicateUnclassified;
  shard.vocabParallelEmbedding = opts.vocabParallelEmbedding;
  shard.parallelLmHead = opts.parallelLmHead;
  pm.addPass(createTpShardPass(shard));
  pm.addPass(createSpmdPartitionPass());
  pm.addPass(createLowerToPlanPass());
  pm.addPass(createPlanMemoryPass());
}

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<int> tp{*this, "tp", llvm::cl::desc("Tensor-parallel degree"),
                 llvm::cl::init(1)};
  Option<bool> replicateUnclassified{
      *this, "replicate-unclassified",
      llvm::cl::desc("Replicate weight MatMuls the sharding pass cannot "
                     "classify"),
      llvm::cl::init(false)};
  Option<bool> vocabParallelEmbedding{
      *this, "vocab-parallel-embedding",
      llvm::cl::desc("Split embeddings by vocabulary rows"),
      llvm::cl::init(false)};
  Option<bool> parallelLmHead{
      *this, "parallel-lm-head",
      llvm::cl::desc("Column-parallel LM head with an all-gather"),
      llvm::cl::init(false)};
};
} // namespace

void registerCompilePipeline() {
  PassPipelineRegistration<PipelineOptions>(
      "tpc-compile-pipeline",
      "The pipeline of tpc compile: shard, partition, lower, plan memory",
      [](OpPassManager &pm, const PipelineOptions &o) {
        CompileOptions opts;
        opts.tp = o.tp;
        opts.replicateUnclassified = o.replicateUnclassified;
        opts.vocabParallelEmbedding = o.vocabParallelEmbedding;
        opts.parallelLmHead = o.parallelLmHead;
        buildCompilePipeline(pm, opts);
      });
}

} // namespace tpc
