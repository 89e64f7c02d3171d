//===- FusedOps.td - Targets of the fusion passes ----------*- tablegen -*-===//
//
// Ops that the importer never produces: the fusion passes rewrite decomposed
// subgraphs into them. Each runs the kernel of the same name.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_DIALECT_ONNX_FUSED_OPS
#define TPC_DIALECT_ONNX_FUSED_OPS

def ONNX_RMSNormalizationOp : ONNX_Op<"RMSNormalization"> {
  let summary = "ONNX RMSNormalization (opset 23): x / sqrt(mean(x^2) + eps) * scale";
  let description = [{
    Normalizes over the dims from `axis` on; `Scale` holds one value per
    normalized element (leading unit dims allowed). The target of
    `--tpc-fuse-rms-norm`; it runs the `RMSNormalization` kernel.

    ```mlir
    %y = onnx.RMSNormalization %x, %w {axis = -1 : i64, epsilon = 1.0e-06 : f32} : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$X, ONNX_FloatTensor:$Scale,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1e-05">:$epsilon);
  let results = (outs ONNX_FloatTensor:$Y);
  let assemblyFormat = "$X `,` $Scale attr-dict `:` type($X) `,` type($Scale) "
                       "`->` type($Y)";
  let hasVerifier = 1;
}

def ONNX_AttentionOp : ONNX_Op<"Attention"> {
  let summary = "ONNX Attention (opset 23, 4-D): softmax(scale Q K^T + mask) V";
  let description = [{
    Q is [batch, q_heads, q_len, head_dim], K [batch, kv_heads, kv_len,
    head_dim], V [batch, kv_heads, kv_len, v_dim] and Y [batch, q_heads,
    q_len, v_dim]. kv_heads must divide q_heads: query head h reads kv head
    h / (q_heads / kv_heads) (grouped-query attention). `attn_mask`, when
    present, broadcasts to [batch, q_heads, q_len, kv_len]; a bool mask keeps
    the scores where it is true, a float mask is added to them. `is_causal`
    masks key j for query i when j > i. `scale` defaults to
    1/sqrt(head_dim). The target of `--tpc-fuse-attention`; past key/value,
    softcap and the other outputs of the ONNX op are not supported.

    ```mlir
    %y = onnx.Attention %q, %k, %v, %mask {scale = 2.500000e-01 : f32} : tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x1x16x16xf32> -> tensor<1x4x16x16xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$Q, ONNX_FloatTensor:$K,
                       ONNX_FloatTensor:$V, Optional<ONNX_Tensor>:$attn_mask,
                       OptionalAttr<F32Attr>:$scale,
                       DefaultValuedAttr<I64Attr, "0">:$is_causal);
  let results = (outs ONNX_FloatTensor:$Y);
  let assemblyFormat = "$Q `,` $K `,` $V (`,` $attn_mask^)? attr-dict `:` "
                       "type($Q) `,` type($K) `,` type($V) "
                       "(`,` type($attn_mask)^)? `->` type($Y)";
  let hasVerifier = 1;
}

def ONNX_SwiGLUOp : ONNX_Op<"SwiGLU", [SameOperandsAndResultType]> {
  let summary = "silu(gate) * up = gate * sigmoid(gate) * up";
  let description = [{
    The gated MLP activation of Llama-style models, elementwise over two
    tensors of one shape. The target of `--tpc-fuse-swiglu`.

    ```mlir
    %y = onnx.SwiGLU %gate, %up : tensor<1x16x128xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$gate, ONNX_FloatTensor:$up);
  let results = (outs ONNX_FloatTensor:$Y);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($Y)";
}

def ONNX_AddNormalizationOp : ONNX_Op<"AddNormalization"> {
  let summary = "Residual add then layer or RMS norm: Sum = A + B, Y = norm(Sum)";
  let description = [{
    A and B have one shape (no broadcasting); Sum is their elementwise sum
    (the residual stream, used again by the next residual add) and Y its
    LayerNormalization (`rms` = 0, with the optional bias) or RMSNormalization
    (`rms` = 1, no bias) over the dims from `axis` on. The target of
    `--tpc-fuse-add-norm`: one pass over the residual instead of two.

    ```mlir
    %y, %sum = onnx.AddNormalization %x, %r, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32, rms = 0 : i64} : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>, tensor<1x16x64xf32>
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

def ONNX_MatMulBiasOp : ONNX_Op<"MatMulBias"> {
  let summary = "MatMul with a bias and an activation as its epilogue";
  let description = [{
    Y = act(MatMul(A, B) + Bias), B a [K, N] matrix, Bias one value per
    output column ([N], leading unit dims allowed), `activation` one of
    "none", "relu", "gelu" (erf) and "gelu_tanh". The target of
    `--tpc-fuse-matmul-bias`.

    ```mlir
    %y = onnx.MatMulBias %x, %w, %b {activation = "gelu"} : tensor<1x16x64xf32>, tensor<64x128xf32>, tensor<128xf32> -> tensor<1x16x128xf32>
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

#endif // TPC_DIALECT_ONNX_FUSED_OPS
