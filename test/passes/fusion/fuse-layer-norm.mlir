// RUN: tpc-opt %s --split-input-file --tpc-fuse-layer-norm | FileCheck %s

// BERT at opset 14: (x - mean) / sqrt(mean((x - mean)^2) + eps) * g + b.
// CHECK-LABEL: func.func @bert
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x64xf32>, %[[G:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>)
// CHECK-NEXT: %[[Y:.+]] = onnx.LayerNormalization %[[X]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 9.99999996E-13 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @bert(%x: tensor<1x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<1x16x64xf32> {
  %eps = onnx.Constant dense<9.99999996E-13> : tensor<f32>
  %two = onnx.Constant dense<2.000000e+00> : tensor<f32>
  %0 = onnx.ReduceMean %x {axes = array<i64: -1>} : tensor<1x16x64xf32> -> tensor<1x16x1xf32>
  %1 = onnx.Sub %x, %0 : tensor<1x16x64xf32>, tensor<1x16x1xf32> -> tensor<1x16x64xf32>
  %2 = onnx.Pow %1, %two : tensor<1x16x64xf32>, tensor<f32> -> tensor<1x16x64xf32>
  %3 = onnx.ReduceMean %2 {axes = array<i64: -1>} : tensor<1x16x64xf32> -> tensor<1x16x1xf32>
  %4 = onnx.Add %3, %eps : tensor<1x16x1xf32>, tensor<f32> -> tensor<1x16x1xf32>
  %5 = onnx.Sqrt %4 : tensor<1x16x1xf32>
  %6 = onnx.Div %1, %5 : tensor<1x16x64xf32>, tensor<1x16x1xf32> -> tensor<1x16x64xf32>
  %7 = onnx.Mul %6, %g : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %8 = onnx.Add %7, %b : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  return %8 : tensor<1x16x64xf32>
}

// -----

// d * d for the square, Reciprocal for the division, scale first, no bias.
// CHECK-LABEL: func.func @reciprocal_no_bias
// CHECK-SAME: (%[[X:.+]]: tensor<4x32xf32>, %[[G:.+]]: tensor<32xf32>)
// CHECK: %[[Y:.+]] = onnx.LayerNormalization %[[X]], %[[G]] {axis = 1 : i64} : tensor<4x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @reciprocal_no_bias(%x: tensor<4x32xf32>, %g: tensor<32xf32>) -> tensor<4x32xf32> {
  %eps = onnx.Constant dense<1.0e-5> : tensor<f32>
  %0 = onnx.ReduceMean %x {axes = array<i64: 1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = onnx.Sub %x, %0 : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  %2 = onnx.Mul %1, %1 : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %3 = onnx.ReduceMean %2 {axes = array<i64: 1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = onnx.Add %eps, %3 : tensor<f32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %5 = onnx.Sqrt %4 : tensor<4x1xf32>
  %6 = onnx.Reciprocal %5 : tensor<4x1xf32>
  %7 = onnx.Mul %6, %1 : tensor<4x1xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %8 = onnx.Mul %g, %7 : tensor<32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  return %8 : tensor<4x32xf32>
}

// -----

// Neither scale nor bias: the scale becomes ones.
// CHECK-LABEL: func.func @bare
// CHECK: %[[ONES:.+]] = onnx.Constant dense<1.000000e+00> : tensor<32xf32>
// CHECK: onnx.LayerNormalization %{{.+}}, %[[ONES]] {axis = 1 : i64
// CHECK-NOT: onnx.Sqrt
func.func @bare(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %eps = onnx.Constant dense<1.0e-5> : tensor<f32>
  %two = onnx.Constant dense<2.0> : tensor<f32>
  %0 = onnx.ReduceMean %x {axes = array<i64: -1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = onnx.Sub %x, %0 : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  %2 = onnx.Pow %1, %two : tensor<4x32xf32>, tensor<f32> -> tensor<4x32xf32>
  %3 = onnx.ReduceMean %2 {axes = array<i64: -1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = onnx.Add %3, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %5 = onnx.Sqrt %4 : tensor<4x1xf32>
  %6 = onnx.Div %1, %5 : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  return %6 : tensor<4x32xf32>
}

// -----

// The two reductions are over different axes: no fusion.
// CHECK-LABEL: func.func @wrong_axis
// CHECK-NOT: onnx.LayerNormalization
func.func @wrong_axis(%x: tensor<4x8x32xf32>) -> tensor<4x8x32xf32> {
  %eps = onnx.Constant dense<1.0e-5> : tensor<f32>
  %two = onnx.Constant dense<2.0> : tensor<f32>
  %0 = onnx.ReduceMean %x {axes = array<i64: -1>} : tensor<4x8x32xf32> -> tensor<4x8x1xf32>
  %1 = onnx.Sub %x, %0 : tensor<4x8x32xf32>, tensor<4x8x1xf32> -> tensor<4x8x32xf32>
  %2 = onnx.Pow %1, %two : tensor<4x8x32xf32>, tensor<f32> -> tensor<4x8x32xf32>
  %3 = onnx.ReduceMean %2 {axes = array<i64: 1, 2>} : tensor<4x8x32xf32> -> tensor<4x1x1xf32>
  %4 = onnx.Add %3, %eps : tensor<4x1x1xf32>, tensor<f32> -> tensor<4x1x1xf32>
  %5 = onnx.Sqrt %4 : tensor<4x1x1xf32>
  %6 = onnx.Div %1, %5 : tensor<4x8x32xf32>, tensor<4x1x1xf32> -> tensor<4x8x32xf32>
  return %6 : tensor<4x8x32xf32>
}

// -----

// A reduction over a leading axis is not a layer norm.
// CHECK-LABEL: func.func @leading_axis
// CHECK-NOT: onnx.LayerNormalization
func.func @leading_axis(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %eps = onnx.Constant dense<1.0e-5> : tensor<f32>
  %two = onnx.Constant dense<2.0> : tensor<f32>
  %0 = onnx.ReduceMean %x {axes = array<i64: 0>} : tensor<4x32xf32> -> tensor<1x32xf32>
  %1 = onnx.Sub %x, %0 : tensor<4x32xf32>, tensor<1x32xf32> -> tensor<4x32xf32>
  %2 = onnx.Pow %1, %two : tensor<4x32xf32>, tensor<f32> -> tensor<4x32xf32>
  %3 = onnx.ReduceMean %2 {axes = array<i64: 0>} : tensor<4x32xf32> -> tensor<1x32xf32>
  %4 = onnx.Add %3, %eps : tensor<1x32xf32>, tensor<f32> -> tensor<1x32xf32>
  %5 = onnx.Sqrt %4 : tensor<1x32xf32>
  %6 = onnx.Div %1, %5 : tensor<4x32xf32>, tensor<1x32xf32> -> tensor<4x32xf32>
  return %6 : tensor<4x32xf32>
}

// -----

// The centred value is also returned: it must stay, and so does the chain.
// CHECK-LABEL: func.func @centred_other_use
// CHECK-NOT: onnx.LayerNormalization
func.func @centred_other_use(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %eps = onnx.Constant dense<1.0e-5> : tensor<f32>
  %two = onnx.Constant dense<2.0> : tensor<f32>
  %0 = onnx.ReduceMean %x {axes = array<i64: -1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = onnx.Sub %x, %0 : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  %2 = onnx.Pow %1, %two : tensor<4x32xf32>, tensor<f32> -> tensor<4x32xf32>
  %3 = onnx.ReduceMean %2 {axes = array<i64: -1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = onnx.Add %3, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %5 = onnx.Sqrt %4 : tensor<4x1xf32>
  %6 = onnx.Div %1, %5 : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  return %6, %1 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Pow by 3 is not a variance.
// CHECK-LABEL: func.func @wrong_power
// CHECK-NOT: onnx.LayerNormalization
func.func @wrong_power(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %eps = onnx.Constant dense<1.0e-5> : tensor<f32>
  %three = onnx.Constant dense<3.0> : tensor<f32>
  %0 = onnx.ReduceMean %x {axes = array<i64: -1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = onnx.Sub %x, %0 : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  %2 = onnx.Pow %1, %three : tensor<4x32xf32>, tensor<f32> -> tensor<4x32xf32>
  %3 = onnx.ReduceMean %2 {axes = array<i64: -1>} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = onnx.Add %3, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %5 = onnx.Sqrt %4 : tensor<4x1xf32>
  %6 = onnx.Div %1, %5 : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  return %6 : tensor<4x32xf32>
}
