// RUN: tpc-opt %s --tpc-lower-to-plan | FileCheck %s

// onnx ops become kernels named like the op with the op's attributes and
// the ONNX node name; weights keep their per-rank slices; collectives
// become collective kernels.
// CHECK-LABEL: func.func @rank0
// CHECK-NOT: plan.weight "w1" {file
// CHECK: %[[W:.*]] = plan.weight "w1" {axis = 1 : i64, file = "m.onnx", length = 65536 : i64, offset = 0 : i64, ranges = array<i64: 0, 128>, source_shape = array<i64: 64, 256>} : tensor<64x128xf32>
// CHECK: %[[C:.*]] = plan.constant "const.0" dense<1.000000e+00> : tensor<f32>
// CHECK: %[[H:.*]] = plan.kernel "MatMul"(%{{.*}}, %[[W]]) {attrs = {}, node = "fc1", tp.role = #tp.role<column>
// CHECK: plan.kernel "Softmax"(%{{.*}}) {attrs = {axis = 1 : i64}, node = "sm"
// CHECK: plan.kernel "AllReduce"
// CHECK-NOT: = onnx.
// The input is what --tpc-tp-shard="tp=2" --tpc-spmd-partition make of
// x -> MatMul(w1) -> Softmax -> Add 1 -> MatMul(w2): rank 0's program, its
// weights sliced, the row-parallel product's partial sum all-reduced.
module attributes {tp.size = 2 : i64} {
  func.func @rank0(%arg0: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"], tp.rank = 0 : i64} {
    %0 = onnx.Weight "w1" {file = "m.onnx", length = 65536 : i64, offset = 0 : i64, tp.axis = 1 : i64, tp.ranges = array<i64: 0, 128>, tp.sharding = [#tp.sharding<"replicated", 0>], tp.source_shape = array<i64: 64, 256>} : tensor<64x128xf32>
    %1 = onnx.Weight "w2" {file = "m.onnx", length = 65536 : i64, offset = 65536 : i64, tp.axis = 0 : i64, tp.ranges = array<i64: 0, 128>, tp.sharding = [#tp.sharding<"replicated", 0>], tp.source_shape = array<i64: 256, 64>} : tensor<128x64xf32>
    %2 = onnx.Constant {tp.sharding = [#tp.sharding<"replicated", 0>]} dense<1.000000e+00> : tensor<f32>
    %3 = onnx.MatMul %arg0, %0 {tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 2, sizes = [128, 128], parts = [256]>]} : tensor<1x16x64xf32>, tensor<64x128xf32> -> tensor<1x16x128xf32> loc("fc1")
    %4 = onnx.Softmax %3 {axis = 1 : i64, tp.sharding = [#tp.sharding<"split", 2, sizes = [128, 128], parts = [256]>]} : tensor<1x16x128xf32> loc("sm")
    %5 = onnx.Add %4, %2 {tp.sharding = [#tp.sharding<"split", 2, sizes = [128, 128], parts = [256]>]} : tensor<1x16x128xf32>, tensor<f32> -> tensor<1x16x128xf32>
    %6 = onnx.MatMul %5, %1 {tp.role = #tp.role<row>, tp.sharding = [#tp.sharding<"partial", 0>]} : tensor<1x16x128xf32>, tensor<128x64xf32> -> tensor<1x16x64xf32>
    %7 = tp.AllReduce %6 {tp.sharding = [#tp.sharding<"replicated", 0>]} : tensor<1x16x64xf32>
    return %7 : tensor<1x16x64xf32>
  }
}
