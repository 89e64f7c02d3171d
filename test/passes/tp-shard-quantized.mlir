// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2" | FileCheck %s
// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2" --tpc-spmd-partition | FileCheck %s --check-prefix=PART

// A quantized MLP as DequantizeLinear imports it: int8 weights with
// per-output-channel scales, (float(q) - float(zero)) * scale. Each weight
// MatMul is classified like a float one (column, then row, one all-reduce),
// and its split is pushed back onto the quantized tensor and its scale
// (split on the aligned axis) so that no rank dequantizes a whole weight.
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[Q1:.*]] = onnx.Weight "w1_q"
// CHECK-DAG: %[[S1:.*]] = onnx.Weight "w1_s"
// CHECK-DAG: %[[Q1S:.*]] = tp.Shard %[[Q1]] {axis = 1 : i64{{.*}}sizes = array<i64: 128, 128>
// CHECK-DAG: %[[S1S:.*]] = tp.Shard %[[S1]] {axis = 0 : i64{{.*}}sizes = array<i64: 128, 128>
// CHECK-DAG: %[[C1:.*]] = onnx.Cast %[[Q1S]] {{.*}}#tp.sharding<"split", 1
// CHECK-DAG: %[[R1:.*]] = onnx.Reshape %[[S1S]] {{.*}}#tp.sharding<"split", 1
// CHECK-DAG: %[[D1:.*]] = onnx.Mul %[[C1]], %[[R1]] {{.*}}#tp.sharding<"split", 1
// CHECK: onnx.MatMul %{{.*}}, %[[D1]] {{{.*}}tp.role = #tp.role<column>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: tp.AllReduce
// CHECK-NOT: tp.AllReduce
// CHECK-NOT: tp.AllGather
// CHECK: return
// Each rank reads half of each quantized weight and of its scale.
// PART-LABEL: func.func @rank0
// PART-DAG: onnx.Weight "w1_q" {{.*}}tp.axis = 1 : i64, tp.ranges = array<i64: 0, 128>{{.*}} : tensor<64x128xi8>
// PART-DAG: onnx.Weight "w1_s" {{.*}}tp.axis = 0 : i64, tp.ranges = array<i64: 0, 128>{{.*}} : tensor<128xf32>
// PART-DAG: onnx.Weight "w2_q" {{.*}}tp.axis = 0 : i64, tp.ranges = array<i64: 0, 128>{{.*}} : tensor<128x64xi8>
// PART-DAG: onnx.Weight "w2_s" {{.*}} : tensor<64xf32>
// PART-LABEL: func.func @rank1
// PART-DAG: onnx.Weight "w1_q" {{.*}}tp.ranges = array<i64: 128, 128>{{.*}} : tensor<64x128xi8>
func.func @main(%x: tensor<1x8x64xf32> {onnx.name = "x"}) -> tensor<1x8x64xf32> attributes {onnx.output_names = ["y"]} {
  %q1 = onnx.Weight "w1_q" {file = "m.onnx", offset = 0 : i64, length = 16384 : i64} : tensor<64x256xi8>
  %s1 = onnx.Weight "w1_s" {file = "m.onnx", offset = 16384 : i64, length = 1024 : i64} : tensor<256xf32>
  %q2 = onnx.Weight "w2_q" {file = "m.onnx", offset = 17408 : i64, length = 16384 : i64} : tensor<256x64xi8>
  %s2 = onnx.Weight "w2_s" {file = "m.onnx", offset = 33792 : i64, length = 256 : i64} : tensor<64xf32>
  %c1 = onnx.Cast %q1 {to = 1 : i64} : tensor<64x256xi8> -> tensor<64x256xf32>
  %r1 = onnx.Reshape %s1 : tensor<256xf32> -> tensor<1x256xf32>
  %d1 = onnx.Mul %c1, %r1 : tensor<64x256xf32>, tensor<1x256xf32> -> tensor<64x256xf32>
  %c2 = onnx.Cast %q2 {to = 1 : i64} : tensor<256x64xi8> -> tensor<256x64xf32>
  %r2 = onnx.Reshape %s2 : tensor<64xf32> -> tensor<1x64xf32>
  %d2 = onnx.Mul %c2, %r2 : tensor<256x64xf32>, tensor<1x64xf32> -> tensor<256x64xf32>
  %h = onnx.MatMul %x, %d1 : tensor<1x8x64xf32>, tensor<64x256xf32> -> tensor<1x8x256xf32> loc("fc1")
  %a = onnx.Relu %h : tensor<1x8x256xf32>
  %o = onnx.MatMul %a, %d2 : tensor<1x8x256xf32>, tensor<256x64xf32> -> tensor<1x8x64xf32> loc("fc2")
  %y = onnx.Add %o, %x : tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// -----

// Block quantization along the contraction axis (int4 weights, one scale
// per 32 rows of each column): the weight is seen as [blocks, 32, N] with
// the scales [blocks, 1, N] broadcast over each block. The row-parallel
// MatMul's split of K moves to the blocks: each rank dequantizes its whole
// blocks with their scales.
// CHECK-LABEL: func.func @main
// CHECK-DAG: tp.Shard %{{.*}} {axis = 0 : i64, parts = array<i64: 256>, sizes = array<i64: 128, 128>{{.*}} : tensor<256x64xi4>
// CHECK-DAG: tp.Shard %{{.*}} {axis = 0 : i64, parts = array<i64: 8>, sizes = array<i64: 4, 4>{{.*}} : tensor<8x64xf32>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// PART-LABEL: func.func @rank1
// PART-DAG: onnx.Weight "w2_s" {{.*}}tp.axis = 0 : i64, tp.ranges = array<i64: 4, 4>{{.*}} : tensor<4x64xf32>
func.func @main(%x: tensor<1x8x64xf32> {onnx.name = "x"}) -> tensor<1x8x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %q2 = onnx.Constant dense<3> : tensor<256x64xi4>
  %s2 = onnx.Weight "w2_s" {file = "m.onnx", offset = 65536 : i64, length = 2048 : i64} : tensor<8x64xf32>
  %qb = onnx.Reshape %q2 : tensor<256x64xi4> -> tensor<8x32x64xi4>
  %c2 = onnx.Cast %qb {to = 1 : i64} : tensor<8x32x64xi4> -> tensor<8x32x64xf32>
  %sb = onnx.Reshape %s2 : tensor<8x64xf32> -> tensor<8x1x64xf32>
  %db = onnx.Mul %c2, %sb : tensor<8x32x64xf32>, tensor<8x1x64xf32> -> tensor<8x32x64xf32>
  %d2 = onnx.Reshape %db : tensor<8x32x64xf32> -> tensor<256x64xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x8x64xf32>, tensor<64x256xf32> -> tensor<1x8x256xf32> loc("fc1")
  %a = onnx.Relu %h : tensor<1x8x256xf32>
  %o = onnx.MatMul %a, %d2 : tensor<1x8x256xf32>, tensor<256x64xf32> -> tensor<1x8x64xf32> loc("fc2")
  %y = onnx.Add %o, %x : tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}
