// RUN: tpc-opt %s --tpc-tp-shard="tp=4" | FileCheck %s
// RUN: tpc-opt %s --tpc-tp-shard="tp=4" --tpc-spmd-partition | FileCheck %s --check-prefix=PART
// RUN: tpc-opt %s --tpc-tp-shard="tp=2" | FileCheck %s --check-prefix=TP2
// RUN: tpc-opt %s --tpc-tp-shard="tp=8" --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=TP8
// RUN: tpc-opt %s --tpc-tp-shard="tp=8" --tpc-spmd-partition | FileCheck %s --check-prefix=PART8
// RUN: not tpc-opt %s --tpc-tp-shard="tp=16" 2>&1 | FileCheck %s --check-prefix=TP16

// Falcon's grouped fused projection: query_key_value's output is reshaped
// to [groups = 2, 4 q heads + k + v, head_dim]; the q heads of each group
// attend to its k and v (expanded to 4 heads). With fewer groups than
// ranks (tp 4), every rank takes its share of each group's q heads and holds
// every k and v whole: the weight's parts are [q, k, v] per group, with the
// k and v parts whole. The split moves to the slots axis at the reshape,
// the q heads of both groups merge into one head axis of two parts, and the
// replicated k and v heads are cut to the rank's q heads (no collective)
// where they meet them. At tp 2 the groups themselves are split. At tp 8 a
// group's 4 q heads do not divide, but the 8 q heads do: each cut of the
// slots gets its own MatMul over a view of the weight's columns (q: slots
// 0-3 of both groups, k: slot 4, v: slot 5), q is split by heads and k and
// v are replicated (2 kv groups, 8 ranks), and the rank's q columns are
// found through the view (rank 5: group 1's second q head, columns 56-63).
// At tp 16 (8 q heads in all) nothing works; the error lists tp 8, where the
// projection is split per cut.
// TP16: error: {{.*}}tp=16 does not divide the 4 heads (dimension 3 of 'tensor<1x16x2x6x8xf32>') of node 'qkv_split'; tp values that work: 1, 2, 4, 8{{$}}
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
// TP8: %[[WQ:.*]] = onnx.Weight "wqkv" {{.*}}tp.axis = 1 : i64, tp.ranges = array<i64: 0, 32, 48, 32>{{.*}}tp.source_shape = array<i64: 64, 96>} : tensor<64x64xf32>
// TP8: tp.Shard %[[WQ]] {axis = 1 : i64, parts = array<i64: 64>, sizes = array<i64: 8, 8, 8, 8, 8, 8, 8, 8>
// TP8: onnx.MatMul {{.*}}tp.role = #tp.role<column>{{.*}} -> tensor<1x16x64xf32> loc("qkv_mm[slots 0:4]"
// TP8: onnx.Reshape {{.*}}#tp.sharding<"split", 2, sizes = [1, 1, 1, 1, 1, 1, 1, 1], parts = [8]>{{.*}} -> tensor<1x16x8x8xf32>
// TP8: onnx.Weight "wqkv" {{.*}}tp.ranges = array<i64: 32, 8, 80, 8>{{.*}} : tensor<64x16xf32>
// TP8: onnx.MatMul {{.*}}tp.reason = "kv heads fewer than ranks", tp.role = #tp.role<replicated>{{.*}} loc("qkv_mm[slots 4:5]"
// TP8: onnx.Weight "wqkv" {{.*}}tp.ranges = array<i64: 40, 8, 88, 8>{{.*}} : tensor<64x16xf32>
// TP8: onnx.MatMul {{.*}}tp.reason = "kv heads fewer than ranks", tp.role = #tp.role<replicated>{{.*}} loc("qkv_mm[slots 5:6]"
// TP8: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// TP8: tp.AllReduce
// TP8-NOT: tp.AllReduce
// TP8-NOT: tp.AllGather
// PART8-LABEL: func.func @rank5
// PART8: onnx.Weight "wqkv" {{.*}}tp.ranges = array<i64: 56, 8>{{.*}}tp.source_shape = array<i64: 64, 96>} : tensor<64x8xf32>
// PART8: onnx.Reshape {{.*}} -> tensor<1x16x1x8xf32>
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %wqkv = onnx.Weight "wqkv" {file = "m.onnx", offset = 0 : i64, length = 24576 : i64} : tensor<64x96xf32>
  %wo = onnx.Weight "wo" {file = "m.onnx", offset = 24576 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %ik = onnx.Constant dense<[4]> : tensor<1xi64>
  %iv = onnx.Constant dense<[5]> : tensor<1xi64>
  %qkv = onnx.MatMul %x, %wqkv : tensor<1x16x64xf32>, tensor<64x96xf32> -> tensor<1x16x96xf32> loc("qkv_mm")
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
