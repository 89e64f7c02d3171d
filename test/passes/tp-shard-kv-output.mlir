// RUN: tpc-opt %s --tpc-tp-shard="tp=2" | FileCheck %s

// A KV cache output (optimum's present.N.key) is the k projection split by
// heads through reshapes: it is gathered at the output, and k stays
// column-parallel (only an output projection such as the LM head, whose
// split reaches the output unchanged, is replicated by policy).
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: onnx.Transpose
// CHECK: %[[KT:.*]] = onnx.Transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>
// CHECK: %[[G:.*]] = tp.AllGather %[[KT]] {axis = 1 : i64, parts = array<i64: 4>, sizes = array<i64: 2, 2>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: %[[R:.*]] = tp.AllReduce
// CHECK: return %[[R]], %[[G]]
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> (tensor<1x16x64xf32>, tensor<1x4x16x16xf32>) attributes {onnx.output_names = ["y", "present.0.key"]} {
  %wq = onnx.Weight "wq" {file = "m.onnx", offset = 0 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %wk = onnx.Weight "wk" {file = "m.onnx", offset = 16384 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %wo = onnx.Weight "wo" {file = "m.onnx", offset = 32768 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %q = onnx.MatMul %x, %wq : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  %k = onnx.MatMul %x, %wk : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  %q4 = onnx.Reshape %q : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %k4 = onnx.Reshape %k : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %qt = onnx.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %kt = onnx.Transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %ktt = onnx.Transpose %kt {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %s = onnx.MatMul %qt, %ktt : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %p = onnx.Softmax %s {axis = -1 : i64} : tensor<1x4x16x16xf32>
  %c = onnx.MatMul %p, %qt : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %ct = onnx.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x16x16xf32> -> tensor<1x16x4x16xf32>
  %c3 = onnx.Reshape %ct : tensor<1x16x4x16xf32> -> tensor<1x16x64xf32>
  %o = onnx.MatMul %c3, %wo : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  return %o, %kt : tensor<1x16x64xf32>, tensor<1x4x16x16xf32>
}
