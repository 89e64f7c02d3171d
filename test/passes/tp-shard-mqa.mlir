// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2" | FileCheck %s
// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=4" | FileCheck %s
// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=4" --tpc-spmd-partition | FileCheck %s --check-prefix=PART

// Multi-query attention (Gemma-2B, Falcon-7B's separate projections): 4 q
// heads, one kv head (head_dim 8) viewed as [..., 1, 8] and rotated by
// slices of its last axis before its broadcast to the q heads. A column
// split of k or v would cut that one head's dims across the ranks (the
// rotary slices have no rule for it), so, like kv heads fewer than ranks,
// the k and v projections stay replicated at every tp > 1 and each rank
// takes its q heads' share of the broadcast kv locally: one all-reduce.
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>{{.*}}-> tensor<1x16x32xf32>
// CHECK: onnx.MatMul {{.*}}tp.reason = "kv heads fewer than ranks", tp.role = #tp.role<replicated>{{.*}}-> tensor<1x16x8xf32>
// CHECK: onnx.MatMul {{.*}}tp.reason = "kv heads fewer than ranks", tp.role = #tp.role<replicated>{{.*}}-> tensor<1x16x8xf32>
// CHECK: onnx.Slice {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: tp.AllReduce
// CHECK-NOT: tp.AllReduce
// CHECK-NOT: tp.AllGather
// PART-LABEL: func.func @rank3
// PART: onnx.Weight "wq" {{.*}}tp.ranges = array<i64: 24, 8>{{.*}} : tensor<32x8xf32>
// PART: onnx.Weight "wk" {{.*}} : tensor<32x8xf32>
// PART: onnx.Weight "wo" {{.*}} : tensor<8x32xf32>
// PART: onnx.MatMul {{.*}} -> tensor<1x1x16x16xf32>
func.func @main(%x: tensor<1x16x32xf32> {onnx.name = "x"}) -> tensor<1x16x32xf32> attributes {onnx.output_names = ["y"]} {
  %wq = onnx.Weight "wq" {file = "m.onnx", offset = 0 : i64, length = 4096 : i64} : tensor<32x32xf32>
  %wk = onnx.Weight "wk" {file = "m.onnx", offset = 4096 : i64, length = 1024 : i64} : tensor<32x8xf32>
  %wv = onnx.Weight "wv" {file = "m.onnx", offset = 5120 : i64, length = 1024 : i64} : tensor<32x8xf32>
  %wo = onnx.Weight "wo" {file = "m.onnx", offset = 6144 : i64, length = 4096 : i64} : tensor<32x32xf32>
  %q = onnx.MatMul %x, %wq : tensor<1x16x32xf32>, tensor<32x32xf32> -> tensor<1x16x32xf32>
  %k = onnx.MatMul %x, %wk : tensor<1x16x32xf32>, tensor<32x8xf32> -> tensor<1x16x8xf32>
  %v = onnx.MatMul %x, %wv : tensor<1x16x32xf32>, tensor<32x8xf32> -> tensor<1x16x8xf32>
  %q4 = onnx.Reshape %q : tensor<1x16x32xf32> -> tensor<1x16x4x8xf32>
  %k1 = onnx.Reshape %k : tensor<1x16x8xf32> -> tensor<1x16x1x8xf32>
  %v1 = onnx.Reshape %v : tensor<1x16x8xf32> -> tensor<1x16x1x8xf32>
  %qt = onnx.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x8xf32> -> tensor<1x4x16x8xf32>
  %kt = onnx.Transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x1x8xf32> -> tensor<1x1x16x8xf32>
  %vt = onnx.Transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x1x8xf32> -> tensor<1x1x16x8xf32>
  %klo = onnx.Slice %kt {axes = array<i64: 3>, ends = array<i64: 4>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<1x1x16x8xf32> -> tensor<1x1x16x4xf32>
  %khi = onnx.Slice %kt {axes = array<i64: 3>, ends = array<i64: 8>, starts = array<i64: 4>, steps = array<i64: 1>} : tensor<1x1x16x8xf32> -> tensor<1x1x16x4xf32>
  %kn = onnx.Neg %khi : tensor<1x1x16x4xf32>
  %kr = onnx.Concat %kn, %klo {axis = -1 : i64} : tensor<1x1x16x4xf32>, tensor<1x1x16x4xf32> -> tensor<1x1x16x8xf32>
  %k5 = onnx.Reshape %kr : tensor<1x1x16x8xf32> -> tensor<1x1x1x16x8xf32>
  %v5 = onnx.Reshape %vt : tensor<1x1x16x8xf32> -> tensor<1x1x1x16x8xf32>
  %ke = onnx.Expand %k5 : tensor<1x1x1x16x8xf32> -> tensor<1x1x4x16x8xf32>
  %ve = onnx.Expand %v5 : tensor<1x1x1x16x8xf32> -> tensor<1x1x4x16x8xf32>
  %kh = onnx.Reshape %ke : tensor<1x1x4x16x8xf32> -> tensor<1x4x16x8xf32>
  %vh = onnx.Reshape %ve : tensor<1x1x4x16x8xf32> -> tensor<1x4x16x8xf32>
  %ktt = onnx.Transpose %kh {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x16x8xf32> -> tensor<1x4x8x16xf32>
  %s = onnx.MatMul %qt, %ktt : tensor<1x4x16x8xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x16x16xf32>
  %p = onnx.Softmax %s : tensor<1x4x16x16xf32>
  %c = onnx.MatMul %p, %vh : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32> -> tensor<1x4x16x8xf32>
  %ct = onnx.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x16x8xf32> -> tensor<1x16x4x8xf32>
  %c3 = onnx.Reshape %ct : tensor<1x16x4x8xf32> -> tensor<1x16x32xf32>
  %o = onnx.MatMul %c3, %wo : tensor<1x16x32xf32>, tensor<32x32xf32> -> tensor<1x16x32xf32>
  %r = onnx.Add %o, %x : tensor<1x16x32xf32>, tensor<1x16x32xf32> -> tensor<1x16x32xf32>
  return %r : tensor<1x16x32xf32>
}

// -----

// A projection's columns viewed as [..., 1, N] that never reach attention's
// MatMuls are no head: the split stays on the columns (column, then row).
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: onnx.Reshape {{.*}}tp.sharding = [#tp.sharding<"split", 3, {{.*}}-> tensor<1x16x1x64xf32>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK-NOT: kv heads fewer than ranks
func.func @main(%x: tensor<1x16x32xf32> {onnx.name = "x"}) -> tensor<1x16x32xf32> attributes {onnx.output_names = ["y"]} {
  %wu = onnx.Weight "wu" {file = "m.onnx", offset = 0 : i64, length = 8192 : i64} : tensor<32x64xf32>
  %wd = onnx.Weight "wd" {file = "m.onnx", offset = 8192 : i64, length = 8192 : i64} : tensor<64x32xf32>
  %u = onnx.MatMul %x, %wu : tensor<1x16x32xf32>, tensor<32x64xf32> -> tensor<1x16x64xf32>
  %u4 = onnx.Reshape %u : tensor<1x16x64xf32> -> tensor<1x16x1x64xf32>
  %g = onnx.Relu %u4 : tensor<1x16x1x64xf32>
  %g3 = onnx.Reshape %g : tensor<1x16x1x64xf32> -> tensor<1x16x64xf32>
  %d = onnx.MatMul %g3, %wd : tensor<1x16x64xf32>, tensor<64x32xf32> -> tensor<1x16x32xf32>
  return %d : tensor<1x16x32xf32>
}
