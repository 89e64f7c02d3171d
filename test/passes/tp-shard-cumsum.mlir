// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2 allow-replicated=w1" | FileCheck %s
// RUN: not tpc-opt %s --split-input-file --tpc-tp-shard="tp=2" 2>&1 | FileCheck %s --check-prefix=ERR

// A running sum along an axis the split is not on keeps the split; over a
// partial value it stays partial (it is linear), so no collective is added.
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: onnx.CumSum {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [128, 128], parts = [256]>]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: %[[C:.*]] = onnx.CumSum {{.*}}tp.sharding = [#tp.sharding<"partial", 0>]
// CHECK: tp.AllReduce %[[C]]
// CHECK-NOT: tp.AllGather
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %c = onnx.CumSum %h {axis = 1 : i64} : tensor<1x16x256xf32>
  %o = onnx.MatMul %c, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %c2 = onnx.CumSum %o {axis = 1 : i64} : tensor<1x16x64xf32>
  %r = onnx.Tanh %c2 : tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

// Along the split axis the sum needs the whole value: the column MatMul
// that made the split is refused (fail closed) naming the CumSum, and with
// allow-replicated it stays replicated.
// ERR: error: cannot shard weight MatMul 'onnx.MatMul' (onnx.MatMul): its column split reaches 'onnx.CumSum' (onnx.CumSum), which has no sharding rule for that split and needs the value whole; it would stay replicated on every rank (pass --allow-replicated 'w1' to accept that)
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<replicated>
// CHECK: onnx.CumSum {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x256xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %c = onnx.CumSum %h {axis = -1 : i64} : tensor<1x16x256xf32>
  return %c : tensor<1x16x256xf32>
}
