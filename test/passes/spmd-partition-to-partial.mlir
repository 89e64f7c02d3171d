// RUN: tpc-opt %s --tpc-tp-shard="tp=2" --tpc-spmd-partition | FileCheck %s

// tp.ToPartial: rank 0 adds the row-parallel biases of a parallel residual
// block before the one all-reduce; rank 1 adds nothing and keeps no bias.
// CHECK-LABEL: func.func @rank0
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: onnx.Add %{{.*}}, %{{.*}} : tensor<1x16x64xf32>, tensor<64xf32>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: onnx.Add %{{.*}}, %{{.*}} : tensor<1x16x64xf32>, tensor<64xf32>
// CHECK: tp.AllReduce
// CHECK-LABEL: func.func @rank1
// CHECK-NOT: tp.ToPartial
// CHECK-NOT: onnx.Weight "b
// CHECK: %[[O:.*]] = onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: %[[M:.*]] = onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK-NOT: tensor<64xf32> -> tensor<1x16x64xf32>
// CHECK: %[[S:.*]] = onnx.Add %[[M]], %[[O]]
// CHECK: tp.AllReduce %[[S]]
// CHECK-NOT: tp.AllReduce
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %g = onnx.Weight "g" {file = "m.onnx", offset = 0 : i64, length = 256 : i64} : tensor<64xf32>
  %wa = onnx.Weight "wa" {file = "m.onnx", offset = 256 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %wo = onnx.Weight "wo" {file = "m.onnx", offset = 65792 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %bo = onnx.Weight "bo" {file = "m.onnx", offset = 131328 : i64, length = 256 : i64} : tensor<64xf32>
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 131584 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 197120 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %b2 = onnx.Weight "b2" {file = "m.onnx", offset = 262656 : i64, length = 256 : i64} : tensor<64xf32>
  %ln1 = onnx.LayerNormalization %x, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %ln2 = onnx.LayerNormalization %x, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %a = onnx.MatMul %ln1, %wa : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %at = onnx.Tanh %a : tensor<1x16x256xf32>
  %o = onnx.MatMul %at, %wo : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %ob = onnx.Add %o, %bo : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %h = onnx.MatMul %ln2, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %hg = onnx.Gelu %h : tensor<1x16x256xf32>
  %m = onnx.MatMul %hg, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %mb = onnx.Add %m, %b2 : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %s = onnx.Add %mb, %ob : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %r = onnx.Add %s, %x : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %y = onnx.LayerNormalization %r, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

