// RUN: tpc-opt %s --split-input-file --tpc-fuse-matmul-bias | FileCheck %s

// BERT's intermediate layer: bias first, then the fused GELU.
// CHECK-LABEL: func.func @bert_ffn
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x64xf32>, %[[W:.+]]: tensor<64x128xf32>, %[[B:.+]]: tensor<128xf32>)
// CHECK-NEXT: %[[Y:.+]] = onnx.MatMulBias %[[X]], %[[W]], %[[B]] {activation = "gelu"} : tensor<1x16x64xf32>, tensor<64x128xf32>, tensor<128xf32> -> tensor<1x16x128xf32>
// CHECK-NEXT: return %[[Y]]
func.func @bert_ffn(%x: tensor<1x16x64xf32>, %w: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<1x16x128xf32> {
  %0 = onnx.MatMul %x, %w : tensor<1x16x64xf32>, tensor<64x128xf32> -> tensor<1x16x128xf32>
  %1 = onnx.Add %b, %0 : tensor<128xf32>, tensor<1x16x128xf32> -> tensor<1x16x128xf32>
  %2 = onnx.Gelu %1 : tensor<1x16x128xf32>
  return %2 : tensor<1x16x128xf32>
}

// -----

// A projection with a bias only, and one with Relu.
// CHECK-LABEL: func.func @bias_and_relu
// CHECK: onnx.MatMulBias %{{.+}}, %{{.+}}, %{{.+}} : tensor<4x8xf32>
// CHECK: onnx.MatMulBias %{{.+}}, %{{.+}}, %{{.+}} {activation = "relu"}
// CHECK-NOT: onnx.Relu
func.func @bias_and_relu(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %0 = onnx.MatMul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %1 = onnx.Add %0, %b : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %2 = onnx.MatMul %1, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %3 = onnx.Add %2, %b : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %4 = onnx.Relu %3 : tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// The sum has another use: the bias fuses, the GELU stays on its own.
// CHECK-LABEL: func.func @sum_other_use
// CHECK: %[[Y:.+]] = onnx.MatMulBias %{{.+}}, %{{.+}}, %{{.+}} : tensor<4x8xf32>
// CHECK: onnx.Gelu %[[Y]]
func.func @sum_other_use(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = onnx.MatMul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %1 = onnx.Add %0, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %2 = onnx.Gelu %1 : tensor<4x8xf32>
  return %2, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The product is used elsewhere: no fusion.
// CHECK-LABEL: func.func @product_other_use
// CHECK-NOT: onnx.MatMulBias
func.func @product_other_use(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = onnx.MatMul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %1 = onnx.Add %0, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %1, %0 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A per-row addend and a residual are not biases; a batched B is not a
// weight matrix.
// CHECK-LABEL: func.func @not_a_bias
// CHECK-NOT: onnx.MatMulBias
func.func @not_a_bias(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %r: tensor<4x1xf32>, %s: tensor<4x8xf32>, %q: tensor<2x4x8xf32>, %k: tensor<2x8x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>) {
  %0 = onnx.MatMul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %1 = onnx.Add %0, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %2 = onnx.MatMul %s, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %3 = onnx.Add %2, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = onnx.MatMul %q, %k : tensor<2x4x8xf32>, tensor<2x8x8xf32> -> tensor<2x4x8xf32>
  %5 = onnx.Add %4, %b : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  return %1, %3, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>
}
