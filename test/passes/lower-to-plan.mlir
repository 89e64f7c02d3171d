// RUN: tpc-opt %s --tpc-tp-shard="tp=2" --tpc-spmd-partition --tpc-lower-to-plan | FileCheck %s

// onnx ops become kernels named like the op with the op's attributes and
// the ONNX node name; weights keep their per-rank slices; collectives
// become collective kernels.
// CHECK-LABEL: func.func @rank0
// CHECK-NOT: plan.weight "w1" {file
// CHECK: %[[W:.*]] = plan.weight "w1" {axis = 1 : i64, file = "m.onnx", length = 65536 : i64, offset = 0 : i64, ranges = array<i64: 0, 128>, source_shape = array<i64: 64, 256>} : tensor<64x128xf32>
// CHECK: %[[C:.*]] = plan.constant "const.0" dense<1.000000e+00> : tensor<f32>
// CHECK: %[[H:.*]] = plan.kernel "MatMul"(%{{.*}}, %[[W]]) {attrs = {}, node = "fc1", tp.role = "column"
// CHECK: plan.kernel "Softmax"(%{{.*}}) {attrs = {axis = 1 : i64}, node = "sm"
// CHECK: plan.kernel "AllReduce"
// CHECK-NOT: = onnx.
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %one = onnx.Constant dense<1.0> : tensor<f32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32> loc("fc1")
  %a = onnx.Softmax %h {axis = 1 : i64} : tensor<1x16x256xf32> loc("sm")
  %b = onnx.Add %a, %one : tensor<1x16x256xf32>, tensor<f32> -> tensor<1x16x256xf32>
  %o = onnx.MatMul %b, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  return %o : tensor<1x16x64xf32>
}
