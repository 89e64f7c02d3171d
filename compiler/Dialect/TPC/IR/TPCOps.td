//===- TPCOps.td - The tpc dialect: tpc's own ops -----------*- tablegen -*-===//
//
// Ops that are not ONNX operators: the targets of tpc's fusion passes and
// the engine state the --kv-cache rewrite introduces. The importer never
// produces them. Each runs the kernel of the same name (the op name without
// "tpc."), and their operands use the onnx dialect's tensor types.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_DIALECT_TPC_OPS
#define TPC_DIALECT_TPC_OPS

include "compiler/Dialect/ONNX/IR/ONNXBase.td"

def TPC_Dialect : Dialect {
  let name = "tpc";
  let cppNamespace = "::tpc::ext";
  let summary = "tpc's own ops: fusion targets and engine state";
  let description = [{
    Ops of tpc's that ONNX does not define, kept apart from the `onnx`
    dialect so that `onnx` holds ONNX's operators only: the fused ops the
    `--tpc-fuse-*` passes rewrite decomposed subgraphs into (SwiGLU,
    AddNormalization, MatMulBias, MatMulNBits) and the KV cache of a decode engine
    (KVState, CacheWrite). Like onnx ops they name the kernel they run and
    fold on constant operands through it.
  }];
  let hasConstantMaterializer = 1;
}

/// A pure tpc op that folds through its CPU kernel, like the onnx ops.
class TPC_Op<string mnemonic, list<Trait> traits = []>
    : Op<TPC_Dialect, mnemonic, !listconcat(traits, [Pure])> {
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::tpc::onnx::foldOp(getOperation(), adaptor.getOperands());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Fusion targets
//===----------------------------------------------------------------------===//

def TPC_SwiGLUOp : TPC_Op<"SwiGLU", [SameOperandsAndResultType]> {
  let summary = "silu(gate) * up = gate * sigmoid(gate) * up";
  let description = [{
    The gated MLP activation of Llama-style models, elementwise over two
    tensors of one shape. The target of `--tpc-fuse-swiglu`.

    ```mlir
    %y = tpc.SwiGLU %gate, %up : tensor<1x16x128xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$gate, ONNX_FloatTensor:$up);
  let results = (outs ONNX_FloatTensor:$Y);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($Y)";
}

def TPC_AddNormalizationOp : TPC_Op<"AddNormalization"> {
  let summary = "Residual add then layer or RMS norm: Sum = A + B, Y = norm(Sum)";
  let description = [{
    A and B have one shape (no broadcasting); Sum is their elementwise sum
    (the residual stream, used again by the next residual add) and Y its
    LayerNormalization (`rms` = 0, with the optional bias) or RMSNormalization
    (`rms` = 1, no bias) over the dims from `axis` on. The target of
    `--tpc-fuse-add-norm`: one pass over the residual instead of two.

    ```mlir
    %y, %sum = tpc.AddNormalization %x, %r, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32, rms = 0 : i64} : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>, tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$A, ONNX_FloatTensor:$B,
                       ONNX_FloatTensor:$Scale,
                       Optional<ONNX_FloatTensor>:$Bias,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1e-05">:$epsilon,
                       DefaultValuedAttr<I64Attr, "0">:$rms);
  let results = (outs ONNX_FloatTensor:$Y, ONNX_FloatTensor:$Sum);
  let assemblyFormat = "$A `,` $B `,` $Scale (`,` $Bias^)? attr-dict `:` "
                       "type($A) `,` type($B) `,` type($Scale) "
                       "(`,` type($Bias)^)? `->` type($Y) `,` type($Sum)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::fold(FoldAdaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::OpFoldResult> &results) {
      return ::tpc::onnx::foldMultiResultOp(getOperation(),
                                            adaptor.getOperands(), results);
    }
  }];
}

def TPC_MatMulBiasOp : TPC_Op<"MatMulBias"> {
  let summary = "MatMul with a bias and an activation as its epilogue";
  let description = [{
    Y = act(MatMul(A, B) + Bias), B a [K, N] matrix, Bias one value per
    output column ([N], leading unit dims allowed), `activation` one of
    "none", "relu", "gelu" (erf) and "gelu_tanh". The target of
    `--tpc-fuse-matmul-bias`.

    ```mlir
    %y = tpc.MatMulBias %x, %w, %b {activation = "gelu"} : tensor<1x16x64xf32>, tensor<64x128xf32>, tensor<128xf32> -> tensor<1x16x128xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$A, ONNX_FloatTensor:$B,
                       ONNX_FloatTensor:$Bias,
                       DefaultValuedStrAttr<StrAttr, "none">:$activation);
  let results = (outs ONNX_FloatTensor:$Y);
  let assemblyFormat = "$A `,` $B `,` $Bias attr-dict `:` type($A) `,` "
                       "type($B) `,` type($Bias) `->` type($Y)";
  let hasVerifier = 1;
}

def TPC_MatMulNBitsOp : TPC_Op<"MatMulNBits"> {
  let summary = "MatMul with a block-quantized weight kept packed";
  let description = [{
    Y = A x W^T, A [..., K], W [N, K] quantized per block of `block_size`
    elements along K: B [N, blocks, block_size * bits / 8] holds each
    block's `bits`-bit codes (4 or 8) packed low first into bytes, and
    W[n, k] = (code - zero) * scale of k's block, the last block zero-padded
    past K. `scales` holds N x blocks values (any shape). `zero_points` is
    absent (the default 2^(bits - 1)), packed uint8 codes of the same width
    ([N, ceil(blocks * bits / 8)]), N x blocks floats, or one float for
    every block. The target of `--tpc-fuse-matmul-nbits`, which finds the
    dequantize-then-MatMul form the importer gives MatMulNBits (and any
    dataflow of the same meaning) in each rank's program: the rank's codes
    stay packed in its shard and are read packed by the kernel.

    ```mlir
    %y = tpc.MatMulNBits %a, %b, %s {bits = 4 : i64, block_size = 32 : i64} : tensor<1x64xf32>, tensor<48x2x16xui8>, tensor<48x2xf32> -> tensor<1x48xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$A, RankedTensorOf<[UI8]>:$B,
                       ONNX_FloatTensor:$scales,
                       Optional<AnyRankedTensor>:$zero_points,
                       I64Attr:$bits, I64Attr:$block_size);
  let results = (outs ONNX_FloatTensor:$Y);
  let assemblyFormat = "$A `,` $B `,` $scales (`,` $zero_points^)? attr-dict "
                       "`:` type($A) `,` type($B) `,` type($scales) "
                       "(`,` type($zero_points)^)? `->` type($Y)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Engine state: the KV cache
//
// Produced by the --kv-cache rewrite (tpc-kv-cache) from an export's
// past/present pairs. Unlike the other ops they are not pure: a KVState is
// a buffer that outlives a forward, and a CacheWrite writes into it in
// place.
//===----------------------------------------------------------------------===//

def TPC_KVStateOp : Op<TPC_Dialect, "KVState"> {
  let summary = "A KV cache buffer that persists across forwards";
  let description = [{
    The whole cache of one past/present pair, `[batch, kv_heads,
    max_length, head_dim]`: allocated and zeroed when the engine loads,
    written by CacheWrite, read by attention. `name` is the export's past
    input (`past_key_values.0.key`).

    ```mlir
    %s = tpc.KVState "past_key_values.0.key" : tensor<1x4x32x16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs ONNX_FloatTensor:$state);
  let assemblyFormat = "$name attr-dict `:` type($state)";
}

def TPC_CacheWriteOp : Op<TPC_Dialect, "CacheWrite"> {
  let summary = "Writes new keys or values into a KV cache at a position";
  let description = [{
    Copies `update` (`[batch, kv_heads, n, head_dim]`) into `state` at
    positions [position, position + n) of `axis` and returns the state,
    which it updates in place. `position` is a one-element int64 tensor
    (the engine input `cache_position`); a position past the end of the
    cache is an error of the run.

    ```mlir
    %w = tpc.CacheWrite %s, %k, %pos {axis = 2 : i64} : tensor<1x4x32x16xf32>, tensor<1x4x1x16xf32>, tensor<1xi64> -> tensor<1x4x32x16xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$state, ONNX_FloatTensor:$update,
                       RankedTensorOf<[I64]>:$position, I64Attr:$axis);
  let results = (outs ONNX_FloatTensor:$result);
  let assemblyFormat = "$state `,` $update `,` $position attr-dict `:` "
                       "type($state) `,` type($update) `,` type($position) "
                       "`->` type($result)";
  let hasVerifier = 1;
}

#endif // TPC_DIALECT_TPC_OPS
