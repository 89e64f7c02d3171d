// RUN: tpc-opt %s --split-input-file --tpc-fuse-swiglu | FileCheck %s

// Llama's MLP: (g * Sigmoid(g)) * u.
// CHECK-LABEL: func.func @llama
// CHECK-SAME: (%[[G:.+]]: tensor<1x16x172xf32>, %[[U:.+]]: tensor<1x16x172xf32>)
// CHECK-NEXT: %[[Y:.+]] = tpc.SwiGLU %[[G]], %[[U]] : tensor<1x16x172xf32>
// CHECK-NEXT: return %[[Y]]
func.func @llama(%g: tensor<1x16x172xf32>, %u: tensor<1x16x172xf32>) -> tensor<1x16x172xf32> {
  %0 = onnx.Sigmoid %g : tensor<1x16x172xf32>
  %1 = onnx.Mul %g, %0 : tensor<1x16x172xf32>, tensor<1x16x172xf32> -> tensor<1x16x172xf32>
  %2 = onnx.Mul %1, %u : tensor<1x16x172xf32>, tensor<1x16x172xf32> -> tensor<1x16x172xf32>
  return %2 : tensor<1x16x172xf32>
}

// -----

// Another grouping: u * (Sigmoid(g) * g).
// CHECK-LABEL: func.func @grouping
// CHECK-SAME: (%[[G:.+]]: tensor<8xf32>, %[[U:.+]]: tensor<8xf32>)
// CHECK: tpc.SwiGLU %[[G]], %[[U]]
func.func @grouping(%g: tensor<8xf32>, %u: tensor<8xf32>) -> tensor<8xf32> {
  %0 = onnx.Sigmoid %g : tensor<8xf32>
  %1 = onnx.Mul %0, %g : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %2 = onnx.Mul %u, %1 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// The silu is used again: no fusion.
// CHECK-LABEL: func.func @silu_other_use
// CHECK-NOT: tpc.SwiGLU
func.func @silu_other_use(%g: tensor<8xf32>, %u: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = onnx.Sigmoid %g : tensor<8xf32>
  %1 = onnx.Mul %g, %0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %2 = onnx.Mul %1, %u : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %2, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Sigmoid of another value than the gate: a gated sigmoid, not SwiGLU.
// CHECK-LABEL: func.func @other_gate
// CHECK-NOT: tpc.SwiGLU
func.func @other_gate(%g: tensor<8xf32>, %h: tensor<8xf32>, %u: tensor<8xf32>) -> tensor<8xf32> {
  %0 = onnx.Sigmoid %h : tensor<8xf32>
  %1 = onnx.Mul %g, %0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %2 = onnx.Mul %1, %u : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// A broadcast up projection does not have the result's shape.
// CHECK-LABEL: func.func @broadcast_up
// CHECK-NOT: tpc.SwiGLU
func.func @broadcast_up(%g: tensor<4x8xf32>, %u: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = onnx.Sigmoid %g : tensor<4x8xf32>
  %1 = onnx.Mul %g, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = onnx.Mul %1, %u : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
