//===- FusedOps.td - ONNX ops the fusion passes target -----*- tablegen -*-===//
//
// Opset-23 ONNX operators that the fusion passes rewrite decomposed
// subgraphs into (and that opset-23 files hold directly). tpc's own fusion
// targets, which ONNX does not define, are in the tpc dialect
// (compiler/Dialect/TPC/IR/TPCOps.td).
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

def ONNX_AttentionOp : ONNX_Op<"Attention", [AttrSizedOperandSegments]> {
  let summary = "ONNX Attention (opset 23, 4-D): softmax(scale Q K^T + mask) V";
  let description = [{
    Q is [batch, q_heads, q_len, head_dim], K [batch, kv_heads, kv_len,
    head_dim], V [batch, kv_heads, kv_len, v_dim] and Y [batch, q_heads,
    q_len, v_dim]. kv_heads must divide q_heads: query head h reads kv head
    h / (q_heads / kv_heads) (grouped-query attention). `attn_mask`, when
    present, broadcasts to [batch, q_heads, q_len, kv_len]; a bool mask keeps
    the scores where it is true, a float mask is added to them. `is_causal`
    masks key j for query i when j > i. `scale` defaults to
    1/sqrt(head_dim). `nonpad_kv_seqlen` (opset 24), when present, is an
    int64 [batch]: keys j >= nonpad_kv_seqlen[b] are masked for batch b, so
    a kernel reads only the keys below it (the filled positions of a KV
    cache: `--tpc-bound-cache-attention` sets it). `nan_to_zero = 1` (not
    an ONNX attribute: the fusion sets it for the `Where(IsNaN(p), 0, p)`
    guard PyTorch's SDPA export puts on the probabilities) makes a row whose
    softmax is NaN (every key masked) zeros instead of NaN. The target of
    `--tpc-fuse-attention`; past key/value, softcap and the other outputs of
    the ONNX op are not supported.

    ```mlir
    %y = onnx.Attention %q, %k, %v, %mask {scale = 2.500000e-01 : f32} : tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x1x16x16xf32> -> tensor<1x4x16x16xf32>
    %z = onnx.Attention %q, %k, %v kv_len %n {scale = 2.500000e-01 : f32} : tensor<1x4x1x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1xi64> -> tensor<1x4x1x16xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$Q, ONNX_FloatTensor:$K,
                       ONNX_FloatTensor:$V, Optional<ONNX_Tensor>:$attn_mask,
                       Optional<TensorOf<[I64]>>:$nonpad_kv_seqlen,
                       OptionalAttr<F32Attr>:$scale,
                       DefaultValuedAttr<I64Attr, "0">:$is_causal,
                       OptionalAttr<I64Attr>:$nan_to_zero);
  let results = (outs ONNX_FloatTensor:$Y);
  let assemblyFormat = "$Q `,` $K `,` $V (`,` $attn_mask^)? "
                       "(`kv_len` $nonpad_kv_seqlen^)? attr-dict `:` "
                       "type($Q) `,` type($K) `,` type($V) "
                       "(`,` type($attn_mask)^)? "
                       "(`,` type($nonpad_kv_seqlen)^)? `->` type($Y)";
  let hasVerifier = 1;
}

#endif // TPC_DIALECT_ONNX_FUSED_OPS
