// RUN: tpc-opt %s --split-input-file --tpc-fuse-rms-norm | FileCheck %s

// Llama at opset 14: w * (x * (1 / sqrt(mean(x^2) + eps))).
// CHECK-LABEL: func.func @llama
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x64xf32>, %[[W:.+]]: tensor<64xf32>)
// CHECK-NEXT: %[[Y:.+]] = onnx.RMSNormalization %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
// CHECK-NEXT: return %[[Y]]
func.func @llama(%x: tensor<1x16x64xf32>, %w: tensor<64xf32>) -> tensor<1x16x64xf32> {
  %two = onnx.Constant dense<2.000000e+00> : tensor<f32>
  %eps = onnx.Constant dense<9.99999997E-7> : tensor<f32>
  %one = onnx.Constant dense<1.000000e+00> : tensor<f32>
  %0 = onnx.Pow %x, %two : tensor<1x16x64xf32>, tensor<f32> -> tensor<1x16x64xf32>
  %1 = onnx.ReduceMean %0 {axes = array<i64: -1>} : tensor<1x16x64xf32> -> tensor<1x16x1xf32>
  %2 = onnx.Add %1, %eps : tensor<1x16x1xf32>, tensor<f32> -> tensor<1x16x1xf32>
  %3 = onnx.Sqrt %2 : tensor<1x16x1xf32>
  %4 = onnx.Div %one, %3 : tensor<f32>, tensor<1x16x1xf32> -> tensor<1x16x1xf32>
  %5 = onnx.Mul %x, %4 : tensor<1x16x64xf32>, tensor<1x16x1xf32> -> tensor<1x16x64xf32>
  %6 = onnx.Mul %w, %5 : tensor<64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  return %6 : tensor<1x16x64xf32>
}

// -----

// Reciprocal and x * x; the weight after.
// CHECK-LABEL: func.func @reciprocal
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x32xf32>, %[[W:.+]]: tensor<32xf32>)
// CHECK: %[[Y:.+]] = onnx.RMSNormalization %[[X]], %[[W]] {axis = 2 : i64
// CHECK-NEXT: return %[[Y]]
func.func @reciprocal(%x: tensor<2x8x32xf32>, %w: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %eps = onnx.Constant dense<1.0e-5> : tensor<f32>
  %0 = onnx.Mul %x, %x : tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  %1 = onnx.ReduceMean %0 {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %2 = onnx.Add %eps, %1 : tensor<f32>, tensor<2x8x1xf32> -> tensor<2x8x1xf32>
  %3 = onnx.Sqrt %2 : tensor<2x8x1xf32>
  %4 = onnx.Reciprocal %3 : tensor<2x8x1xf32>
  %5 = onnx.Mul %4, %x : tensor<2x8x1xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  %6 = onnx.Mul %5, %w : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  return %6 : tensor<2x8x32xf32>
}

// -----

// A plain division and no weight: the scale becomes ones.
// CHECK-LABEL: func.func @div_no_weight
// CHECK: %[[ONES:.+]] = onnx.Constant dense<1.000000e+00> : tensor<32xf32>
// CHECK: onnx.RMSNormalization %{{.+}}, %[[ONES]]
func.func @div_no_weight(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %eps = onnx.Constant dense<1.0e-6> : tensor<f32>
  %two = onnx.Constant dense<2.0> : tensor<f32>
  %0 = onnx.Pow %x, %two : tensor<4x32xf32>, tensor<f32> -> tensor<4x32xf32>
  %1 = onnx.ReduceMean %0 {axes = array<i64: -1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %2 = onnx.Add %1, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %3 = onnx.Sqrt %2 : tensor<4x1xf32>
  %4 = onnx.Div %x, %3 : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  return %4 : tensor<4x32xf32>
}

// -----

// The square is of another value than the one normalized.
// CHECK-LABEL: func.func @other_value
// CHECK-NOT: onnx.RMSNormalization
func.func @other_value(%x: tensor<4x32xf32>, %y: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %eps = onnx.Constant dense<1.0e-6> : tensor<f32>
  %two = onnx.Constant dense<2.0> : tensor<f32>
  %0 = onnx.Pow %y, %two : tensor<4x32xf32>, tensor<f32> -> tensor<4x32xf32>
  %1 = onnx.ReduceMean %0 {axes = array<i64: -1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %2 = onnx.Add %1, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %3 = onnx.Sqrt %2 : tensor<4x1xf32>
  %4 = onnx.Div %x, %3 : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  return %4 : tensor<4x32xf32>
}

// -----

// The inverse root is also returned: no fusion.
// CHECK-LABEL: func.func @inverse_other_use
// CHECK-NOT: onnx.RMSNormalization
func.func @inverse_other_use(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x1xf32>) {
  %eps = onnx.Constant dense<1.0e-6> : tensor<f32>
  %two = onnx.Constant dense<2.0> : tensor<f32>
  %0 = onnx.Pow %x, %two : tensor<4x32xf32>, tensor<f32> -> tensor<4x32xf32>
  %1 = onnx.ReduceMean %0 {axes = array<i64: -1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %2 = onnx.Add %1, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %3 = onnx.Sqrt %2 : tensor<4x1xf32>
  %4 = onnx.Reciprocal %3 : tensor<4x1xf32>
  %5 = onnx.Mul %x, %4 : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  return %5, %4 : tensor<4x32xf32>, tensor<4x1xf32>
}

// -----

// A per-row (not per-element) weight is not the norm's scale: the norm
// fuses, the multiplication stays.
// CHECK-LABEL: func.func @row_weight
// CHECK: %[[N:.+]] = onnx.RMSNormalization
// CHECK: onnx.Mul %[[N]], %{{.+}} : tensor<4x32xf32>, tensor<4x1xf32>
func.func @row_weight(%x: tensor<4x32xf32>, %w: tensor<4x1xf32>) -> tensor<4x32xf32> {
  %eps = onnx.Constant dense<1.0e-6> : tensor<f32>
  %two = onnx.Constant dense<2.0> : tensor<f32>
  %0 = onnx.Pow %x, %two : tensor<4x32xf32>, tensor<f32> -> tensor<4x32xf32>
  %1 = onnx.ReduceMean %0 {axes = array<i64: -1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %2 = onnx.Add %1, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %3 = onnx.Sqrt %2 : tensor<4x1xf32>
  %4 = onnx.Div %x, %3 : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  %5 = onnx.Mul %4, %w : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  return %5 : tensor<4x32xf32>
}
