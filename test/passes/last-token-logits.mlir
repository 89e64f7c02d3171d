// RUN: tpc-opt %s --split-input-file --tpc-last-token-logits | FileCheck %s

// A decode engine's forward of 4 tokens: the logits become the last
// token's. The cut moves up through the soft-capping (a scalar divide,
// tanh, a scalar multiply), the LM head (a MatMul by a weight) and the
// final norm, and stops at the residual add (both operands are rows).
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> tensor<1x1x320xf32>
// CHECK: %[[SUM:.+]] = onnx.Add %{{.+}}, %{{.+}} : tensor<1x4x64xf32>, tensor<1x4x64xf32> -> tensor<1x4x64xf32>
// CHECK-NEXT: %[[CUT:.+]] = onnx.Slice %[[SUM]] {axes = array<i64: 1>, ends = array<i64: 4>, starts = array<i64: 3>, steps = array<i64: 1>} : tensor<1x4x64xf32> -> tensor<1x1x64xf32>
// CHECK-NEXT: %[[N:.+]] = onnx.LayerNormalization %[[CUT]], {{.*}} -> tensor<1x1x64xf32>
// CHECK-NEXT: %[[L:.+]] = onnx.MatMul %[[N]], %{{.+}} : tensor<1x1x64xf32>, tensor<64x320xf32> -> tensor<1x1x320xf32>
// CHECK-NEXT: %[[D:.+]] = onnx.Div %[[L]], %{{.+}} : tensor<1x1x320xf32>, tensor<f32> -> tensor<1x1x320xf32>
// CHECK-NEXT: %[[T:.+]] = onnx.Tanh %[[D]] : tensor<1x1x320xf32>
// CHECK-NEXT: %[[Y:.+]] = onnx.Mul %[[T]], %{{.+}} : tensor<1x1x320xf32>, tensor<f32> -> tensor<1x1x320xf32>
// CHECK-NEXT: return %[[Y]]
module attributes {onnx.kv_cache = {length = 8 : i64, pairs = [], position = "cache_position"}} {
func.func @main(%a: tensor<1x4x64xf32>, %b: tensor<1x4x64xf32>) -> tensor<1x4x320xf32> {
  %g = onnx.Weight "g" {file = "m.onnx", offset = 0 : i64, length = 256 : i64} : tensor<64xf32>
  %w = onnx.Weight "w" {file = "m.onnx", offset = 256 : i64, length = 81920 : i64} : tensor<64x320xf32>
  %cap = onnx.Constant dense<30.0> : tensor<f32>
  %s = onnx.Add %a, %b : tensor<1x4x64xf32>, tensor<1x4x64xf32> -> tensor<1x4x64xf32>
  %n = onnx.LayerNormalization %s, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x4x64xf32>, tensor<64xf32> -> tensor<1x4x64xf32>
  %l = onnx.MatMul %n, %w : tensor<1x4x64xf32>, tensor<64x320xf32> -> tensor<1x4x320xf32>
  %d = onnx.Div %l, %cap : tensor<1x4x320xf32>, tensor<f32> -> tensor<1x4x320xf32>
  %t = onnx.Tanh %d : tensor<1x4x320xf32>
  %y = onnx.Mul %t, %cap : tensor<1x4x320xf32>, tensor<f32> -> tensor<1x4x320xf32>
  return %y : tensor<1x4x320xf32>
}
}

// -----

// One token: the Slice takes the whole axis and stays in the same place,
// so the program is the same for every token count.
// CHECK-LABEL: func.func @main
// CHECK: %[[SUM:.+]] = onnx.Add
// CHECK-NEXT: onnx.Slice %[[SUM]] {axes = array<i64: 1>, ends = array<i64: 1>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<1x1x64xf32> -> tensor<1x1x64xf32>
// CHECK-NEXT: onnx.MatMul
module attributes {onnx.kv_cache = {length = 8 : i64, pairs = [], position = "cache_position"}} {
func.func @main(%a: tensor<1x1x64xf32>, %b: tensor<1x1x64xf32>) -> tensor<1x1x320xf32> {
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 81920 : i64} : tensor<64x320xf32>
  %s = onnx.Add %a, %b : tensor<1x1x64xf32>, tensor<1x1x64xf32> -> tensor<1x1x64xf32>
  %l = onnx.MatMul %s, %w : tensor<1x1x64xf32>, tensor<64x320xf32> -> tensor<1x1x320xf32>
  return %l : tensor<1x1x320xf32>
}
}

// -----

// Not a decode engine: unchanged.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> tensor<1x4x320xf32>
// CHECK-NOT: onnx.Slice
func.func @main(%a: tensor<1x4x64xf32>) -> tensor<1x4x320xf32> {
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 81920 : i64} : tensor<64x320xf32>
  %l = onnx.MatMul %a, %w : tensor<1x4x64xf32>, tensor<64x320xf32> -> tensor<1x4x320xf32>
  return %l : tensor<1x4x320xf32>
}
