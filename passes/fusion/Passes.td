//===- Passes.td - Fusion passes ---------------------------*- tablegen -*-===//
//
// Each pass rewrites one decomposed subgraph into one op. They run per rank
// on partitioned programs (after tpc-spmd-partition), so they never see
// shardings; every pattern is matched by dataflow and constant values.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_PASSES_FUSION_PASSES
#define TPC_PASSES_FUSION_PASSES

include "mlir/Pass/PassBase.td"

def FuseGeluPass : Pass<"tpc-fuse-gelu", "mlir::ModuleOp"> {
  let summary = "Fuse the erf and tanh forms of GELU into onnx.Gelu";
  let description = [{
    Matches `0.5 * x * (1 + erf(x / sqrt(2)))` (approximate = "none") and
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` (approximate =
    "tanh") in any grouping and operand order of the products, with the
    constants written as multiplications or divisions and x^3 as Pow or as
    products. Every intermediate must have no other use.
  }];
  let dependentDialects = ["tpc::onnx::ONNXDialect"];
}

def FuseLayerNormPass : Pass<"tpc-fuse-layer-norm", "mlir::ModuleOp"> {
  let summary = "Fuse decomposed layer norms into onnx.LayerNormalization";
  let description = [{
    Matches `d = x - ReduceMean(x)`, `v = ReduceMean(d^2)` (Pow or Mul),
    `y = d / Sqrt(v + eps)` (or `d * Reciprocal(Sqrt(v + eps))`), then an
    optional `* gamma` and `+ beta` of the normalized dims' shape, as opsets
    before 17 (and exporters that do not emit LayerNormalization) write it.
    Both reductions must be over the same trailing axes with keepdims.
  }];
  let dependentDialects = ["tpc::onnx::ONNXDialect"];
}

def FuseRMSNormPass : Pass<"tpc-fuse-rms-norm", "mlir::ModuleOp"> {
  let summary = "Fuse decomposed RMS norms into onnx.RMSNormalization";
  let description = [{
    Matches `x / Sqrt(ReduceMean(x^2) + eps)`, written with Div,
    `Reciprocal` or `1 / Sqrt(...)`, then an optional `* weight` of the
    normalized dims' shape (Llama's `weight * (x * rsqrt(mean(x^2) + eps))`).
  }];
  let dependentDialects = ["tpc::onnx::ONNXDialect"];
}

def FuseAttentionPass : Pass<"tpc-fuse-attention", "mlir::ModuleOp"> {
  let summary = "Fuse scaled dot-product attention into onnx.Attention";
  let description = [{
    Matches `MatMul(Softmax(scale * Q K^T + mask, axis = -1), V)` with Q
    [batch, heads, q_len, head_dim], K^T a Transpose of a [batch, kv_heads,
    kv_len, head_dim] value, scales multiplied or divided into the scores,
    Q or K, an additive mask (Add) and/or a boolean one (`Where(m, scores,
    very negative)`), and GQA's repeat of kv heads (Reshape to insert a
    unit dim, Expand, Reshape to merge) looked through on K and V. A
    constant mask that is exactly the causal mask becomes `is_causal`.
  }];
  let dependentDialects = ["tpc::onnx::ONNXDialect"];
}

def FuseSwiGLUPass : Pass<"tpc-fuse-swiglu", "mlir::ModuleOp"> {
  let summary = "Fuse silu(gate) * up into tpc.SwiGLU";
  let description = [{
    Matches `(g * Sigmoid(g)) * u` in any operand order, where g and u have
    the result's shape and the Sigmoid and the product have no other use.
  }];
  let dependentDialects = ["tpc::onnx::ONNXDialect", "tpc::ext::TPCDialect"];
}

def FuseAddNormPass : Pass<"tpc-fuse-add-norm", "mlir::ModuleOp"> {
  let summary = "Fuse a residual add and the norm of its sum";
  let description = [{
    Rewrites `LayerNormalization(a + b)` and `RMSNormalization(a + b)`, where
    a and b have the sum's shape, into `tpc.AddNormalization`, whose Sum
    result replaces the add for its other users (the next residual add).
    Runs after the norm fusions; scale and bias must be defined before the
    add.
  }];
  let dependentDialects = ["tpc::onnx::ONNXDialect", "tpc::ext::TPCDialect"];
}

def FuseMatMulBiasPass : Pass<"tpc-fuse-matmul-bias", "mlir::ModuleOp"> {
  let summary = "Fuse a bias add and an activation into the MatMul before";
  let description = [{
    Rewrites `act(MatMul(a, w) + bias)`, w a [K, N] matrix, bias one value
    per column and act Relu, Gelu or none, into `tpc.MatMulBias`; the
    same with a plain Gemm (alpha 1, nothing transposed, no C) for the
    MatMul, and `act(Gemm(a, w, bias))` (beta 1 too), the form of an
    exported Conv1D; an activation reached through Reshapes joins the
    product, the Reshapes moving after it. Runs after GELU fusion.
    Under tensor parallelism only column-parallel products match: a
    row-parallel one's bias is added after the all-reduce.
  }];
  let dependentDialects = ["tpc::onnx::ONNXDialect", "tpc::ext::TPCDialect"];
}

def FuseMatMulNBitsPass : Pass<"tpc-fuse-matmul-nbits", "mlir::ModuleOp"> {
  let summary = "Fuse a block-quantized weight's dequantization into its MatMul";
  let description = [{
    Rewrites `MatMul(a, Transpose(W))`, W [N, K] given by its per-block
    dequantization (uint8 codes, 4-bit ones unpacked from their bytes, cast
    to float, minus a zero point, times one scale per block of K, reshaped
    to [N, K] and cut to the first K columns where the last block is
    padded), into `tpc.MatMulNBits` over the packed codes, the scales and
    the zero points: the form the importer gives MatMulNBits. Zero points
    that the chain unpacks from bytes of the codes' width stay packed; any
    other per-block or scalar zero point is passed as its values, and the
    default 2^(bits - 1) is left out. Runs first among the fusions, per
    rank, on the rank's slice of the weight.
  }];
  let dependentDialects = ["tpc::onnx::ONNXDialect", "tpc::ext::TPCDialect"];
}

#endif // TPC_PASSES_FUSION_PASSES
