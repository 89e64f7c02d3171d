// RUN: not tpc-opt %s --tpc-tp-shard="tp=2" 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: tpc-opt %s --tpc-tp-shard="tp=2 allow-replicated=fc*" | FileCheck %s
// RUN: tpc-opt %s --tpc-tp-shard="tp=2 allow-replicated=w1" | FileCheck %s

// A column split that an op cannot take (a softmax over the split axis)
// leaves the MatMul replicated: that is an error naming the MatMul and the
// op, unless allow-replicated matches its node or weight name. The second
// MatMul's output goes to the graph output unchanged: an output projection,
// replicated by policy, no error.
// ERR: error: {{.*}}cannot shard weight MatMul 'fc1' (onnx.MatMul): its column split reaches 'sm' (onnx.Softmax), which has no sharding rule for that split and needs the value whole; it would stay replicated on every rank (pass --allow-replicated 'fc1' to accept that)
// ERR-NOT: fc2
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<replicated>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<replicated>
// CHECK-NOT: tp.AllGather
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32> loc("fc1")
  %a = onnx.Softmax %h {axis = -1 : i64} : tensor<1x16x256xf32> loc("sm")
  %o = onnx.MatMul %a, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32> loc("fc2")
  return %o : tensor<1x16x64xf32>
}
