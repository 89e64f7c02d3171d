// RUN: tpc-opt %s --tpc-tp-shard="tp=2" --tpc-spmd-partition | FileCheck %s

// Each rank gets local shapes, its slice of each weight (read from the file
// when the engine is written), and the rank's own split sizes.
// CHECK-NOT: func.func @main
// CHECK-LABEL: func.func @rank0
// CHECK-SAME: tp.rank = 0
// CHECK: onnx.Weight "c_attn.weight" {{{.*}}tp.axis = 1 : i64, tp.ranges = array<i64: 0, 32, 64, 32, 128, 32>, tp.sharding = {{.*}}, tp.source_shape = array<i64: 64, 192>} : tensor<64x96xf32>
// CHECK: onnx.Weight "c_proj.weight" {{{.*}}tp.axis = 0 : i64, tp.ranges = array<i64: 0, 32>{{.*}} : tensor<32x64xf32>
// CHECK: onnx.Split %{{.*}} {axis = 2 : i64, split = array<i64: 32, 32, 32>{{.*}} : tensor<1x16x96xf32> -> tensor<1x16x32xf32>, tensor<1x16x32xf32>, tensor<1x16x32xf32>
// CHECK: onnx.Reshape %{{.*}} : tensor<1x16x32xf32> -> tensor<1x16x2x16xf32>
// CHECK: onnx.Softmax %{{.*}} : tensor<1x2x16x16xf32>
// CHECK: tp.AllReduce %{{.*}} : tensor<1x16x64xf32>
// CHECK-LABEL: func.func @rank1
// CHECK-SAME: tp.rank = 1
// CHECK: onnx.Weight "c_attn.weight" {{{.*}}tp.ranges = array<i64: 32, 32, 96, 32, 160, 32>
// CHECK: onnx.Weight "c_proj.weight" {{{.*}}tp.ranges = array<i64: 32, 32>
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %wqkv = onnx.Weight "c_attn.weight" {file = "m.onnx", offset = 0 : i64, length = 49152 : i64} : tensor<64x192xf32>
  %wo = onnx.Weight "c_proj.weight" {file = "m.onnx", offset = 49152 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %qkv = onnx.MatMul %x, %wqkv : tensor<1x16x64xf32>, tensor<64x192xf32> -> tensor<1x16x192xf32>
  %q, %k, %v = onnx.Split %qkv {axis = 2 : i64, split = array<i64: 64, 64, 64>} : tensor<1x16x192xf32> -> tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<1x16x64xf32>
  %q4 = onnx.Reshape %q : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %k4 = onnx.Reshape %k : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %v4 = onnx.Reshape %v : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %qt = onnx.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %kt = onnx.Transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %vt = onnx.Transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %s = onnx.MatMul %qt, %kt : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %p = onnx.Softmax %s : tensor<1x4x16x16xf32>
  %c = onnx.MatMul %p, %vt : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %ct = onnx.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x16x16xf32> -> tensor<1x16x4x16xf32>
  %c3 = onnx.Reshape %ct : tensor<1x16x4x16xf32> -> tensor<1x16x64xf32>
  %o = onnx.MatMul %c3, %wo : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  return %o : tensor<1x16x64xf32>
}
