// RUN: tpc-opt %s --split-input-file --tpc-fuse-add-norm | FileCheck %s

// A pre-norm residual: the sum feeds the norm and the next residual add.
// CHECK-LABEL: func.func @pre_norm
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x64xf32>, %[[R:.+]]: tensor<1x16x64xf32>, %[[G:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>)
// CHECK-NEXT: %[[Y:.+]], %[[S:.+]] = tpc.AddNormalization %[[X]], %[[R]], %[[G]], %[[B]] : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>, tensor<1x16x64xf32>
// CHECK-NEXT: %[[N:.+]] = onnx.Add %[[S]], %[[Y]]
// CHECK-NEXT: return %[[N]]
func.func @pre_norm(%x: tensor<1x16x64xf32>, %r: tensor<1x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<1x16x64xf32> {
  %s = onnx.Add %x, %r : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %y = onnx.LayerNormalization %s, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %n = onnx.Add %s, %y : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  return %n : tensor<1x16x64xf32>
}

// -----

// Llama's RMS norm of the residual.
// CHECK-LABEL: func.func @rms
// CHECK-SAME: (%[[X:.+]]: tensor<2x32xf32>, %[[R:.+]]: tensor<2x32xf32>, %[[W:.+]]: tensor<32xf32>)
// CHECK-NEXT: %[[Y:.+]], %[[S:.+]] = tpc.AddNormalization %[[X]], %[[R]], %[[W]] {axis = 1 : i64, epsilon = 9.99999997E-7 : f32, rms = 1 : i64}
// CHECK-NEXT: return %[[Y]], %[[S]]
func.func @rms(%x: tensor<2x32xf32>, %r: tensor<2x32xf32>, %w: tensor<32xf32>) -> (tensor<2x32xf32>, tensor<2x32xf32>) {
  %s = onnx.Add %x, %r : tensor<2x32xf32>, tensor<2x32xf32> -> tensor<2x32xf32>
  %y = onnx.RMSNormalization %s, %w {axis = 1 : i64, epsilon = 1.0e-06 : f32} : tensor<2x32xf32>, tensor<32xf32> -> tensor<2x32xf32>
  return %y, %s : tensor<2x32xf32>, tensor<2x32xf32>
}

// -----

// A bias add (broadcast operand) before the norm is not a residual add.
// CHECK-LABEL: func.func @broadcast_add
// CHECK-NOT: tpc.AddNormalization
func.func @broadcast_add(%x: tensor<2x32xf32>, %c: tensor<32xf32>, %w: tensor<32xf32>) -> tensor<2x32xf32> {
  %s = onnx.Add %x, %c : tensor<2x32xf32>, tensor<32xf32> -> tensor<2x32xf32>
  %y = onnx.RMSNormalization %s, %w : tensor<2x32xf32>, tensor<32xf32> -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

// GPT-2's embeddings at batch 1: token embeddings plus position embeddings
// computed from weights and constants alone ([1, S, H], broadcast over the
// batch). Of the sum's type only because the batch is 1: not fused, so the
// program is the same at every batch size.
// CHECK-LABEL: func.func @parameter_of_the_sums_type
// CHECK: onnx.Add
// CHECK: onnx.LayerNormalization
// CHECK-NOT: tpc.AddNormalization
func.func @parameter_of_the_sums_type(%ids: tensor<1x4xi64>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<1x4x8xf32> {
  %wte = onnx.Weight "wte" {file = "m.onnx", length = 512 : i64, offset = 0 : i64} : tensor<16x8xf32>
  %wpe = onnx.Weight "wpe" {file = "m.onnx", length = 128 : i64, offset = 512 : i64} : tensor<4x8xf32>
  %tok = onnx.Gather %wte, %ids : tensor<16x8xf32>, tensor<1x4xi64> -> tensor<1x4x8xf32>
  %pos = onnx.Reshape %wpe {shape = array<i64: 1, 4, 8>} : tensor<4x8xf32> -> tensor<1x4x8xf32>
  %s = onnx.Add %tok, %pos : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %y = onnx.LayerNormalization %s, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// The scale is computed after the add: the fused op could not see it.
// CHECK-LABEL: func.func @late_scale
// CHECK-NOT: tpc.AddNormalization
func.func @late_scale(%x: tensor<2x32xf32>, %r: tensor<2x32xf32>, %w: tensor<32xf32>) -> tensor<2x32xf32> {
  %s = onnx.Add %x, %r : tensor<2x32xf32>, tensor<2x32xf32> -> tensor<2x32xf32>
  %w2 = onnx.Neg %w : tensor<32xf32>
  %y = onnx.RMSNormalization %s, %w2 : tensor<2x32xf32>, tensor<32xf32> -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

// A norm of something else than an add stays as it is.
// CHECK-LABEL: func.func @no_add
// CHECK: onnx.LayerNormalization
// CHECK-NOT: tpc.AddNormalization
func.func @no_add(%x: tensor<2x32xf32>, %g: tensor<32xf32>) -> tensor<2x32xf32> {
  %s = onnx.Mul %x, %x : tensor<2x32xf32>, tensor<2x32xf32> -> tensor<2x32xf32>
  %y = onnx.LayerNormalization %s, %g : tensor<2x32xf32>, tensor<32xf32> -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}
