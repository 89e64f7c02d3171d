// RUN: tpc-opt %s --tpc-tp-shard="tp=2" | FileCheck %s

// A merged gate|up projection whose output is Split into gate and up
// (SwiGLU): each rank gets its block of gate and of up, so the local Split,
// the SiLU and the product stay local and one all-reduce follows the down
// projection.
// CHECK-LABEL: func.func @main
// CHECK: tp.Shard %{{.*}} {axis = 1 : i64, parts = array<i64: 172, 172>, sizes = array<i64: 172, 172>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 2, sizes = [172, 172], parts = [172, 172]>]
// CHECK: onnx.Split {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [86, 86], parts = [172]>, #tp.sharding<"split", 2, sizes = [86, 86], parts = [172]>]
// CHECK: onnx.Sigmoid {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [86, 86], parts = [172]>]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: tp.AllReduce
// CHECK-NOT: tp.AllGather
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %wgu = onnx.Weight "gate_up" {file = "m.onnx", offset = 0 : i64, length = 88064 : i64} : tensor<64x344xf32>
  %wd = onnx.Weight "down" {file = "m.onnx", offset = 88064 : i64, length = 44032 : i64} : tensor<172x64xf32>
  %gu = onnx.MatMul %x, %wgu : tensor<1x16x64xf32>, tensor<64x344xf32> -> tensor<1x16x344xf32>
  %g, %u = onnx.Split %gu {axis = -1 : i64, split = array<i64: 172, 172>} : tensor<1x16x344xf32> -> tensor<1x16x172xf32>, tensor<1x16x172xf32>
  %s = onnx.Sigmoid %g : tensor<1x16x172xf32>
  %silu = onnx.Mul %g, %s : tensor<1x16x172xf32>, tensor<1x16x172xf32> -> tensor<1x16x172xf32>
  %h = onnx.Mul %silu, %u : tensor<1x16x172xf32>, tensor<1x16x172xf32> -> tensor<1x16x172xf32>
  %o = onnx.MatMul %h, %wd : tensor<1x16x172xf32>, tensor<172x64xf32> -> tensor<1x16x64xf32>
  return %o : tensor<1x16x64xf32>
}
