// RUN: tpc-opt %s --split-input-file --tpc-tp-shard="tp=2" | FileCheck %s

// An MLP: the first MatMul is column-parallel, the second row-parallel, and
// the one all-reduce comes before the residual add.
// CHECK-LABEL: func.func @main
// CHECK: %[[W1:.*]] = onnx.Weight "w1"
// CHECK: %[[W1S:.*]] = tp.Shard %[[W1]] {axis = 1 : i64, parts = array<i64: 256>, sizes = array<i64: 128, 128>
// CHECK: %[[W2:.*]] = onnx.Weight "w2"
// CHECK: %[[W2S:.*]] = tp.Shard %[[W2]] {axis = 0 : i64
// CHECK: %[[H:.*]] = onnx.MatMul %{{.*}}, %[[W1S]] {tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 2, sizes = [128, 128], parts = [256]>]}
// CHECK: %[[A:.*]] = onnx.Relu %[[H]] {tp.sharding = [#tp.sharding<"split", 2, sizes = [128, 128], parts = [256]>]}
// CHECK: %[[P:.*]] = onnx.MatMul %[[A]], %[[W2S]] {tp.role = #tp.role<row>, tp.sharding = [#tp.sharding<"partial", 0>]}
// CHECK: %[[R:.*]] = tp.AllReduce %[[P]]
// CHECK: onnx.Add %[[R]], %{{.*}} {tp.sharding = [#tp.sharding<"replicated", 0>]}
// CHECK-NOT: tp.AllReduce
// CHECK-NOT: tp.AllGather
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %a = onnx.Relu %h : tensor<1x16x256xf32>
  %o = onnx.MatMul %a, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %r = onnx.Add %o, %x : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

// A bias after a column-parallel MatMul is split with it; a bias after a
// row-parallel one is added once, after the all-reduce.
// CHECK-LABEL: func.func @main
// CHECK: %[[B1S:.*]] = tp.Shard %{{.*}} {axis = 0 : i64, parts = array<i64: 256>, sizes = array<i64: 128, 128>{{.*}} : tensor<256xf32> -> tensor<256xf32>
// CHECK: onnx.Add %{{.*}}, %[[B1S]]
// CHECK: %[[P:.*]] = onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: %[[R:.*]] = tp.AllReduce %[[P]]
// CHECK: onnx.Add %[[R]], %{{.*}} : tensor<1x16x64xf32>, tensor<64xf32>
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %b1 = onnx.Weight "b1" {file = "m.onnx", offset = 65536 : i64, length = 1024 : i64} : tensor<256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 66560 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %b2 = onnx.Weight "b2" {file = "m.onnx", offset = 132096 : i64, length = 256 : i64} : tensor<64xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %hb = onnx.Add %h, %b1 : tensor<1x16x256xf32>, tensor<256xf32> -> tensor<1x16x256xf32>
  %a = onnx.Gelu %hb : tensor<1x16x256xf32>
  %o = onnx.MatMul %a, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %ob = onnx.Add %o, %b2 : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  return %ob : tensor<1x16x64xf32>
}

// -----

// A fused QKV projection whose output is split into q, k and v: each rank
// gets its heads of each part (parts = [64, 64, 64]), and the local Split
// cuts [32, 32, 32] per rank.
// CHECK-LABEL: func.func @main
// CHECK: tp.Shard %{{.*}} {axis = 1 : i64, parts = array<i64: 64, 64, 64>, sizes = array<i64: 96, 96>
// CHECK: onnx.Gemm {{.*}}tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 1, sizes = [96, 96], parts = [64, 64, 64]>]
// CHECK: onnx.Split {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [32, 32], parts = [64]>, #tp.sharding<"split", 2, sizes = [32, 32], parts = [64]>, #tp.sharding<"split", 2, sizes = [32, 32], parts = [64]>]
// CHECK: onnx.Reshape {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [2, 2], parts = [4]>]{{.*}}-> tensor<1x16x4x16xf32>
// CHECK: onnx.MatMul {{.*}}tp.sharding = [#tp.sharding<"split", 1, sizes = [2, 2], parts = [4]>]{{.*}}-> tensor<1x4x16x16xf32>
// CHECK: onnx.Softmax {{.*}}tp.sharding = [#tp.sharding<"split", 1
// CHECK: onnx.Gemm {{.*}}tp.role = #tp.role<row>
// CHECK: tp.AllReduce
// CHECK-NOT: tp.AllGather
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %wqkv = onnx.Weight "c_attn.weight" {file = "m.onnx", offset = 0 : i64, length = 49152 : i64} : tensor<64x192xf32>
  %wo = onnx.Weight "c_proj.weight" {file = "m.onnx", offset = 49152 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %x2 = onnx.Reshape %x : tensor<1x16x64xf32> -> tensor<16x64xf32>
  %qkv2 = onnx.Gemm %x2, %wqkv : tensor<16x64xf32>, tensor<64x192xf32> -> tensor<16x192xf32>
  %qkv = onnx.Reshape %qkv2 : tensor<16x192xf32> -> tensor<1x16x192xf32>
  %q, %k, %v = onnx.Split %qkv {axis = 2 : i64, split = array<i64: 64, 64, 64>} : tensor<1x16x192xf32> -> tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<1x16x64xf32>
  %q4 = onnx.Reshape %q : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %k4 = onnx.Reshape %k : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %v4 = onnx.Reshape %v : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %qt = onnx.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %kt = onnx.Transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %vt = onnx.Transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %s = onnx.MatMul %qt, %kt : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %p = onnx.Softmax %s : tensor<1x4x16x16xf32>
  %c = onnx.MatMul %p, %vt : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %ct = onnx.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x16x16xf32> -> tensor<1x16x4x16xf32>
  %c2 = onnx.Reshape %ct : tensor<1x16x4x16xf32> -> tensor<16x64xf32>
  %o = onnx.Gemm %c2, %wo : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  %o3 = onnx.Reshape %o : tensor<16x64xf32> -> tensor<1x16x64xf32>
  %r = onnx.Add %o3, %x : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}
