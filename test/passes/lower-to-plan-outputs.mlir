// RUN: tpc-opt %s --tpc-lower-to-plan | FileCheck %s

// Graph outputs that no kernel computes (a constant, a weight, a graph
// input) are copied into the arena by a Copy kernel named after the output;
// computed outputs are returned as they are.
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[C:.*]] = plan.constant "const.0"
// CHECK-DAG: %[[W:.*]] = plan.weight "w"
// CHECK: %[[A:.*]] = plan.kernel "Add"
// CHECK: %[[CC:.*]] = plan.kernel "Copy"(%[[C]]) {attrs = {}, node = "output.c"}
// CHECK: %[[CW:.*]] = plan.kernel "Copy"(%[[W]]) {attrs = {}, node = "output.w"}
// CHECK: %[[CX:.*]] = plan.kernel "Copy"(%arg0) {attrs = {}, node = "output.x"}
// CHECK: return %[[A]], %[[CC]], %[[CW]], %[[CX]]
func.func @main(%x: tensor<4xf32> {onnx.name = "x"}) -> (tensor<4xf32>, tensor<2xi64>, tensor<4x8xf32>, tensor<4xf32>) attributes {onnx.output_names = ["sum", "c", "w", "x"]} {
  %c = onnx.Constant dense<[3, 4]> : tensor<2xi64>
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 128 : i64} : tensor<4x8xf32>
  %s = onnx.Add %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %s, %c, %w, %x : tensor<4xf32>, tensor<2xi64>, tensor<4x8xf32>, tensor<4xf32>
}
