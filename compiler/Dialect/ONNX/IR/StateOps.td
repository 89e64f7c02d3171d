//===- StateOps.td - Engine state: the KV cache ------------*- tablegen -*-===//
//
// Ops that the --kv-cache rewrite (tpc-kv-cache) produces from an export's
// past/present pairs. Unlike the other onnx ops they are not pure: a
// KVState is a buffer that outlives a forward, and a CacheWrite writes into
// it in place.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_DIALECT_ONNX_STATE_OPS
#define TPC_DIALECT_ONNX_STATE_OPS

def ONNX_KVStateOp : Op<ONNX_Dialect, "KVState"> {
  let summary = "A KV cache buffer that persists across forwards";
  let description = [{
    The whole cache of one past/present pair, `[batch, kv_heads,
    max_length, head_dim]`: allocated and zeroed when the engine loads,
    written by CacheWrite, read by attention. `name` is the export's past
    input (`past_key_values.0.key`).

    ```mlir
    %s = onnx.KVState "past_key_values.0.key" : tensor<1x4x32x16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs ONNX_FloatTensor:$state);
  let assemblyFormat = "$name attr-dict `:` type($state)";
}

def ONNX_CacheWriteOp : Op<ONNX_Dialect, "CacheWrite"> {
  let summary = "Writes new keys or values into a KV cache at a position";
  let description = [{
    Copies `update` (`[batch, kv_heads, n, head_dim]`) into `state` at
    positions [position, position + n) of `axis` and returns the state,
    which it updates in place. `position` is a one-element int64 tensor
    (the engine input `cache_position`); a position past the end of the
    cache is an error of the run.

    ```mlir
    %w = onnx.CacheWrite %s, %k, %pos {axis = 2 : i64} : tensor<1x4x32x16xf32>, tensor<1x4x1x16xf32>, tensor<1xi64> -> tensor<1x4x32x16xf32>
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

#endif
