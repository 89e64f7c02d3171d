// RUN: tpc-opt %s --split-input-file --tpc-fuse-gelu | FileCheck %s

// GPT-2's tanh form: (x * 0.5) * (1 + tanh(0.79788 * (x + 0.044715 * x^3))).
// CHECK-LABEL: func.func @tanh_gpt2
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x256xf32>)
// CHECK-NEXT: %[[G:.+]] = onnx.Gelu %[[X]] {approximate = "tanh"} : tensor<1x16x256xf32>
// CHECK-NEXT: return %[[G]]
func.func @tanh_gpt2(%x: tensor<1x16x256xf32>) -> tensor<1x16x256xf32> {
  %one = onnx.Constant dense<1.000000e+00> : tensor<f32>
  %k = onnx.Constant dense<0.797884583> : tensor<f32>
  %c = onnx.Constant dense<4.471500e-02> : tensor<f32>
  %three = onnx.Constant dense<3.000000e+00> : tensor<f32>
  %half = onnx.Constant dense<5.000000e-01> : tensor<f32>
  %0 = onnx.Mul %x, %half : tensor<1x16x256xf32>, tensor<f32> -> tensor<1x16x256xf32>
  %1 = onnx.Pow %x, %three : tensor<1x16x256xf32>, tensor<f32> -> tensor<1x16x256xf32>
  %2 = onnx.Mul %1, %c : tensor<1x16x256xf32>, tensor<f32> -> tensor<1x16x256xf32>
  %3 = onnx.Add %x, %2 : tensor<1x16x256xf32>, tensor<1x16x256xf32> -> tensor<1x16x256xf32>
  %4 = onnx.Mul %3, %k : tensor<1x16x256xf32>, tensor<f32> -> tensor<1x16x256xf32>
  %5 = onnx.Tanh %4 : tensor<1x16x256xf32>
  %6 = onnx.Add %5, %one : tensor<1x16x256xf32>, tensor<f32> -> tensor<1x16x256xf32>
  %7 = onnx.Mul %0, %6 : tensor<1x16x256xf32>, tensor<1x16x256xf32> -> tensor<1x16x256xf32>
  return %7 : tensor<1x16x256xf32>
}

// -----

// The tanh form with x^3 as products and the 0.5 outermost.
// CHECK-LABEL: func.func @tanh_products
// CHECK: onnx.Gelu %{{.+}} {approximate = "tanh"}
// CHECK-NOT: onnx.Tanh
func.func @tanh_products(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %one = onnx.Constant dense<1.0> : tensor<f32>
  %k = onnx.Constant dense<0.7978845608028654> : tensor<f32>
  %c = onnx.Constant dense<0.044715> : tensor<f32>
  %half = onnx.Constant dense<0.5> : tensor<f32>
  %0 = onnx.Mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = onnx.Mul %0, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = onnx.Mul %c, %1 : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = onnx.Add %2, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = onnx.Mul %k, %3 : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = onnx.Tanh %4 : tensor<4x8xf32>
  %6 = onnx.Add %one, %5 : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %7 = onnx.Mul %x, %6 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %8 = onnx.Mul %7, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// -----

// BERT's erf form: (x * (erf(x / 1.41421354) + 1)) * 0.5.
// CHECK-LABEL: func.func @erf_bert
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x128xf32>)
// CHECK-NEXT: %[[G:.+]] = onnx.Gelu %[[X]] : tensor<1x16x128xf32>
// CHECK-NEXT: return %[[G]]
func.func @erf_bert(%x: tensor<1x16x128xf32>) -> tensor<1x16x128xf32> {
  %half = onnx.Constant dense<5.000000e-01> : tensor<f32>
  %one = onnx.Constant dense<1.000000e+00> : tensor<f32>
  %sqrt2 = onnx.Constant dense<1.41421354> : tensor<f32>
  %0 = onnx.Div %x, %sqrt2 : tensor<1x16x128xf32>, tensor<f32> -> tensor<1x16x128xf32>
  %1 = onnx.Erf %0 : tensor<1x16x128xf32>
  %2 = onnx.Add %1, %one : tensor<1x16x128xf32>, tensor<f32> -> tensor<1x16x128xf32>
  %3 = onnx.Mul %x, %2 : tensor<1x16x128xf32>, tensor<1x16x128xf32> -> tensor<1x16x128xf32>
  %4 = onnx.Mul %3, %half : tensor<1x16x128xf32>, tensor<f32> -> tensor<1x16x128xf32>
  return %4 : tensor<1x16x128xf32>
}

// -----

// The erf form with a multiplication by 1/sqrt(2) and 0.5 first.
// CHECK-LABEL: func.func @erf_mul
// CHECK: onnx.Gelu
// CHECK-NOT: onnx.Erf
func.func @erf_mul(%x: tensor<8xf32>) -> tensor<8xf32> {
  %half = onnx.Constant dense<0.5> : tensor<f32>
  %one = onnx.Constant dense<1.0> : tensor<f32>
  %r = onnx.Constant dense<0.70710678> : tensor<f32>
  %0 = onnx.Mul %half, %x : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %1 = onnx.Mul %x, %r : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %2 = onnx.Erf %1 : tensor<8xf32>
  %3 = onnx.Add %one, %2 : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %4 = onnx.Mul %0, %3 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %4 : tensor<8xf32>
}

// -----

// A wrong constant (sqrt(2) multiplied instead of divided) does not fuse.
// CHECK-LABEL: func.func @erf_wrong_constant
// CHECK-NOT: onnx.Gelu
// CHECK: onnx.Erf
func.func @erf_wrong_constant(%x: tensor<8xf32>) -> tensor<8xf32> {
  %half = onnx.Constant dense<0.5> : tensor<f32>
  %one = onnx.Constant dense<1.0> : tensor<f32>
  %sqrt2 = onnx.Constant dense<1.41421354> : tensor<f32>
  %0 = onnx.Mul %x, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = onnx.Erf %0 : tensor<8xf32>
  %2 = onnx.Add %1, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %3 = onnx.Mul %x, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = onnx.Mul %3, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %4 : tensor<8xf32>
}

// -----

// 0.044 is not GELU's cubic coefficient.
// CHECK-LABEL: func.func @tanh_wrong_cubic
// CHECK-NOT: onnx.Gelu
// CHECK: onnx.Tanh
func.func @tanh_wrong_cubic(%x: tensor<8xf32>) -> tensor<8xf32> {
  %one = onnx.Constant dense<1.0> : tensor<f32>
  %k = onnx.Constant dense<0.797884583> : tensor<f32>
  %c = onnx.Constant dense<0.044> : tensor<f32>
  %three = onnx.Constant dense<3.0> : tensor<f32>
  %half = onnx.Constant dense<0.5> : tensor<f32>
  %0 = onnx.Mul %x, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = onnx.Pow %x, %three : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %2 = onnx.Mul %1, %c : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %3 = onnx.Add %x, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = onnx.Mul %3, %k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %5 = onnx.Tanh %4 : tensor<8xf32>
  %6 = onnx.Add %5, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %7 = onnx.Mul %0, %6 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %7 : tensor<8xf32>
}

// -----

// The erf result has another use: fusing would compute it twice.
// CHECK-LABEL: func.func @erf_other_use
// CHECK-NOT: onnx.Gelu
// CHECK: %[[E:.+]] = onnx.Erf
// CHECK: return %{{.+}}, %[[E]]
func.func @erf_other_use(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %half = onnx.Constant dense<0.5> : tensor<f32>
  %one = onnx.Constant dense<1.0> : tensor<f32>
  %sqrt2 = onnx.Constant dense<1.41421354> : tensor<f32>
  %0 = onnx.Div %x, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = onnx.Erf %0 : tensor<8xf32>
  %2 = onnx.Add %1, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %3 = onnx.Mul %x, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = onnx.Mul %3, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %4, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// The outer factor is not the erf's argument: y * 0.5 * (1 + erf(x / sqrt2)).
// CHECK-LABEL: func.func @erf_other_operand
// CHECK-NOT: onnx.Gelu
func.func @erf_other_operand(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %half = onnx.Constant dense<0.5> : tensor<f32>
  %one = onnx.Constant dense<1.0> : tensor<f32>
  %sqrt2 = onnx.Constant dense<1.41421354> : tensor<f32>
  %0 = onnx.Div %x, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = onnx.Erf %0 : tensor<8xf32>
  %2 = onnx.Add %1, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %3 = onnx.Mul %y, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = onnx.Mul %3, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %4 : tensor<8xf32>
}

// -----

// Two GELUs share their constants, and x has other uses: both fuse.
// CHECK-LABEL: func.func @shared_constants
// CHECK-SAME: (%[[A:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-DAG: %[[GA:.+]] = onnx.Gelu %[[A]] : tensor<8xf32>
// CHECK-DAG: %[[GB:.+]] = onnx.Gelu %[[B]] : tensor<8xf32>
// CHECK: return %[[GA]], %[[GB]], %[[A]]
func.func @shared_constants(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %half = onnx.Constant dense<0.5> : tensor<f32>
  %one = onnx.Constant dense<1.0> : tensor<f32>
  %sqrt2 = onnx.Constant dense<1.41421354> : tensor<f32>
  %0 = onnx.Div %a, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = onnx.Erf %0 : tensor<8xf32>
  %2 = onnx.Add %1, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %3 = onnx.Mul %a, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = onnx.Mul %3, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %5 = onnx.Div %b, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %6 = onnx.Erf %5 : tensor<8xf32>
  %7 = onnx.Add %6, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %8 = onnx.Mul %b, %7 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %9 = onnx.Mul %8, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %4, %9, %a : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
