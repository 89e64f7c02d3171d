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

    A partial value that one use needs whole is all-reduced once for all
    its uses; a partial value reaching a weight MatMul is reduced first, so
    the MatMul is column-parallel. Where two partial sums meet before
    anything needs them whole (parallel residual blocks: x + attn(ln(x)) +
    mlp(ln(x))), the replicated terms on the way (row-parallel biases) are
    added once, by rank 0 (`tp.ToPartial`), and one all-reduce follows the
    sum. The analysis reruns until these choices, which depend on later
    uses, are stable.

    An output projection (a column-parallel MatMul whose split reaches a
    graph output unchanged: the LM head, a classifier) is split and its
    output all-gathered, as Megatron-LM does, under the `lm-head` policy:
    `auto` splits it when every rank gets at least 64 columns and keeps a
    narrower one replicated, `column` always splits, `replicated` never. A
    split that reaches a graph output through reshapes (a KV cache output,
    split by heads) is gathered there too. Other column-parallel MatMuls
    whose split would only be gathered again stay replicated by one stated
    policy: k/v projections with fewer kv heads than ranks. Any other MatMul
    whose split an op blocks is an error naming the MatMul and the op,
    unless `allow-replicated` matches its node or weight name. A reshape
    that would split heads unevenly is an error that names the node, the
    dimension and the tp values that work.

    The result is `@main` with `tp.sharding` on every op, `tp.role` on every
    weight MatMul, and tp collectives (AllReduce, AllGather, Shard) where
    shardings change; the module gets `tp.size`.
  }];
  let options = [
    Option<"tp", "tp", "int64_t", "1", "Number of ranks">,
    ListOption<"allowReplicated", "allow-replicated", "std::string",
               "Globs of weight MatMuls (ONNX node or weight name) that may "
               "stay replicated where an op blocks their split">,
    Option<"shardingPlan", "sharding-plan", "std::string", "\"\"",
           "JSON file of weight MatMul roles (colwise, rowwise, replicate) "
           "by node or weight name glob, which the pass honours or rejects">,
    Option<"vocabParallelEmbedding", "vocab-parallel-embedding", "bool",
           "false", "Split embedding tables by vocabulary rows">,
    Option<"lmHead", "lm-head", "std::string", "\"auto\"",
           "How output projections (the LM head) are sharded: auto "
           "(column-parallel with an all-gather when every rank gets at "
           "least 64 columns, else replicated), column or replicated">,
    Option<"ignoreShardingAnnotations", "ignore-sharding-annotations",
           "bool", "false",
           "Ignore the model's ONNX sharding annotations (ShardingSpecProto) "
           "instead of honouring them">,
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
