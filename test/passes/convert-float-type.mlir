// RUN: tpc-opt %s --split-input-file --tpc-convert-float-type="dtype=bf16" | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: tpc-opt %s --split-input-file --tpc-convert-float-type="dtype=fp16" | FileCheck %s --check-prefixes=CHECK,F16
// RUN: tpc-opt %s --split-input-file --tpc-convert-float-type="dtype=fp32" | FileCheck %s --check-prefix=F32
// RUN: tpc-opt %s --split-input-file --tpc-convert-float-type="dtype=bf16" --tpc-lower-to-plan | FileCheck %s --check-prefix=PLAN
// RUN: not tpc-opt %s --split-input-file --tpc-convert-float-type="dtype=int8" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: tpc-convert-float-type: dtype must be fp32, fp16 or bf16, not 'int8'

// Weights change type and remember the stored one; activations follow; the
// f32 signature stays, with casts at the boundary; integer tensors (ids,
// shapes) are untouched.
// CHECK-LABEL: func.func @rank0
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8xf32> {onnx.name = "x"}, %[[IDS:.*]]: tensor<1x4xi64> {onnx.name = "ids"}) -> (tensor<1x4x8xf32>, tensor<1x4xi64>)
// BF16: %[[XC:.*]] = onnx.Cast %[[X]] {to = 16 : i64} : tensor<1x4x8xf32> -> tensor<1x4x8xbf16>
// F16: %[[XC:.*]] = onnx.Cast %[[X]] {to = 10 : i64} : tensor<1x4x8xf32> -> tensor<1x4x8xf16>
// BF16: %[[W:.*]] = onnx.Weight "w" {file = "m.onnx", length = 256 : i64, offset = 0 : i64, onnx.source_type = f32} : tensor<8x8xbf16>
// F16: %[[W:.*]] = onnx.Weight "w" {file = "m.onnx", length = 256 : i64, offset = 0 : i64, onnx.source_type = f32} : tensor<8x8xf16>
// CHECK: onnx.Weight "table" {file = "m.onnx", length = 128 : i64, offset = 256 : i64} : tensor<16xi64>
// BF16: %[[H:.*]] = onnx.MatMul %[[XC]], %[[W]] : tensor<1x4x8xbf16>, tensor<8x8xbf16> -> tensor<1x4x8xbf16>
// F16: %[[H:.*]] = onnx.MatMul %[[XC]], %[[W]] : tensor<1x4x8xf16>, tensor<8x8xf16> -> tensor<1x4x8xf16>
// BF16: %[[N:.*]] = onnx.LayerNormalization %[[H]], %{{.*}} : tensor<1x4x8xbf16>, tensor<8xbf16> -> tensor<1x4x8xbf16>
// CHECK: onnx.Gather %{{.*}}, %[[IDS]] : tensor<16xi64>, tensor<1x4xi64> -> tensor<1x4xi64>
// BF16: %[[Y:.*]] = onnx.Softmax
// BF16-SAME: tensor<1x4x8xbf16>
// BF16: %[[OUT:.*]] = onnx.Cast %[[Y]] {to = 1 : i64} : tensor<1x4x8xbf16> -> tensor<1x4x8xf32>
// F16: %[[OUT:.*]] = onnx.Cast %{{.*}} {to = 1 : i64} : tensor<1x4x8xf16> -> tensor<1x4x8xf32>
// CHECK: return %[[OUT]], %{{.*}} : tensor<1x4x8xf32>, tensor<1x4xi64>
// The stored type travels to the plan, for the engine writer.
// PLAN-LABEL: func.func @rank0
// PLAN: plan.weight "w" {file = "m.onnx", length = 256 : i64, offset = 0 : i64, source_shape = array<i64: 8, 8>, source_type = f32} : tensor<8x8xbf16>
// PLAN: plan.weight "table" {file = "m.onnx", length = 128 : i64, offset = 256 : i64, source_shape = array<i64: 16>} : tensor<16xi64>
// F32-LABEL: func.func @rank0
// F32-NOT: onnx.Cast
// F32-NOT: bf16
// F32-NOT: f16
// F32: return
func.func @rank0(%x: tensor<1x4x8xf32> {onnx.name = "x"}, %ids: tensor<1x4xi64> {onnx.name = "ids"}) -> (tensor<1x4x8xf32>, tensor<1x4xi64>) attributes {onnx.output_names = ["y", "t"]} {
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 256 : i64} : tensor<8x8xf32>
  %table = onnx.Weight "table" {file = "m.onnx", offset = 256 : i64, length = 128 : i64} : tensor<16xi64>
  %scale = onnx.Constant dense<1.0> : tensor<8xf32>
  %h = onnx.MatMul %x, %w : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
  %n = onnx.LayerNormalization %h, %scale {axis = -1 : i64, epsilon = 1.0e-5 : f32} : tensor<1x4x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %t = onnx.Gather %table, %ids {axis = 0 : i64} : tensor<16xi64>, tensor<1x4xi64> -> tensor<1x4xi64>
  %y = onnx.Softmax %n {axis = -1 : i64} : tensor<1x4x8xf32>
  return %y, %t : tensor<1x4x8xf32>, tensor<1x4xi64>
}

// -----

// Constants convert with round to nearest even, and finite values beyond
// the target's range saturate: a -FLT_MAX mask stays finite (-65504 in
// fp16, the largest bf16 below -3.39e38), so 0 * mask is 0, not NaN.
// Infinities stay infinite. Casts to f32 now cast to the target; a cast of
// a mask to bool is untouched.
// CHECK-LABEL: func.func @constants
// BF16-DAG: onnx.Constant dense<-3.389530e+38> : tensor<bf16>
// F16-DAG: onnx.Constant dense<-6.550400e+04> : tensor<f16>
// BF16-DAG: onnx.Constant dense<[1.015630e+00, 1.000000e+00, 0xFF80]> : tensor<3xbf16>
// F16-DAG: onnx.Constant dense<[1.011720e+00, 1.001950e+00, 0xFC00]> : tensor<3xf16>
// BF16-DAG: onnx.Cast %{{.*}} {to = 16 : i64} : tensor<1x4xi64> -> tensor<1x4xbf16>
// F16-DAG: onnx.Cast %{{.*}} {to = 10 : i64} : tensor<1x4xi64> -> tensor<1x4xf16>
// CHECK-DAG: onnx.Cast %{{.*}} {to = 9 : i64} : tensor<1x4xi64> -> tensor<1x4xi1>
// BF16-DAG: onnx.ConstantOfShape {value = dense<-3.389530e+38> : tensor<1xbf16>} : tensor<4xbf16>
// F16-DAG: onnx.ConstantOfShape {value = dense<-6.550400e+04> : tensor<1xf16>} : tensor<4xf16>
func.func @constants(%m: tensor<1x4xi64> {onnx.name = "m"}) -> (tensor<1x4xf32>, tensor<3xf32>, tensor<1x4xi1>, tensor<4xf32>) attributes {onnx.output_names = ["a", "b", "c", "d"]} {
  %min = onnx.Constant dense<-3.40282347E+38> : tensor<f32>
  // 1 + 3 * 2^-8 is a tie in bf16 (up to the even 1 + 2^-6) and exact in
  // fp16; 1 + 3 * 2^-11 is a tie in fp16 (up to 1 + 2^-9) and rounds down
  // to 1 in bf16.
  %r = onnx.Constant dense<[1.01171875, 1.00146484375, 0xFF800000]> : tensor<3xf32>
  %mf = onnx.Cast %m {to = 1 : i64} : tensor<1x4xi64> -> tensor<1x4xf32>
  %mb = onnx.Cast %m {to = 9 : i64} : tensor<1x4xi64> -> tensor<1x4xi1>
  %masked = onnx.Mul %mf, %min : tensor<1x4xf32>, tensor<f32> -> tensor<1x4xf32>
  %fill = onnx.ConstantOfShape {value = dense<-3.40282347E+38> : tensor<1xf32>} : tensor<4xf32>
  return %masked, %r, %mb, %fill : tensor<1x4xf32>, tensor<3xf32>, tensor<1x4xi1>, tensor<4xf32>
}
