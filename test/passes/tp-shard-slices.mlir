// RUN: tpc-opt %s --tpc-tp-shard="tp=2" | FileCheck %s
// RUN: tpc-opt %s --tpc-tp-shard="tp=2" --tpc-spmd-partition | FileCheck %s --check-prefix=PART

// A fused qkv projection cut by Slices (Phi-3's qkv_proj; gate_up_proj is
// cut the same way): each rank gets its heads of q, k and v, the Slices
// take the rank's share of their part, and attention stays split by heads
// up to the row-parallel output projection and its one all-reduce.
// CHECK-LABEL: func.func @main
// CHECK: tp.Shard %{{.*}} {axis = 1 : i64, parts = array<i64: 64, 64, 64>, sizes = array<i64: 96, 96>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 2, sizes = [96, 96], parts = [64, 64, 64]>]
// CHECK: onnx.Slice {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [32, 32], parts = [64]>]
// CHECK: onnx.Slice {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [32, 32], parts = [64]>]
// CHECK: onnx.Slice {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [32, 32], parts = [64]>]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: tp.AllReduce
// CHECK-NOT: tp.AllReduce
// CHECK-NOT: tp.AllGather
// PART-LABEL: func.func @rank1
// PART: onnx.MatMul {{.*}} -> tensor<1x16x96xf32>
// PART: onnx.Slice %{{.*}} {axes = array<i64: -1>, ends = array<i64: 32>, starts = array<i64: 0>, steps = array<i64: 1>
// PART: onnx.Slice %{{.*}} {axes = array<i64: -1>, ends = array<i64: 64>, starts = array<i64: 32>, steps = array<i64: 1>
// PART: onnx.Slice %{{.*}} {axes = array<i64: -1>, ends = array<i64: 96>, starts = array<i64: 64>, steps = array<i64: 1>
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %wqkv = onnx.Weight "wqkv" {file = "m.onnx", offset = 0 : i64, length = 49152 : i64} : tensor<64x192xf32>
  %wo = onnx.Weight "wo" {file = "m.onnx", offset = 49152 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %qkv = onnx.MatMul %x, %wqkv : tensor<1x16x64xf32>, tensor<64x192xf32> -> tensor<1x16x192xf32> loc("qkv_proj")
  %q = onnx.Slice %qkv {axes = array<i64: -1>, ends = array<i64: 64>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<1x16x192xf32> -> tensor<1x16x64xf32>
  %k = onnx.Slice %qkv {axes = array<i64: -1>, ends = array<i64: 128>, starts = array<i64: 64>, steps = array<i64: 1>} : tensor<1x16x192xf32> -> tensor<1x16x64xf32>
  %v = onnx.Slice %qkv {axes = array<i64: -1>, ends = array<i64: 9223372036854775807>, starts = array<i64: 128>, steps = array<i64: 1>} : tensor<1x16x192xf32> -> tensor<1x16x64xf32>
  %q4 = onnx.Reshape %q : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %k4 = onnx.Reshape %k : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %v4 = onnx.Reshape %v : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %qt = onnx.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %kt = onnx.Transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %vt = onnx.Transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %s = onnx.MatMul %qt, %kt : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %p = onnx.Softmax %s {axis = -1 : i64} : tensor<1x4x16x16xf32>
  %c = onnx.MatMul %p, %vt : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %ct = onnx.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x16x16xf32> -> tensor<1x16x4x16xf32>
  %c3 = onnx.Reshape %ct : tensor<1x16x4x16xf32> -> tensor<1x16x64xf32>
  %o = onnx.MatMul %c3, %wo : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32> loc("o_proj")
  %r = onnx.Add %o, %x : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}
