//===- Passes.td - Compiler passes -------------------------*- tablegen -*-===//
#ifndef TPC_COMPILER_TRANSFORMS_PASSES
#define TPC_COMPILER_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def ConvertFloatTypePass : Pass<"tpc-convert-float-type", "mlir::ModuleOp"> {
  let summary = "Compute in fp16 or bf16: convert every f32 tensor";
  let description = [{
    Gives every f32 tensor of each function the element type `dtype`:
    weights (`onnx.Weight` keeps the file's type in `onnx.source_type`,
    and the engine writer converts the bytes), constants (converted here),
    activations, and `onnx.Cast` to f32 (now to `dtype`). Integer, bool and
    f64 tensors are untouched. The function signature is kept: f32
    arguments are cast to `dtype` on entry and f32 results cast back before
    the return, so an engine takes and gives the dtypes the model declares.

    Values are rounded to nearest even; finite values beyond the target's
    range saturate to its largest finite value (a -FLT_MAX mask constant
    becomes -65504 in fp16, not -inf, so that `0 * mask` stays 0).
    Infinities and NaN are kept. Kernels accumulate GEMMs, norms, softmax
    and reductions in f32 and round each result once.

    ```mlir
    %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 64 : i64, onnx.source_type = f32} : tensor<4x4xbf16>
    ```

    `dtype=fp32` leaves the module unchanged.
  }];
  let options = [
    Option<"dtype", "dtype", "std::string", "\"fp32\"",
           "Element type of the computation: fp32, fp16 or bf16">,
  ];
  let dependentDialects = ["tpc::onnx::ONNXDialect"];
}

def KVCachePass : Pass<"tpc-kv-cache", "mlir::ModuleOp"> {
  let summary = "Turn an export's past/present pairs into engine state";
  let description = [{
    Finds, by dataflow, each graph input that only a Concat reads as its
    first operand and whose result is a graph output: the past and present
    keys or values of one layer of a `text-generation-with-past` export.
    Each pair becomes an `tpc.KVState` of the Concat's shape (the whole
    cache, `max_length` positions) written in place by `tpc.CacheWrite` at
    the new input `cache_position`; the past input and the present output
    leave the signature. The rest of the program reads the state where it
    read the Concat, so attention runs over every position of the cache and
    the attention mask selects the filled ones.

    The module gets `onnx.kv_cache = {length, position, pairs}` for the
    engine writer. A module without such pairs is an error.
  }];
  let dependentDialects = ["tpc::onnx::ONNXDialect", "tpc::ext::TPCDialect"];
}

def LastTokenLogitsPass : Pass<"tpc-last-token-logits", "mlir::ModuleOp"> {
  let summary = "A decode engine's logits: the last new token's only";
  let description = [{
    In a decode engine (a module `tpc-kv-cache` marked with
    `onnx.kv_cache`), a forward of T new tokens needs the logits of the
    last one only: the next token is picked from them. The logits output
    `[batch, T, vocab]` becomes `[batch, 1, vocab]`: a Slice of position
    T - 1 along axis 1 is placed at the output and moved up through the ops
    that treat each position alone (a MatMul by a weight matrix, a binary
    op whose other operand has one row there, a norm over the last axis, a
    Cast or an elementwise activation), each with one use, so the LM head
    (the largest GEMM of a prefill: `T x hidden x vocab`) and the final norm
    run for one position. At T = 1 the Slice takes the whole axis and
    stays, so every token count has the same program.

    ```mlir
    %h = onnx.Slice %x {axes = array<i64: 1>, ends = array<i64: 8>, starts = array<i64: 7>, steps = array<i64: 1>} : tensor<1x8x64xf32> -> tensor<1x1x64xf32>
    %logits = onnx.MatMul %h, %lm_head : tensor<1x1x64xf32>, tensor<64x320xf32> -> tensor<1x1x320xf32>
    ```

    A module without `onnx.kv_cache` is left unchanged.
  }];
  let dependentDialects = ["tpc::onnx::ONNXDialect"];
}

def BoundCacheAttentionPass
    : Pass<"tpc-bound-cache-attention", "mlir::ModuleOp"> {
  let summary = "Attention over a KV cache reads the filled positions only";
  let description = [{
    In a decode engine (a module `tpc-kv-cache` marked with
    `onnx.kv_cache`), after fusion: every `onnx.Attention` whose K and V are
    KV states written this forward (`tpc.CacheWrite` along the key axis,
    possibly cut to the rank's kv heads by a Slice of axis 1) gets
    `nonpad_kv_seqlen = cache_position + T` (T: the forward's new tokens),
    so its kernel reads keys [0, cache_position + T) and never the empty
    rest of the cache: a step's attention costs what the tokens held cost,
    whatever the capacity. The positions past them are masked in every
    export with past (the causal mask over absolute positions), so the
    result is the same; a position the caller's attention mask opens past
    them is not read.

    ```mlir
    %n = onnx.Add %pos, %t : tensor<1xi64>, tensor<1xi64> -> tensor<1xi64>
    %y = onnx.Attention %q, %k, %v, %mask kv_len %n {...} : ...
    ```

    Anything else that reads a KV state whole (attention the fusion did not
    match, a MatMul over the cache) is a warning naming the node: its cost
    follows the cache's capacity. A module without `onnx.kv_cache` is left
    unchanged.
  }];
  let dependentDialects = ["tpc::onnx::ONNXDialect"];
}

def QuantizeWeightsPass : Pass<"tpc-quantize-weights", "mlir::ModuleOp"> {
  let summary = "Weight-only quantization of each rank's weight MatMuls";
  let description = [{
    Per rank, after partitioning: every MatMul, and Gemm without a
    transposed A (alpha 1, beta 1), whose weight is a float `onnx.Weight`,
    [K, N] or transposed from [N, K], becomes `tpc.MatMulNBits` (a Gemm's
    C an Add after it) over three new weights on the same bytes: codes
    (uint8 [N, blocks, block_size * bits / 8]), scales (f32 [N, blocks])
    and, unless symmetric, zero points (packed uint8). Each carries
    `onnx.quantize` = {part, bits, block_size, symmetric, k_axis,
    source_type}: the engine writer computes it from the rank's slice of
    the float weight, round to nearest per block of K (symmetric: the
    largest magnitude maps to code 0, zero point 2^(bits - 1), as
    onnxruntime's quantizer; asymmetric: min and max of the block and 0).
    Weights named (node or initializer) by a `skip` glob stay float. A
    row-parallel slice of K that does not start on a block boundary is an
    error naming the node, the block sizes and the tp values that work.
  }];
  let options = [
    Option<"bits", "bits", "int64_t", "4", "Code width: 4 or 8">,
    Option<"blockSize", "block-size", "int64_t", "32",
           "Elements of K per scale: 16, 32, 64, 128 or 256">,
    Option<"symmetric", "symmetric", "bool", "true",
           "Symmetric codes (no zero points) or asymmetric">,
    ListOption<"skip", "skip", "std::string",
               "Globs of node or weight names kept in full precision">,
  ];
  let statistics = [
    Statistic<"quantized", "quantized-matmuls", "Weight MatMuls quantized">,
  ];
  let dependentDialects = ["tpc::onnx::ONNXDialect", "tpc::ext::TPCDialect"];
}

def LowerToPlanPass : Pass<"tpc-lower-to-plan", "mlir::ModuleOp"> {
  let summary = "Lower onnx-dialect functions to plan-dialect kernel lists";
  let description = [{
    Every onnx op becomes a `plan.kernel` naming the kernel of the same name
    with the op's attributes; weights become `plan.weight` (keeping any
    per-rank slicing the partitioner chose), constants `plan.constant`, and
    tp collectives the collective kernels. Ops from other dialects are an
    error naming the op.
  }];
  let dependentDialects = ["tpc::plan::PlanDialect"];
}

def PlanMemoryPass : Pass<"tpc-plan-memory", "mlir::ModuleOp"> {
  let summary = "Assign arena offsets by liveness";
  let description = [{
    Gives every arena value (function arguments and kernel results) a byte
    offset in one arena so that values whose lifetimes overlap never share
    bytes. Reshapes of arena values become views of their operand. Values
    are placed largest first at the lowest offset that fits (greedy by
    size). Sets `plan.arena_bytes`, `plan.unplanned_bytes` (the sum of all
    arena values) and `plan.lower_bound_bytes` (the most bytes live at once)
    on each function.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64",
           "Byte alignment of every arena offset">,
  ];
}

#endif
