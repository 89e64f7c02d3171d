// RUN: tpc-opt %s --split-input-file --tpc-bound-cache-attention 2>/dev/null | FileCheck %s
// RUN: tpc-opt %s --split-input-file --tpc-bound-cache-attention 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN

// Attention over two KV states written this forward reads the filled
// positions only: nonpad_kv_seqlen = cache_position + T (T = 2 new tokens).
// CHECK-LABEL: func.func @rank0
// CHECK-SAME: %[[POS:[^:]*]]: tensor<1xi64> {onnx.name = "cache_position"}
// CHECK: %[[T:.*]] = onnx.Constant dense<2> : tensor<1xi64>
// CHECK: %[[N:.*]] = onnx.Add %[[POS]], %[[T]] : tensor<1xi64>, tensor<1xi64> -> tensor<1xi64>
// CHECK: onnx.Attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} kv_len %[[N]] {{.*}}, tensor<1x1x2x32xf32>, tensor<1xi64> -> tensor<1x4x2x16xf32>
module attributes {onnx.kv_cache = {length = 32 : i64, pairs = [["pk", "k"], ["pv", "v"]], position = "cache_position"}} {
func.func @rank0(%q: tensor<1x4x2x16xf32> {onnx.name = "q"}, %k: tensor<1x2x2x16xf32> {onnx.name = "k"}, %v: tensor<1x2x2x16xf32> {onnx.name = "v"}, %mask: tensor<1x1x2x32xf32> {onnx.name = "mask"}, %pos: tensor<1xi64> {onnx.name = "cache_position"}) -> tensor<1x4x2x16xf32> {
  %sk = tpc.KVState "pk" : tensor<1x2x32x16xf32>
  %sv = tpc.KVState "pv" : tensor<1x2x32x16xf32>
  %wk = tpc.CacheWrite %sk, %k, %pos {axis = 2 : i64} : tensor<1x2x32x16xf32>, tensor<1x2x2x16xf32>, tensor<1xi64> -> tensor<1x2x32x16xf32>
  %wv = tpc.CacheWrite %sv, %v, %pos {axis = 2 : i64} : tensor<1x2x32x16xf32>, tensor<1x2x2x16xf32>, tensor<1xi64> -> tensor<1x2x32x16xf32>
  %y = onnx.Attention %q, %wk, %wv, %mask {scale = 2.500000e-01 : f32} : tensor<1x4x2x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x1x2x32xf32> -> tensor<1x4x2x16xf32>
  return %y : tensor<1x4x2x16xf32>
}
}

// -----

// A rank's kv heads cut from a replicated cache (a Slice of axis 1) are
// still the cache's positions; a batch of 2 gets one count per sequence.
// CHECK-LABEL: func.func @rank1
// CHECK: %[[N:.*]] = onnx.Add
// CHECK: %[[E:.*]] = onnx.Expand %[[N]] : tensor<1xi64> -> tensor<2xi64>
// CHECK: onnx.Attention %{{.*}}, %{{.*}}, %{{.*}} kv_len %[[E]]
module attributes {onnx.kv_cache = {length = 32 : i64, pairs = [["pk", "k"], ["pv", "v"]], position = "cache_position"}} {
func.func @rank1(%q: tensor<2x2x1x16xf32> {onnx.name = "q"}, %k: tensor<2x2x1x16xf32> {onnx.name = "k"}, %v: tensor<2x2x1x16xf32> {onnx.name = "v"}, %pos: tensor<1xi64> {onnx.name = "cache_position"}) -> tensor<2x2x1x16xf32> {
  %sk = tpc.KVState "pk" : tensor<2x2x32x16xf32>
  %sv = tpc.KVState "pv" : tensor<2x2x32x16xf32>
  %wk = tpc.CacheWrite %sk, %k, %pos {axis = 2 : i64} : tensor<2x2x32x16xf32>, tensor<2x2x1x16xf32>, tensor<1xi64> -> tensor<2x2x32x16xf32>
  %wv = tpc.CacheWrite %sv, %v, %pos {axis = 2 : i64} : tensor<2x2x32x16xf32>, tensor<2x2x1x16xf32>, tensor<1xi64> -> tensor<2x2x32x16xf32>
  %ks = onnx.Slice %wk {axes = array<i64: 1>, ends = array<i64: 2>, starts = array<i64: 1>, steps = array<i64: 1>} : tensor<2x2x32x16xf32> -> tensor<2x1x32x16xf32>
  %vs = onnx.Slice %wv {axes = array<i64: 1>, ends = array<i64: 2>, starts = array<i64: 1>, steps = array<i64: 1>} : tensor<2x2x32x16xf32> -> tensor<2x1x32x16xf32>
  %y = onnx.Attention %q, %ks, %vs {scale = 2.500000e-01 : f32} : tensor<2x2x1x16xf32>, tensor<2x1x32x16xf32>, tensor<2x1x32x16xf32> -> tensor<2x2x1x16xf32>
  return %y : tensor<2x2x1x16xf32>
}
}

// -----

// Attention the fusion did not match reads the whole cache: a warning names
// the node; nothing is rewritten.
// WARN: warning: {{.*}}node 'keys_t' (onnx.Transpose) reads the whole KV cache, not only its filled positions: its cost follows the cache's capacity
// CHECK-LABEL: func.func @rank0
// CHECK-NOT: kv_len
module attributes {onnx.kv_cache = {length = 32 : i64, pairs = [["pk", "k"]], position = "cache_position"}} {
func.func @rank0(%q: tensor<1x2x1x16xf32> {onnx.name = "q"}, %k: tensor<1x2x1x16xf32> {onnx.name = "k"}, %pos: tensor<1xi64> {onnx.name = "cache_position"}) -> tensor<1x2x1x32xf32> {
  %sk = tpc.KVState "pk" : tensor<1x2x32x16xf32>
  %wk = tpc.CacheWrite %sk, %k, %pos {axis = 2 : i64} : tensor<1x2x32x16xf32>, tensor<1x2x1x16xf32>, tensor<1xi64> -> tensor<1x2x32x16xf32>
  %kt = onnx.Transpose %wk {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x32x16xf32> -> tensor<1x2x16x32xf32> loc("keys_t")
  %s = onnx.MatMul %q, %kt : tensor<1x2x1x16xf32>, tensor<1x2x16x32xf32> -> tensor<1x2x1x32xf32> loc("scores")
  return %s : tensor<1x2x1x32xf32>
}
}

// -----

// Without onnx.kv_cache the pass changes nothing.
// CHECK-LABEL: func.func @main
// CHECK: onnx.Attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} {
func.func @main(%q: tensor<1x2x1x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x1x16xf32> {
  %y = onnx.Attention %q, %k, %v {scale = 2.500000e-01 : f32} : tensor<1x2x1x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x1x16xf32>
  return %y : tensor<1x2x1x16xf32>
}
