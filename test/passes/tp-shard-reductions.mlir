// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2" | FileCheck %s

// MatMul -> MatMul -> MatMul -> MatMul with nothing between: column, row,
// then the partial sum is reduced before the next MatMul, which is column
// again (not a replicated MatMul carrying the partial sum).
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: %[[B:.*]] = onnx.MatMul %[[A]], {{.*}}tp.role = #tp.role<row>
// CHECK: %[[R:.*]] = tp.AllReduce %[[B]]
// CHECK: %[[C:.*]] = onnx.MatMul %[[R]], {{.*}}tp.role = #tp.role<column>
// CHECK: %[[D:.*]] = onnx.MatMul %[[C]], {{.*}}tp.role = #tp.role<row>
// CHECK: %[[R2:.*]] = tp.AllReduce %[[D]]
// CHECK: return %[[R2]]
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %w3 = onnx.Weight "w3" {file = "m.onnx", offset = 131072 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w4 = onnx.Weight "w4" {file = "m.onnx", offset = 196608 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32> loc("mm1")
  %o = onnx.MatMul %h, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32> loc("mm2")
  %h2 = onnx.MatMul %o, %w3 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32> loc("mm3")
  %o2 = onnx.MatMul %h2, %w4 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32> loc("mm4")
  return %o2 : tensor<1x16x64xf32>
}

// -----

// A norm on the branch before the residual add (Gemma 2/3): the RMS
// statistics and the scaling both read the one all-reduced value, so the
// branch costs one all-reduce, not two.
// CHECK-LABEL: func.func @main
// CHECK: %[[P:.*]] = onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: %[[R:.*]] = tp.AllReduce %[[P]]
// CHECK-NOT: tp.AllReduce
// CHECK: onnx.Mul %[[R]], %[[R]]
// CHECK: onnx.Div %[[R]],
// CHECK-NOT: tp.AllReduce
// CHECK: return
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %g = onnx.Weight "g" {file = "m.onnx", offset = 131072 : i64, length = 256 : i64} : tensor<64xf32>
  %eps = onnx.Constant dense<1.0e-06> : tensor<f32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %a = onnx.Gelu %h : tensor<1x16x256xf32>
  %p = onnx.MatMul %a, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %sq = onnx.Mul %p, %p : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %ms = onnx.ReduceMean %sq {axes = array<i64: -1>, keepdims = 1 : i64} : tensor<1x16x64xf32> -> tensor<1x16x1xf32>
  %e = onnx.Add %ms, %eps : tensor<1x16x1xf32>, tensor<f32> -> tensor<1x16x1xf32>
  %rt = onnx.Sqrt %e : tensor<1x16x1xf32>
  %n = onnx.Div %p, %rt : tensor<1x16x64xf32>, tensor<1x16x1xf32> -> tensor<1x16x64xf32>
  %y = onnx.Mul %n, %g : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %r = onnx.Add %x, %y : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

// A parallel residual block, x + attn(ln1(x)) + mlp(ln2(x)) with biases on
// both row-parallel MatMuls (GPT-NeoX): the two partial sums are added
// locally, the biases once (rank 0), and one all-reduce follows
// (spmd-partition-to-partial.mlir: rank 1 adds no bias at all).
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[BO:.*]] = tp.ToPartial %{{.*}} {tp.sharding = [#tp.sharding<"partial", 0>]} : tensor<64xf32>
// CHECK-DAG: %[[B2:.*]] = tp.ToPartial %{{.*}} {tp.sharding = [#tp.sharding<"partial", 0>]} : tensor<64xf32>
// CHECK: %[[O:.*]] = onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: %[[OB:.*]] = onnx.Add %[[O]], %[[BO]] {tp.sharding = [#tp.sharding<"partial", 0>]}
// CHECK: %[[M:.*]] = onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: %[[MB:.*]] = onnx.Add %[[M]], %[[B2]] {tp.sharding = [#tp.sharding<"partial", 0>]}
// CHECK: %[[S:.*]] = onnx.Add %[[MB]], %[[OB]] {tp.sharding = [#tp.sharding<"partial", 0>]}
// CHECK: %[[R:.*]] = tp.AllReduce %[[S]]
// CHECK-NOT: tp.AllReduce
// CHECK: onnx.Add %[[R]], %arg0
// CHECK-NOT: tp.AllReduce
// CHECK: return
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %g = onnx.Weight "g" {file = "m.onnx", offset = 0 : i64, length = 256 : i64} : tensor<64xf32>
  %wa = onnx.Weight "wa" {file = "m.onnx", offset = 256 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %wo = onnx.Weight "wo" {file = "m.onnx", offset = 65792 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %bo = onnx.Weight "bo" {file = "m.onnx", offset = 131328 : i64, length = 256 : i64} : tensor<64xf32>
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 131584 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 197120 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %b2 = onnx.Weight "b2" {file = "m.onnx", offset = 262656 : i64, length = 256 : i64} : tensor<64xf32>
  %ln1 = onnx.LayerNormalization %x, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %ln2 = onnx.LayerNormalization %x, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %a = onnx.MatMul %ln1, %wa : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %at = onnx.Tanh %a : tensor<1x16x256xf32>
  %o = onnx.MatMul %at, %wo : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %ob = onnx.Add %o, %bo : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %h = onnx.MatMul %ln2, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %hg = onnx.Gelu %h : tensor<1x16x256xf32>
  %m = onnx.MatMul %hg, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %mb = onnx.Add %m, %b2 : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %s = onnx.Add %mb, %ob : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %r = onnx.Add %s, %x : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %y = onnx.LayerNormalization %r, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// The same block written attn + (x + mlp) (the residual added to one branch
// first): the residual joins the partial sum once too, still one all-reduce.
// CHECK-LABEL: func.func @main
// CHECK: tp.ToPartial %arg0
// CHECK: %[[O:.*]] = onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: %[[M:.*]] = onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: %[[T:.*]] = onnx.Add %{{.*}}, %[[M]] {tp.sharding = [#tp.sharding<"partial", 0>]}
// CHECK: %[[S:.*]] = onnx.Add %[[O]], %[[T]] {tp.sharding = [#tp.sharding<"partial", 0>]}
// CHECK: tp.AllReduce %[[S]]
// CHECK-NOT: tp.AllReduce
// CHECK: return
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %g = onnx.Weight "g" {file = "m.onnx", offset = 0 : i64, length = 256 : i64} : tensor<64xf32>
  %wa = onnx.Weight "wa" {file = "m.onnx", offset = 256 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %wo = onnx.Weight "wo" {file = "m.onnx", offset = 65792 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 131584 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 197120 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %ln1 = onnx.LayerNormalization %x, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %a = onnx.MatMul %ln1, %wa : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %at = onnx.Tanh %a : tensor<1x16x256xf32>
  %o = onnx.MatMul %at, %wo : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %h = onnx.MatMul %ln1, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %hg = onnx.Gelu %h : tensor<1x16x256xf32>
  %m = onnx.MatMul %hg, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %t = onnx.Add %x, %m : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %s = onnx.Add %o, %t : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %y = onnx.LayerNormalization %s, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}
