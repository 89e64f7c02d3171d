// RUN: not tpc-opt %s --split-input-file --tpc-kv-cache 2>/dev/null | FileCheck %s
// RUN: not tpc-opt %s --split-input-file --tpc-kv-cache --tpc-tp-shard="tp=2" --tpc-spmd-partition --tpc-lower-to-plan --tpc-plan-memory 2>/dev/null | FileCheck %s --check-prefix=PLAN
// RUN: not tpc-opt %s --split-input-file --tpc-kv-cache 2>&1 | FileCheck %s --check-prefix=ERR

// A past input that a Concat extends into a graph output (one layer's keys
// of a with-past export) becomes a KV cache: the past input and the present
// output leave the signature, a cache_position input joins it, and the
// Concat's readers read the state CacheWrite updates. Sharded by kv heads,
// each rank's state holds its heads (no gather), outside the arena, and
// CacheWrite writes it in place.
// CHECK: module attributes {onnx.kv_cache = {length = 8 : i64, pairs = {{\[\["past_key_values.0.key", "present.0.key"\]\]}}, position = "cache_position"}}
// CHECK: func.func @main(%[[X:.*]]: tensor<1x1x64xf32> {onnx.name = "x"}, %[[POS:.*]]: tensor<1xi64> {onnx.name = "cache_position"}) -> tensor<1x1x64xf32> attributes {onnx.output_names = ["y"]}
// CHECK: %[[S:.*]] = tpc.KVState "past_key_values.0.key" : tensor<1x4x8x16xf32>
// CHECK: %[[W:.*]] = tpc.CacheWrite %[[S]], %{{.*}}, %[[POS]] {axis = 2 : i64}
// CHECK: onnx.ReduceSum %[[W]]
// CHECK-NOT: onnx.Concat
// PLAN-LABEL: func.func @rank1
// PLAN: %[[S:.*]] = plan.state "past_key_values.0.key" : tensor<1x2x8x16xf32>
// PLAN: plan.kernel "CacheWrite"(%[[S]], {{.*}}offsets = array<i64: -1>, plan.state_write{{.*}} -> tensor<1x2x8x16xf32>
// PLAN-NOT: AllGather
func.func @main(%x: tensor<1x1x64xf32> {onnx.name = "x"}, %pk: tensor<1x4x7x16xf32> {onnx.name = "past_key_values.0.key"}) -> (tensor<1x1x64xf32>, tensor<1x4x8x16xf32>) attributes {onnx.output_names = ["y", "present.0.key"]} {
  %wk = onnx.Weight "wk" {file = "m.onnx", offset = 0 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %wo = onnx.Weight "wo" {file = "m.onnx", offset = 16384 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %k = onnx.MatMul %x, %wk : tensor<1x1x64xf32>, tensor<64x64xf32> -> tensor<1x1x64xf32>
  %kr = onnx.Reshape %k : tensor<1x1x64xf32> -> tensor<1x1x4x16xf32>
  %kt = onnx.Transpose %kr {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x4x16xf32> -> tensor<1x4x1x16xf32>
  %present = onnx.Concat %pk, %kt {axis = -2 : i64} : tensor<1x4x7x16xf32>, tensor<1x4x1x16xf32> -> tensor<1x4x8x16xf32>
  %s = onnx.ReduceSum %present {axes = array<i64: 2>, keepdims = 1 : i64} : tensor<1x4x8x16xf32> -> tensor<1x4x1x16xf32>
  %st = onnx.Transpose %s {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x1x16xf32> -> tensor<1x1x4x16xf32>
  %sr = onnx.Reshape %st : tensor<1x1x4x16xf32> -> tensor<1x1x64xf32>
  %o = onnx.MatMul %sr, %wo : tensor<1x1x64xf32>, tensor<64x64xf32> -> tensor<1x1x64xf32>
  return %o, %present : tensor<1x1x64xf32>, tensor<1x4x8x16xf32>
}

// -----

// ERR: error: --kv-cache: the model has no past/present pairs
func.func @main(%x: tensor<1x4x64xf32> {onnx.name = "x"}) -> tensor<1x4x64xf32> attributes {onnx.output_names = ["y"]} {
  %y = onnx.Relu %x : tensor<1x4x64xf32>
  return %y : tensor<1x4x64xf32>
}
