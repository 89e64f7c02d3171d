// RUN: tpc-opt %s --tpc-tp-shard="tp=8" | FileCheck %s

// An MLP width of 172 at tp=8 is split unevenly (22 x 4, 21 x 4) instead of
// refused; heads are not involved.
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 2, sizes = [22, 22, 22, 22, 21, 21, 21, 21], parts = [172]>]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: tp.AllReduce
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 44032 : i64} : tensor<64x172xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 44032 : i64, length = 44032 : i64} : tensor<172x64xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x172xf32> -> tensor<1x16x172xf32>
  %a = onnx.Sigmoid %h : tensor<1x16x172xf32>
  %g = onnx.Mul %h, %a : tensor<1x16x172xf32>, tensor<1x16x172xf32> -> tensor<1x16x172xf32>
  %o = onnx.MatMul %g, %w2 : tensor<1x16x172xf32>, tensor<172x64xf32> -> tensor<1x16x64xf32>
  return %o : tensor<1x16x64xf32>
}
