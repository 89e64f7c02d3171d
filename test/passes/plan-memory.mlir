// RUN: tpc-opt %s --tpc-plan-memory | FileCheck %s

// Buffers whose lifetimes do not overlap share bytes: %a dies when %c is
// made, so %c reuses its offset; the reshape is a view of %b; the output
// lives to the end. 16x16 f32 = 1024 bytes each.
// CHECK-LABEL: func.func @main
// CHECK-SAME: plan.offset = [[X:[0-9]+]]
// CHECK-SAME: plan.arena_bytes = 3072 : i64, plan.lower_bound_bytes = 3072 : i64, plan.unplanned_bytes = 5120 : i64
// CHECK: %[[A:.*]] = plan.kernel "Relu"{{.*}}offsets = array<i64: [[OA:[0-9]+]]>
// CHECK: %[[B:.*]] = plan.kernel "Exp"(%[[A]]){{.*}}offsets = array<i64: [[OB:[0-9]+]]>
// CHECK: plan.kernel "Reshape"(%[[B]]){{.*}}offsets = array<i64: [[OB]]>, plan.view
// CHECK: plan.kernel "Neg"{{.*}}offsets = array<i64: [[OA]]>
func.func @main(%x: tensor<16x16xf32> {onnx.name = "x"}) -> tensor<16x16xf32> attributes {onnx.output_names = ["y"]} {
  %a = plan.kernel "Relu"(%x) {attrs = {}, node = "a"} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %b = plan.kernel "Exp"(%a) {attrs = {}, node = "b"} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = plan.kernel "Reshape"(%b) {attrs = {}, node = "r"} : (tensor<16x16xf32>) -> tensor<256xf32>
  %c = plan.kernel "Neg"(%r) {attrs = {}, node = "c"} : (tensor<256xf32>) -> tensor<256xf32>
  %d = plan.kernel "Reshape"(%c) {attrs = {}, node = "d"} : (tensor<256xf32>) -> tensor<16x16xf32>
  %e = plan.kernel "Add"(%d, %x) {attrs = {}, node = "e"} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %e : tensor<16x16xf32>
}
