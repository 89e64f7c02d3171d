// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2 allow-replicated=w1" | FileCheck %s
// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2 allow-replicated=w1" --tpc-spmd-partition | FileCheck %s --check-prefix=LOCAL

// TopK along an axis the split is not on keeps the split in both results
// (each rank takes the top k of its own columns); the row MatMul after it
// then needs one all-reduce and nothing is gathered.
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: onnx.TopK {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [128, 128], parts = [256]>, #tp.sharding<"split", 2, sizes = [128, 128], parts = [256]>]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: tp.AllReduce
// CHECK-NOT: tp.AllGather
// LOCAL-LABEL: func.func @rank0
// LOCAL: onnx.TopK {{.*}} : tensor<1x16x128xf32> -> tensor<1x4x128xf32>, tensor<1x4x128xi64>
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x4x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %v, %i = onnx.TopK %h {axis = 1 : i64, k = 4 : i64} : tensor<1x16x256xf32> -> tensor<1x4x256xf32>, tensor<1x4x256xi64>
  %o = onnx.MatMul %v, %w2 : tensor<1x4x256xf32>, tensor<256x64xf32> -> tensor<1x4x64xf32>
  return %o : tensor<1x4x64xf32>
}

// -----

// Along the split axis TopK needs the whole line: the TopK and the MatMul
// before it are replicated.
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<replicated>
// CHECK: onnx.TopK {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>, #tp.sharding<"replicated", 0>]
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x8xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %v, %i = onnx.TopK %h {k = 8 : i64} : tensor<1x16x256xf32> -> tensor<1x16x8xf32>, tensor<1x16x8xi64>
  return %v : tensor<1x16x8xf32>
}
