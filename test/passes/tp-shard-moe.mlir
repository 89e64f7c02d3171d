// RUN: tpc-opt %s --tpc-tp-shard="tp=2" | FileCheck %s
// RUN: tpc-opt %s --tpc-tp-shard="tp=2" --tpc-spmd-partition | FileCheck %s --check-prefix=PART

// A mixture-of-experts block as the importer leaves a dense NonZero
// routing: the router scores experts for a TopK, each expert is a
// SwiGLU-free MLP (w1 column-parallel, w2 row-parallel) applied to every
// token, its rows scaled by the routing weight, masked and scattered back
// into zeros, the experts' outputs added. The router stays replicated (the
// expert-router policy: every rank routes every token), the experts' partial
// sums pass through the scaling, the mask, the scatter and the adds, and one
// all-reduce sums them, after the last expert.
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.reason = "expert router", tp.role = #tp.role<replicated>
// CHECK: onnx.TopK
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: onnx.Where {{.*}}tp.sharding = [#tp.sharding<"partial", 0>]
// CHECK: onnx.ScatterElements {{.*}}tp.sharding = [#tp.sharding<"partial", 0>]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: onnx.ScatterElements {{.*}}tp.sharding = [#tp.sharding<"partial", 0>]
// CHECK: onnx.Add {{.*}}tp.sharding = [#tp.sharding<"partial", 0>]
// CHECK: tp.AllReduce
// CHECK-NOT: tp.AllReduce
// CHECK-NOT: tp.AllGather
// PART-LABEL: func.func @rank0
// PART: onnx.MatMul {{.*}} : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
// PART: onnx.MatMul {{.*}} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// PART: onnx.MatMul {{.*}} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
func.func @main(%x: tensor<4x8xf32> {onnx.name = "x"}) -> tensor<4x8xf32> attributes {onnx.output_names = ["y"]} {
  %wg = onnx.Weight "wg" {file = "m.onnx", offset = 0 : i64, length = 64 : i64} : tensor<8x2xf32>
  %w1a = onnx.Weight "w1a" {file = "m.onnx", offset = 64 : i64, length = 512 : i64} : tensor<8x16xf32>
  %w2a = onnx.Weight "w2a" {file = "m.onnx", offset = 576 : i64, length = 512 : i64} : tensor<16x8xf32>
  %w1b = onnx.Weight "w1b" {file = "m.onnx", offset = 1088 : i64, length = 512 : i64} : tensor<8x16xf32>
  %w2b = onnx.Weight "w2b" {file = "m.onnx", offset = 1600 : i64, length = 512 : i64} : tensor<16x8xf32>
  %zeros = onnx.Constant dense<0.000000e+00> : tensor<4x8xf32>
  %zero = onnx.Constant dense<0.000000e+00> : tensor<f32>
  %rows = onnx.Constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<4x8xi64>
  %e0 = onnx.Constant dense<0> : tensor<i64>
  %e1 = onnx.Constant dense<1> : tensor<i64>
  %logits = onnx.MatMul %x, %wg : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  %p = onnx.Softmax %logits {axis = 1 : i64} : tensor<4x2xf32>
  %v, %i = onnx.TopK %p {axis = -1 : i64, k = 1 : i64} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  %m0 = onnx.Equal %i, %e0 : tensor<4x1xi64>, tensor<i64> -> tensor<4x1xi1>
  %m1 = onnx.Equal %i, %e1 : tensor<4x1xi64>, tensor<i64> -> tensor<4x1xi1>
  %h0 = onnx.MatMul %x, %w1a : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a0 = onnx.Relu %h0 : tensor<4x16xf32>
  %o0 = onnx.MatMul %a0, %w2a : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %s0 = onnx.Mul %o0, %v : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %u0 = onnx.Where %m0, %s0, %zero : tensor<4x1xi1>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %c0 = onnx.ScatterElements %zeros, %rows, %u0 {reduction = "add"} : tensor<4x8xf32>, tensor<4x8xi64>, tensor<4x8xf32>
  %h1 = onnx.MatMul %x, %w1b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a1 = onnx.Relu %h1 : tensor<4x16xf32>
  %o1 = onnx.MatMul %a1, %w2b : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %s1 = onnx.Mul %o1, %v : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %u1 = onnx.Where %m1, %s1, %zero : tensor<4x1xi1>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %c1 = onnx.ScatterElements %zeros, %rows, %u1 {reduction = "add"} : tensor<4x8xf32>, tensor<4x8xi64>, tensor<4x8xf32>
  %sum = onnx.Add %c0, %c1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y = onnx.Add %x, %sum : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
