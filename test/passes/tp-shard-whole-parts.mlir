// RUN: tpc-opt %s --tpc-tp-shard="tp=2" | FileCheck %s
// RUN: tpc-opt %s --tpc-tp-shard="tp=2" --tpc-spmd-partition | FileCheck %s --check-prefix=PART

// A multi-query fused projection (Falcon): query_key_value's output is
// reshaped to [heads + 2, head_dim] and cut into 4 q heads (a Slice) and
// one k and one v head (Gathers). The q part is split over the ranks; the
// single k/v heads are held whole by every rank (whole = [1, 2]), so the
// Gathers give replicated values, and each rank's Gather indices point into
// its own block [q_r, k, v].
// CHECK-LABEL: func.func @main
// CHECK: tp.Shard %{{.*}} {axis = 1 : i64, parts = array<i64: 64, 16, 16>, sizes = array<i64: 64, 64>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 2, sizes = [64, 64], parts = [64, 16, 16], whole = [1, 2]>]
// CHECK: onnx.Reshape {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [4, 4], parts = [4, 1, 1], whole = [1, 2]>]
// CHECK: onnx.Slice {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [2, 2], parts = [4]>]
// CHECK: onnx.Gather {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
// CHECK: onnx.Gather {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: tp.AllReduce
// CHECK-NOT: tp.AllReduce
// CHECK-NOT: tp.AllGather
// PART-LABEL: func.func @rank1
// PART: onnx.MatMul {{.*}} -> tensor<1x16x64xf32>
// PART: onnx.Reshape {{.*}} -> tensor<1x16x4x16xf32>
// PART: onnx.Slice %{{.*}} {axes = array<i64: 2>, ends = array<i64: 2>, starts = array<i64: 0>
// PART: %[[K:.*]] = onnx.Constant {{.*}}dense<2> : tensor<1xi64>
// PART: onnx.Gather %{{.*}}, %[[K]] {axis = 2 : i64
// PART: %[[V:.*]] = onnx.Constant {{.*}}dense<3> : tensor<1xi64>
// PART: onnx.Gather %{{.*}}, %[[V]] {axis = 2 : i64
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %wqkv = onnx.Weight "wqkv" {file = "m.onnx", offset = 0 : i64, length = 24576 : i64} : tensor<64x96xf32>
  %wo = onnx.Weight "wo" {file = "m.onnx", offset = 24576 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %ik = onnx.Constant dense<[-2]> : tensor<1xi64>
  %iv = onnx.Constant dense<[5]> : tensor<1xi64>
  %qkv = onnx.MatMul %x, %wqkv : tensor<1x16x64xf32>, tensor<64x96xf32> -> tensor<1x16x96xf32>
  %r = onnx.Reshape %qkv : tensor<1x16x96xf32> -> tensor<1x16x6x16xf32>
  %q = onnx.Slice %r {axes = array<i64: 2>, ends = array<i64: -2>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<1x16x6x16xf32> -> tensor<1x16x4x16xf32>
  %k = onnx.Gather %r, %ik {axis = 2 : i64} : tensor<1x16x6x16xf32>, tensor<1xi64> -> tensor<1x16x1x16xf32>
  %v = onnx.Gather %r, %iv {axis = 2 : i64} : tensor<1x16x6x16xf32>, tensor<1xi64> -> tensor<1x16x1x16xf32>
  %qt = onnx.Transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %kt = onnx.Transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<1x16x1x16xf32> -> tensor<1x1x16x16xf32>
  %vt = onnx.Transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x1x16xf32> -> tensor<1x1x16x16xf32>
  %s = onnx.MatMul %qt, %kt : tensor<1x4x16x16xf32>, tensor<1x1x16x16xf32> -> tensor<1x4x16x16xf32>
  %p = onnx.Softmax %s {axis = -1 : i64} : tensor<1x4x16x16xf32>
  %c = onnx.MatMul %p, %vt : tensor<1x4x16x16xf32>, tensor<1x1x16x16xf32> -> tensor<1x4x16x16xf32>
  %ct = onnx.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x16x16xf32> -> tensor<1x16x4x16xf32>
  %c3 = onnx.Reshape %ct : tensor<1x16x4x16xf32> -> tensor<1x16x64xf32>
  %o = onnx.MatMul %c3, %wo : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  return %o : tensor<1x16x64xf32>
}
