// RUN: tpc-opt %s --tpc-plan-memory | FileCheck %s

// Elementwise kernels write over an input that dies with them: Exp over %a,
// Neg over the view of %b, Add over the view of %c. Relu cannot write over
// %x, which Add still reads. Reshapes are views. Everything fits in the
// input's buffer and one more (16x16 f32 = 1024 bytes each).
// CHECK-LABEL: func.func @main
// CHECK-SAME: plan.offset = [[X:[0-9]+]]
// CHECK-SAME: plan.arena_bytes = 2048 : i64, plan.lower_bound_bytes = 2048 : i64, plan.unplanned_bytes = 2048 : i64
// CHECK: %[[A:.*]] = plan.kernel "Relu"{{.*}}offsets = array<i64: [[OA:[0-9]+]]>
// CHECK-NOT: plan.in_place
// CHECK: %[[B:.*]] = plan.kernel "Exp"(%[[A]]){{.*}}offsets = array<i64: [[OA]]>, plan.in_place = 0
// CHECK: plan.kernel "Reshape"(%[[B]]){{.*}}offsets = array<i64: [[OA]]>, plan.view
// CHECK: plan.kernel "Neg"{{.*}}offsets = array<i64: [[OA]]>, plan.in_place = 0
// CHECK: plan.kernel "Add"{{.*}}offsets = array<i64: [[OA]]>, plan.in_place = 0
func.func @main(%x: tensor<16x16xf32> {onnx.name = "x"}) -> tensor<16x16xf32> attributes {onnx.output_names = ["y"]} {
  %a = plan.kernel "Relu"(%x) {attrs = {}, node = "a"} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %b = plan.kernel "Exp"(%a) {attrs = {}, node = "b"} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = plan.kernel "Reshape"(%b) {attrs = {}, node = "r"} : (tensor<16x16xf32>) -> tensor<256xf32>
  %c = plan.kernel "Neg"(%r) {attrs = {}, node = "c"} : (tensor<256xf32>) -> tensor<256xf32>
  %d = plan.kernel "Reshape"(%c) {attrs = {}, node = "d"} : (tensor<256xf32>) -> tensor<16x16xf32>
  %e = plan.kernel "Add"(%d, %x) {attrs = {}, node = "e"} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %e : tensor<16x16xf32>
}

// Never in place: a kernel that is not elementwise (Softmax reads a whole
// row), an input read again later (%s by Equal), an input that is returned
// (%n), an input of another type (Equal's bool result), and a variadic
// kernel (Sum accumulates into its output).
// CHECK-LABEL: func.func @not_in_place
// CHECK-NOT: plan.in_place
// CHECK: return
func.func @not_in_place(%x: tensor<8x8xf32> {onnx.name = "x"}) -> (tensor<8x8xf32>, tensor<8x8xi1>, tensor<8x8xf32>) attributes {onnx.output_names = ["n", "q", "t"]} {
  %s = plan.kernel "Softmax"(%x) {attrs = {axis = 1 : i64}, node = "s"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %n = plan.kernel "Neg"(%s) {attrs = {}, node = "n"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = plan.kernel "Mul"(%n, %s) {attrs = {}, node = "m"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %q = plan.kernel "Equal"(%m, %s) {attrs = {}, node = "q"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xi1>
  %t = plan.kernel "Sum"(%m, %m) {attrs = {}, node = "t"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %n, %q, %t : tensor<8x8xf32>, tensor<8x8xi1>, tensor<8x8xf32>
}
