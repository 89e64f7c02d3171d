//===- Passes.td - Tensor-parallel passes ------------------*- tablegen -*-===//
#ifndef TPC_PASSES_PASSES
#define TPC_PASSES_PASSES

include "mlir/Pass/PassBase.td"

def TpShardPass : Pass<"tpc-tp-shard", "mlir::ModuleOp"> {
  let summary = "Megatron-style sharding of every weight MatMul by dataflow";
  let description = [{
    Gives every value of `@main` a sharding (replicated, split(axis) or
    partial) by propagating from the inputs (replicated) in program order. A
    weight MatMul or Gemm whose activation is replicated becomes
    column-parallel (weight split on its output axis); one whose activation
    is split on its contraction axis becomes row-parallel (weight split on
    its input axis, result partial). Shardings flow through elementwise ops,
    reshapes (a split on hidden becomes a split on heads when the heads
    divide), transposes, softmax and norms over unsplit axes, batched
    activation MatMuls, Split/Slice/Concat on unsplit axes. A partial value
    is all-reduced at its first use that is not linear in it: two
    all-reduces per transformer layer.

    Column-parallel MatMuls whose split would only be gathered again (the
    LM head, or k/v projections with fewer kv heads than ranks) stay
    replicated. A reshape that would split heads unevenly is an error that
    names the node, the dimension and the tp values that work.

    The result is `@main` with `tp.sharding` on every op, `tp.role` on every
    weight MatMul, and tp collectives (AllReduce, AllGather, Shard) where
    shardings change; the module gets `tp.size`.
  }];
  let options = [
    Option<"tp", "tp", "int64_t", "1", "Number of ranks">,
    Option<"replicateUnclassified", "replicate-unclassified", "bool", "false",
           "Replicate weight MatMuls that cannot be classified (warning)">,
    Option<"vocabParallelEmbedding", "vocab-parallel-embedding", "bool",
           "false", "Split embedding tables by vocabulary rows">,
    Option<"parallelLmHead", "parallel-lm-head", "bool", "false",
           "Column-parallel LM head with an all-gather of the logits">,
  ];
  let dependentDialects = ["tpc::tp::TPDialect", "tpc::onnx::ONNXDialect"];
}

def SpmdPartitionPass : Pass<"tpc-spmd-partition", "mlir::ModuleOp"> {
  let summary = "One program per rank with local shapes";
  let description = [{
    Clones the sharded `@main` into `@rank0` ... `@rankN-1` (N = `tp.size`):
    every split value takes its rank's local shape, reshape and expand
    targets and split sizes become the rank's own, `tp.Shard` of a weight
    becomes a weight slice (read straight from the model file when the
    engine is written) and of a constant a smaller constant. Before
    partitioning it verifies that the shardings are consistent (every op
    annotated, operands and results agreeing), so a custom sharding pass
    that leaves an inconsistent program is rejected with an error naming
    the op.
  }];
  let dependentDialects = ["tpc::tp::TPDialect"];
}

#endif
