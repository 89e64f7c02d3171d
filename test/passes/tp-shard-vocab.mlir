// RUN: tpc-opt %s --tpc-tp-shard="tp=2 vocab-parallel-embedding=1" | FileCheck %s
// RUN: tpc-opt %s --tpc-tp-shard="tp=2 vocab-parallel-embedding=1" --tpc-spmd-partition | FileCheck %s --check-prefix=PART
// RUN: tpc-opt %s --tpc-tp-shard="tp=2 lm-head=replicated" | FileCheck %s --check-prefix=DEFAULT

// Vocab-parallel embedding: the table is split by rows, the lookup gives a
// partial sum (each rank finds the ids it holds, zeros for the others) that
// one all-reduce completes; the tied LM head, which reads the same table,
// is column-parallel with an all-gather of the logits instead of needing
// the whole table on every rank. Without the flag, and with the LM head
// replicated by policy, both stay replicated.
// CHECK-LABEL: func.func @main
// CHECK: %[[W:.*]] = onnx.Weight "wte"
// CHECK: %[[WS:.*]] = tp.Shard %[[W]] {axis = 0 : i64, parts = array<i64: 512>, sizes = array<i64: 256, 256>
// CHECK: %[[E:.*]] = onnx.Gather %[[WS]], %arg0 {{.*}}tp.sharding = [#tp.sharding<"partial", 0>]
// CHECK: %[[R:.*]] = tp.AllReduce %[[E]]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: tp.AllGather
// DEFAULT-LABEL: func.func @main
// DEFAULT: onnx.Gather {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
// DEFAULT: onnx.MatMul {{.*}}tp.role = #tp.role<replicated>
// DEFAULT-NOT: tp.AllReduce
// PART-LABEL: func.func @rank1
// PART-DAG: onnx.Constant {{.*}}dense<256> : tensor<i64>
// PART-DAG: onnx.Constant {{.*}}dense<512> : tensor<i64>
// PART: %[[MINE:.*]] = onnx.And
// PART: %[[IDS:.*]] = onnx.Where %[[MINE]],
// PART: %[[G:.*]] = onnx.Gather %{{.*}}, %[[IDS]] {{.*}} : tensor<256x64xf32>, tensor<1x16xi64> -> tensor<1x16x64xf32>
// PART: %[[M:.*]] = onnx.Reshape %[[MINE]] {{.*}} -> tensor<1x16x1xi1>
// PART: %[[Z:.*]] = onnx.Where %[[M]], %[[G]], %{{.*}} {tp.sharding = [#tp.sharding<"partial", 0>]}
// PART: tp.AllReduce %[[Z]]
func.func @main(%ids: tensor<1x16xi64> {onnx.name = "input_ids"}) -> tensor<1x16x512xf32> attributes {onnx.output_names = ["logits"]} {
  %wte = onnx.Weight "wte" {file = "m.onnx", offset = 0 : i64, length = 131072 : i64} : tensor<512x64xf32>
  %e = onnx.Gather %wte, %ids {axis = 0 : i64} : tensor<512x64xf32>, tensor<1x16xi64> -> tensor<1x16x64xf32>
  %h = onnx.Tanh %e : tensor<1x16x64xf32>
  %wt = onnx.Transpose %wte {perm = array<i64: 1, 0>} : tensor<512x64xf32> -> tensor<64x512xf32>
  %l = onnx.MatMul %h, %wt : tensor<1x16x64xf32>, tensor<64x512xf32> -> tensor<1x16x512xf32>
  return %l : tensor<1x16x512xf32>
}
