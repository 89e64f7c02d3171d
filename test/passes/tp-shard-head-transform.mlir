// RUN: not tpc-opt %s --split-input-file --tpc-tp-shard="tp=2" 2>/dev/null | FileCheck %s
// RUN: not tpc-opt %s --split-input-file --tpc-tp-shard="tp=2" 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR
// RUN: not tpc-opt %s --split-input-file --tpc-tp-shard="tp=2 lm-head=replicated" 2>/dev/null | FileCheck %s --check-prefix=REPL

// A masked-LM head (BERT, RoBERTa, DistilBERT): after the sharded trunk's
// all-reduce a dense, a GELU and a LayerNormalization over the hidden axis,
// then the vocabulary projection to the logits. The norm needs the dense's
// output whole, and only the output projection follows it: the dense is
// the head's transform, replicated by policy (as Megatron-LM keeps it), not
// an error, whether the vocabulary projection is split (its logits
// gathered; the default for 256 columns per rank) or replicated
// (lm-head=replicated). The trunk stays column then row with one
// all-reduce.
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: tp.AllReduce
// CHECK: onnx.MatMul {{.*}}tp.reason = "head transform"{{.*}}tp.role = #tp.role<replicated>
// CHECK-NOT: tp.AllReduce
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK-NOT: tp.AllReduce
// CHECK: tp.AllGather
// CHECK-NOT: tp.AllReduce
// CHECK: return
// REPL-LABEL: func.func @main
// REPL: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// REPL: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// REPL: tp.AllReduce
// REPL: onnx.MatMul {{.*}}tp.reason = "head transform"{{.*}}tp.role = #tp.role<replicated>
// REPL: onnx.MatMul {{.*}}tp.reason = "output projection"{{.*}}tp.role = #tp.role<replicated>
// REPL-NOT: tp.AllReduce
// REPL-NOT: tp.AllGather
// REPL: return
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x512xf32> attributes {onnx.output_names = ["logits"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %wd = onnx.Weight "wd" {file = "m.onnx", offset = 131072 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %g = onnx.Weight "g" {file = "m.onnx", offset = 147456 : i64, length = 256 : i64} : tensor<64xf32>
  %wv = onnx.Weight "wv" {file = "m.onnx", offset = 147712 : i64, length = 131072 : i64} : tensor<64x512xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32> loc("fc1")
  %a = onnx.Gelu %h : tensor<1x16x256xf32>
  %o = onnx.MatMul %a, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32> loc("fc2")
  %r = onnx.Add %x, %o : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %d = onnx.MatMul %r, %wd : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32> loc("head_dense")
  %dg = onnx.Gelu %d : tensor<1x16x64xf32>
  %n = onnx.LayerNormalization %dg, %g {axis = -1 : i64, epsilon = 1.0e-5 : f32} : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %l = onnx.MatMul %n, %wv : tensor<1x16x64xf32>, tensor<64x512xf32> -> tensor<1x16x512xf32> loc("decoder")
  return %l : tensor<1x16x512xf32>
}

// -----

// A blocked MatMul between sharded layers is in the trunk, not the head:
// still an error.
// ERR: error: {{.*}}cannot shard weight MatMul 'mid' (onnx.MatMul): its column split reaches 'sm' (onnx.Softmax)
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %wm = onnx.Weight "wm" {file = "m.onnx", offset = 131072 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32> loc("fc1")
  %o = onnx.MatMul %h, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32> loc("fc2")
  %m = onnx.MatMul %o, %wm : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32> loc("mid")
  %s = onnx.Softmax %m {axis = -1 : i64} : tensor<1x16x64xf32> loc("sm")
  %h2 = onnx.MatMul %s, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32> loc("fc3")
  %o2 = onnx.MatMul %h2, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32> loc("fc4")
  return %o2 : tensor<1x16x64xf32>
}
