// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2" | FileCheck %s --check-prefix=AUTO
// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2 lm-head=column" | FileCheck %s --check-prefix=COLUMN
// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2 lm-head=replicated" | FileCheck %s --check-prefix=REPL
// RUN: not tpc-opt %s --split-input-file --tpc-tp-shard="tp=2 lm-head=rows" 2>&1 | FileCheck %s --check-prefix=BAD

// The output-projection policy (lm-head): auto, the default, splits an
// output projection by columns and all-gathers its output when every rank
// gets at least 64 columns (the LM head here: 256 per rank), and keeps a
// narrower one replicated (the two-label classifier below); column always
// splits, replicated never. The embedding is replicated (and tied here: the
// head reads the embedding table through a transpose).
// AUTO-LABEL: func.func @main
// AUTO: onnx.Gather {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
// AUTO: %[[WT:.*]] = onnx.Transpose
// AUTO: %[[WS:.*]] = tp.Shard %[[WT]] {axis = 1 : i64, parts = array<i64: 512>, sizes = array<i64: 256, 256>
// AUTO: %[[L:.*]] = onnx.MatMul %{{.*}}, %[[WS]] {tp.role = #tp.role<column>
// AUTO: %[[G:.*]] = tp.AllGather %[[L]] {axis = 2 : i64, parts = array<i64: 512>, sizes = array<i64: 256, 256>
// AUTO: return %[[G]]
// COLUMN-LABEL: func.func @main
// COLUMN: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// COLUMN: tp.AllGather
// REPL-LABEL: func.func @main
// REPL: onnx.Gather {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
// REPL: onnx.MatMul {{.*}}tp.reason = "output projection"{{.*}}tp.role = #tp.role<replicated>
// REPL-NOT: tp.AllGather
// BAD: error: lm-head: 'rows' is not a policy; use auto, column or replicated
func.func @main(%ids: tensor<1x16xi64> {onnx.name = "input_ids"}) -> tensor<1x16x512xf32> attributes {onnx.output_names = ["logits"]} {
  %wte = onnx.Weight "wte" {file = "m.onnx", offset = 0 : i64, length = 131072 : i64} : tensor<512x64xf32>
  %e = onnx.Gather %wte, %ids {axis = 0 : i64} : tensor<512x64xf32>, tensor<1x16xi64> -> tensor<1x16x64xf32>
  %h = onnx.Tanh %e : tensor<1x16x64xf32>
  %wt = onnx.Transpose %wte {perm = array<i64: 1, 0>} : tensor<512x64xf32> -> tensor<64x512xf32>
  %l = onnx.MatMul %h, %wt : tensor<1x16x64xf32>, tensor<64x512xf32> -> tensor<1x16x512xf32>
  return %l : tensor<1x16x512xf32>
}

// -----

// A sharded trunk, then a two-label classifier: one column per rank, under
// the 64 of auto, so it stays replicated and says why; column splits it.
// AUTO-LABEL: func.func @main
// AUTO: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// AUTO: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// AUTO: tp.AllReduce
// AUTO: onnx.MatMul {{.*}}tp.reason = "narrow output projection"{{.*}}tp.role = #tp.role<replicated>
// AUTO-NOT: tp.AllGather
// AUTO: return
// COLUMN-LABEL: func.func @main
// COLUMN: tp.AllReduce
// COLUMN: %[[C:.*]] = onnx.MatMul {{.*}}tp.role = #tp.role<column>
// COLUMN: tp.AllGather %[[C]] {axis = 2 : i64, parts = array<i64: 2>, sizes = array<i64: 1, 1>
// REPL-LABEL: func.func @main
// REPL: onnx.MatMul {{.*}}tp.reason = "output projection"{{.*}}tp.role = #tp.role<replicated>
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x2xf32> attributes {onnx.output_names = ["scores"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %wc = onnx.Weight "wc" {file = "m.onnx", offset = 131072 : i64, length = 512 : i64} : tensor<64x2xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32> loc("fc1")
  %a = onnx.Gelu %h : tensor<1x16x256xf32>
  %o = onnx.MatMul %a, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32> loc("fc2")
  %r = onnx.Add %x, %o : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %c = onnx.MatMul %r, %wc : tensor<1x16x64xf32>, tensor<64x2xf32> -> tensor<1x16x2xf32> loc("classifier")
  return %c : tensor<1x16x2xf32>
}
