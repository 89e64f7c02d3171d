// RUN: tpc-opt %s --split-input-file --tpc-fuse-matmul-bias | FileCheck %s

// BERT's intermediate layer: bias first, then the fused GELU.
// CHECK-LABEL: func.func @bert_ffn
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x64xf32>, %[[W:.+]]: tensor<64x128xf32>, %[[B:.+]]: tensor<128xf32>)
// CHECK-NEXT: %[[Y:.+]] = tpc.MatMulBias %[[X]], %[[W]], %[[B]] {activation = "gelu"} : tensor<1x16x64xf32>, tensor<64x128xf32>, tensor<128xf32> -> tensor<1x16x128xf32>
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
// CHECK: tpc.MatMulBias %{{.+}}, %{{.+}}, %{{.+}} : tensor<4x8xf32>
// CHECK: tpc.MatMulBias %{{.+}}, %{{.+}}, %{{.+}} {activation = "relu"}
// CHECK-NOT: onnx.Relu
func.func @bias_and_relu(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %b = onnx.Weight "b" {file = "m.onnx", length = 32 : i64, offset = 0 : i64} : tensor<1x8xf32>
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
// CHECK: %[[Y:.+]] = tpc.MatMulBias %{{.+}}, %{{.+}}, %{{.+}} : tensor<4x8xf32>
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
// CHECK-NOT: tpc.MatMulBias
func.func @product_other_use(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = onnx.MatMul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %1 = onnx.Add %0, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %1, %0 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A per-row addend and a residual are not biases; a batched B is not a
// weight matrix.
// CHECK-LABEL: func.func @not_a_bias
// CHECK-NOT: tpc.MatMulBias
func.func @not_a_bias(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %r: tensor<4x1xf32>, %s: tensor<4x8xf32>, %q: tensor<2x4x8xf32>, %k: tensor<2x8x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>) {
  %0 = onnx.MatMul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %1 = onnx.Add %0, %r : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %2 = onnx.MatMul %s, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %3 = onnx.Add %2, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = onnx.MatMul %q, %k : tensor<2x4x8xf32>, tensor<2x8x8xf32> -> tensor<2x4x8xf32>
  %5 = onnx.Add %4, %b : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  return %1, %3, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>
}

// -----

// A parallel-residual block (GPT-J, GPT-NeoX, Falcon) at sequence length 1:
// the MLP's output [1, 1, N] is one row, not a bias, though its shape would
// broadcast as one. Fusing it would make the program's structure depend on
// the length. A [1, 1, N] weight is a bias.
// CHECK-LABEL: func.func @one_row_is_not_a_bias
// CHECK: %[[ATTN:.+]] = onnx.MatMul
// CHECK: onnx.Add %[[ATTN]]
// CHECK: tpc.MatMulBias
// CHECK-NOT: onnx.Add
func.func @one_row_is_not_a_bias(%x: tensor<1x1x8xf32>, %w: tensor<8x8xf32>) -> (tensor<1x1x8xf32>, tensor<1x1x8xf32>) {
  %mlp = onnx.Gelu %x : tensor<1x1x8xf32>
  %0 = onnx.MatMul %x, %w : tensor<1x1x8xf32>, tensor<8x8xf32> -> tensor<1x1x8xf32>
  %1 = onnx.Add %0, %mlp : tensor<1x1x8xf32>, tensor<1x1x8xf32> -> tensor<1x1x8xf32>
  %b = onnx.Weight "b" {file = "m.onnx", length = 32 : i64, offset = 0 : i64} : tensor<1x1x8xf32>
  %2 = onnx.MatMul %x, %w : tensor<1x1x8xf32>, tensor<8x8xf32> -> tensor<1x1x8xf32>
  %3 = onnx.Add %2, %b : tensor<1x1x8xf32>, tensor<1x1x8xf32> -> tensor<1x1x8xf32>
  return %1, %3 : tensor<1x1x8xf32>, tensor<1x1x8xf32>
}

// -----

// GPT-2's Conv1D as the TorchScript exporter writes it: Gemm(x, w, bias),
// Reshape back to [batch, sequence, hidden], then the MLP's GELU. The
// activation joins the product and the Reshape follows it; a Gemm with no
// activation after it stays a Gemm.
// CHECK-LABEL: func.func @gemm_gelu
// CHECK-SAME: (%[[X:.+]]: tensor<16x64xf32>, %[[W:.+]]: tensor<64x256xf32>, %[[B:.+]]: tensor<256xf32>, %[[W2:.+]]: tensor<256x64xf32>, %[[B2:.+]]: tensor<64xf32>)
// CHECK-NEXT: %[[H:.+]] = tpc.MatMulBias %[[X]], %[[W]], %[[B]] {activation = "gelu_tanh"} : tensor<16x64xf32>, tensor<64x256xf32>, tensor<256xf32> -> tensor<16x256xf32>
// CHECK-NEXT: %[[R:.+]] = onnx.Reshape %[[H]] : tensor<16x256xf32> -> tensor<1x16x256xf32>
// CHECK-NEXT: %[[R2:.+]] = onnx.Reshape %[[R]] : tensor<1x16x256xf32> -> tensor<16x256xf32>
// CHECK-NEXT: %[[Y:.+]] = onnx.Gemm %[[R2]], %[[W2]], %[[B2]]
// CHECK-NEXT: %[[Z:.+]] = tpc.MatMulBias %[[X]], %[[W]], %[[B]] {activation = "relu"}
// CHECK-NEXT: return %[[Y]], %[[Z]]
func.func @gemm_gelu(%x: tensor<16x64xf32>, %w: tensor<64x256xf32>, %b: tensor<256xf32>, %w2: tensor<256x64xf32>, %b2: tensor<64xf32>) -> (tensor<16x64xf32>, tensor<16x256xf32>) {
  %0 = onnx.Gemm %x, %w, %b : tensor<16x64xf32>, tensor<64x256xf32>, tensor<256xf32> -> tensor<16x256xf32>
  %1 = onnx.Reshape %0 : tensor<16x256xf32> -> tensor<1x16x256xf32>
  %2 = onnx.Gelu %1 {approximate = "tanh"} : tensor<1x16x256xf32>
  %3 = onnx.Reshape %2 : tensor<1x16x256xf32> -> tensor<16x256xf32>
  %4 = onnx.Gemm %3, %w2, %b2 : tensor<16x256xf32>, tensor<256x64xf32>, tensor<64xf32> -> tensor<16x64xf32>
  %5 = onnx.Gemm %x, %w, %b : tensor<16x64xf32>, tensor<64x256xf32>, tensor<256xf32> -> tensor<16x256xf32>
  %6 = onnx.Relu %5 : tensor<16x256xf32>
  return %4, %6 : tensor<16x64xf32>, tensor<16x256xf32>
}

// -----

// Gemms that are not a plain product plus bias keep their activation: a
// transposed weight, a scaled product or C, a C per row, no C, a product
// with another use, and a Reshape of it with another use.
// CHECK-LABEL: func.func @gemm_not_fused
// CHECK-NOT: tpc.MatMulBias
func.func @gemm_not_fused(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %r: tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<32xf32>, tensor<32xf32>) {
  %0 = onnx.Gemm %x, %w, %b {transB = 1 : i64} : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = onnx.Relu %0 : tensor<4x8xf32>
  %2 = onnx.Gemm %x, %w, %b {alpha = 2.0 : f32} : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %3 = onnx.Relu %2 : tensor<4x8xf32>
  %4 = onnx.Gemm %x, %w, %b {beta = 0.5 : f32} : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %5 = onnx.Relu %4 : tensor<4x8xf32>
  %6 = onnx.Gemm %x, %w, %r : tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %7 = onnx.Relu %6 : tensor<4x8xf32>
  %8 = onnx.Gemm %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %9 = onnx.Relu %8 : tensor<4x8xf32>
  %10 = onnx.Gemm %x, %w, %b : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %11 = onnx.Gelu %10 : tensor<4x8xf32>
  %12 = onnx.Gemm %x, %w, %b : tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %13 = onnx.Reshape %12 : tensor<4x8xf32> -> tensor<32xf32>
  %14 = onnx.Gelu %13 : tensor<32xf32>
  return %1, %3, %5, %7, %9, %11, %10, %14, %13 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<32xf32>, tensor<32xf32>
}

// -----

// The same Conv1D at tp > 1: the sharding pass leaves the column-parallel
// Gemm without C and adds the bias slice after it. The Add root makes the
// MatMulBias, and the GELU behind the Reshape joins it.
// CHECK-LABEL: func.func @sharded_gemm_gelu
// CHECK-SAME: (%[[X:.+]]: tensor<16x64xf32>, %[[W:.+]]: tensor<64x128xf32>, %[[B:.+]]: tensor<128xf32>)
// CHECK-NEXT: %[[H:.+]] = tpc.MatMulBias %[[X]], %[[W]], %[[B]] {activation = "gelu_tanh"}
// CHECK-NEXT: %[[R:.+]] = onnx.Reshape %[[H]] : tensor<16x128xf32> -> tensor<1x16x128xf32>
// CHECK-NEXT: %[[M:.+]] = tpc.MatMulBias %[[X]], %[[W]], %[[B]] {activation = "relu"}
// CHECK-NEXT: %[[R2:.+]] = onnx.Reshape %[[M]] : tensor<16x128xf32> -> tensor<1x16x128xf32>
// CHECK-NEXT: return %[[R]], %[[R2]]
func.func @sharded_gemm_gelu(%x: tensor<16x64xf32>, %w: tensor<64x128xf32>, %b: tensor<128xf32>) -> (tensor<1x16x128xf32>, tensor<1x16x128xf32>) {
  %0 = onnx.Gemm %x, %w : tensor<16x64xf32>, tensor<64x128xf32> -> tensor<16x128xf32>
  %1 = onnx.Add %0, %b : tensor<16x128xf32>, tensor<128xf32> -> tensor<16x128xf32>
  %2 = onnx.Reshape %1 : tensor<16x128xf32> -> tensor<1x16x128xf32>
  %3 = onnx.Gelu %2 {approximate = "tanh"} : tensor<1x16x128xf32>
  %4 = onnx.MatMul %x, %w : tensor<16x64xf32>, tensor<64x128xf32> -> tensor<16x128xf32>
  %5 = onnx.Add %b, %4 : tensor<128xf32>, tensor<16x128xf32> -> tensor<16x128xf32>
  %6 = onnx.Reshape %5 : tensor<16x128xf32> -> tensor<1x16x128xf32>
  %7 = onnx.Relu %6 : tensor<1x16x128xf32>
  return %3, %7 : tensor<1x16x128xf32>, tensor<1x16x128xf32>
}

// -----

// A Gemm without C that scales or transposes is not a plain product: its
// Add stays.
// CHECK-LABEL: func.func @gemm_without_c_not_plain
// CHECK-NOT: tpc.MatMulBias
func.func @gemm_without_c_not_plain(%x: tensor<16x64xf32>, %w: tensor<64x128xf32>, %wt: tensor<128x64xf32>, %b: tensor<128xf32>) -> (tensor<16x128xf32>, tensor<16x128xf32>) {
  %0 = onnx.Gemm %x, %w {alpha = 0.5 : f32} : tensor<16x64xf32>, tensor<64x128xf32> -> tensor<16x128xf32>
  %1 = onnx.Add %0, %b : tensor<16x128xf32>, tensor<128xf32> -> tensor<16x128xf32>
  %2 = onnx.Gemm %x, %wt {transB = 1 : i64} : tensor<16x64xf32>, tensor<128x64xf32> -> tensor<16x128xf32>
  %3 = onnx.Add %2, %b : tensor<16x128xf32>, tensor<128xf32> -> tensor<16x128xf32>
  return %1, %3 : tensor<16x128xf32>, tensor<16x128xf32>
}
