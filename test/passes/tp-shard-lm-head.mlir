// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2" | FileCheck %s --check-prefix=DEFAULT
// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2 parallel-lm-head=1" | FileCheck %s --check-prefix=PARALLEL

// The LM head is replicated by default: its column split would only be
// gathered again. --parallel-lm-head makes it column-parallel with an
// all-gather of the logits. The embedding is replicated (and tied here:
// the head reads the embedding table through a transpose).
// DEFAULT-LABEL: func.func @main
// DEFAULT: onnx.Gather {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
// DEFAULT: onnx.MatMul {{.*}}tp.role = #tp.role<replicated>
// DEFAULT-NOT: tp.AllGather
// PARALLEL-LABEL: func.func @main
// PARALLEL: %[[WT:.*]] = onnx.Transpose
// PARALLEL: %[[WS:.*]] = tp.Shard %[[WT]] {axis = 1 : i64, parts = array<i64: 512>, sizes = array<i64: 256, 256>
// PARALLEL: %[[L:.*]] = onnx.MatMul %{{.*}}, %[[WS]] {tp.role = #tp.role<column>
// PARALLEL: %[[G:.*]] = tp.AllGather %[[L]] {axis = 2 : i64, parts = array<i64: 512>, sizes = array<i64: 256, 256>
// PARALLEL: return %[[G]]
func.func @main(%ids: tensor<1x16xi64> {onnx.name = "input_ids"}) -> tensor<1x16x512xf32> attributes {onnx.output_names = ["logits"]} {
  %wte = onnx.Weight "wte" {file = "m.onnx", offset = 0 : i64, length = 131072 : i64} : tensor<512x64xf32>
  %e = onnx.Gather %wte, %ids {axis = 0 : i64} : tensor<512x64xf32>, tensor<1x16xi64> -> tensor<1x16x64xf32>
  %h = onnx.Tanh %e : tensor<1x16x64xf32>
  %wt = onnx.Transpose %wte {perm = array<i64: 1, 0>} : tensor<512x64xf32> -> tensor<64x512xf32>
  %l = onnx.MatMul %h, %wt : tensor<1x16x64xf32>, tensor<64x512xf32> -> tensor<1x16x512xf32>
  return %l : tensor<1x16x512xf32>
}
