// RUN: tpc-opt %s --tpc-tp-shard="tp=4" | FileCheck %s
// RUN: tpc-opt %s --tpc-tp-shard="tp=4" --tpc-spmd-partition | FileCheck %s --check-prefix=PART
// RUN: tpc-opt %s --tpc-tp-shard="tp=2" | FileCheck %s --check-prefix=TP2
// RUN: not tpc-opt %s --tpc-tp-shard="tp=8" 2>&1 | FileCheck %s --check-prefix=TP8

// Falcon's grouped fused projection: query_key_value's output is reshaped
// to [groups = 2, 4 q heads + k + v, head_dim]; the q heads of each group
// attend to its k and v (expanded to 4 heads). With fewer groups than
// ranks (tp 4), every rank takes its share of each group's q heads and holds
// every k and v whole: the weight's parts are [q, k, v] per group, with the
// k and v parts whole. The split moves to the slots axis at the reshape,
// the q heads of both groups merge into one head axis of two parts, and the
// replicated k and v heads are cut to the rank's q heads (no collective)
// where they meet them. At tp 2 the groups themselves are split; at tp 8 a
// group's 4 q heads do not divide.
// CHECK-LABEL: func.func @main
// CHECK: tp.Shard %{{.*}} {axis = 1 : i64, parts = array<i64: 32, 8, 8, 32, 8, 8>, sizes = array<i64: 48, 48, 48, 48>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 2, sizes = [48, 48, 48, 48], parts = [32, 8, 8, 32, 8, 8], whole = [1, 2, 4, 5]>]
// CHECK: onnx.Reshape {{.*}}tp.sharding = [#tp.sharding<"split", 3, sizes = [3, 3, 3, 3], parts = [4, 1, 1], whole = [1, 2]>]
// CHECK: onnx.Slice {{.*}}tp.sharding = [#tp.sharding<"split", 3, sizes = [1, 1, 1, 1], parts = [4]>]
// CHECK: onnx.Gather {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
// CHECK: onnx.Gather {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
// CHECK: onnx.Reshape {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [2, 2, 2, 2], parts = [4, 4]>]{{.*}} -> tensor<1x16x8x8xf32>
// CHECK: tp.Shard {{.*}}parts = array<i64: 4, 4>, sizes = array<i64: 2, 2, 2, 2>
// CHECK: onnx.Reshape {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [16, 16, 16, 16], parts = [32, 32]>]{{.*}} -> tensor<1x16x64xf32>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: tp.AllReduce
// CHECK-NOT: tp.AllReduce
// CHECK-NOT: tp.AllGather
// PART-LABEL: func.func @rank1
// PART: onnx.MatMul {{.*}} -> tensor<1x16x48xf32>
// PART: onnx.Reshape {{.*}} -> tensor<1x16x2x3x8xf32>
// PART: onnx.Slice %{{.*}} {axes = array<i64: 3>, ends = array<i64: 1>, starts = array<i64: 0>
// PART: %[[K:.*]] = onnx.Constant {{.*}}dense<1> : tensor<1xi64>
// PART: onnx.Gather %{{.*}}, %[[K]] {axis = 3 : i64
// PART: %[[V:.*]] = onnx.Constant {{.*}}dense<2> : tensor<1xi64>
// PART: onnx.Gather %{{.*}}, %[[V]] {axis = 3 : i64
// PART: onnx.Reshape {{.*}} -> tensor<1x16x2x8xf32>
// PART: onnx.MatMul {{.*}} -> tensor<1x16x64xf32>
// TP2: onnx.MatMul {{.*}}tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 2, sizes = [48, 48], parts = [96]>]
// TP2: onnx.Reshape {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [1, 1], parts = [2]>]
// TP8: error: loc("qkv_split"): tp=8 does not divide the 4 heads (dimension 3 of 'tensor<1x16x2x6x8xf32>') of node 'qkv_split'; tp values that work: 1, 2, 4
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %wqkv = onnx.Weight "wqkv" {file = "m.onnx", offset = 0 : i64, length = 24576 : i64} : tensor<64x96xf32>
  %wo = onnx.Weight "wo" {file = "m.onnx", offset = 24576 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %ik = onnx.Constant dense<[4]> : tensor<1xi64>
  %iv = onnx.Constant dense<[5]> : tensor<1xi64>
  %qkv = onnx.MatMul %x, %wqkv : tensor<1x16x64xf32>, tensor<64x96xf32> -> tensor<1x16x96xf32>
  %r = onnx.Reshape %qkv : tensor<1x16x96xf32> -> tensor<1x16x2x6x8xf32> loc("qkv_split")
  %q = onnx.Slice %r {axes = array<i64: 3>, ends = array<i64: -2>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<1x16x2x6x8xf32> -> tensor<1x16x2x4x8xf32>
  %k = onnx.Gather %r, %ik {axis = 3 : i64} : tensor<1x16x2x6x8xf32>, tensor<1xi64> -> tensor<1x16x2x1x8xf32>
  %v = onnx.Gather %r, %iv {axis = 3 : i64} : tensor<1x16x2x6x8xf32>, tensor<1xi64> -> tensor<1x16x2x1x8xf32>
  %ke = onnx.Expand %k : tensor<1x16x2x1x8xf32> -> tensor<1x16x2x4x8xf32>
  %ve = onnx.Expand %v : tensor<1x16x2x1x8xf32> -> tensor<1x16x2x4x8xf32>
  %qh = onnx.Reshape %q : tensor<1x16x2x4x8xf32> -> tensor<1x16x8x8xf32>
  %kh = onnx.Reshape %ke : tensor<1x16x2x4x8xf32> -> tensor<1x16x8x8xf32>
  %vh = onnx.Reshape %ve : tensor<1x16x2x4x8xf32> -> tensor<1x16x8x8xf32>
  %qt = onnx.Transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x8x8xf32> -> tensor<1x8x16x8xf32>
  %kt = onnx.Transpose %kh {perm = array<i64: 0, 2, 3, 1>} : tensor<1x16x8x8xf32> -> tensor<1x8x8x16xf32>
  %vt = onnx.Transpose %vh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x8x8xf32> -> tensor<1x8x16x8xf32>
  %s = onnx.MatMul %qt, %kt : tensor<1x8x16x8xf32>, tensor<1x8x8x16xf32> -> tensor<1x8x16x16xf32>
  %p = onnx.Softmax %s {axis = -1 : i64} : tensor<1x8x16x16xf32>
  %c = onnx.MatMul %p, %vt : tensor<1x8x16x16xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  %ct = onnx.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : tensor<1x8x16x8xf32> -> tensor<1x16x8x8xf32>
  %cm = onnx.Reshape %ct : tensor<1x16x8x8xf32> -> tensor<1x16x64xf32>
  %o = onnx.MatMul %cm, %wo : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  return %o : tensor<1x16x64xf32>
}
