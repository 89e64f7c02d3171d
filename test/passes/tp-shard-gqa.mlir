// RUN: tpc-opt %s --tpc-tp-shard="tp=4" | FileCheck %s --check-prefix=TP4
// RUN: tpc-opt %s --tpc-tp-shard="tp=2" | FileCheck %s --check-prefix=TP2

// GQA: 4 q heads, 2 kv heads (head_dim 8). At tp=4 the kv heads are fewer
// than the ranks: the k/v projections stay replicated and each rank takes
// its block of the broadcast kv heads locally (tp.Shard, no communication).
// At tp=2 every projection is column-parallel.
// TP4-LABEL: func.func @main
// TP4: onnx.MatMul {{.*}}tp.role = #tp.role<column>{{.*}}-> tensor<1x16x32xf32>
// TP4: onnx.MatMul {{.*}}tp.role = #tp.role<replicated>{{.*}}-> tensor<1x16x16xf32>
// TP4: onnx.MatMul {{.*}}tp.role = #tp.role<replicated>{{.*}}-> tensor<1x16x16xf32>
// TP4: tp.Shard %{{.*}} {axis = 1 : i64, parts = array<i64: 4>, sizes = array<i64: 1, 1, 1, 1>
// TP4: onnx.MatMul {{.*}}tp.sharding = [#tp.sharding<"split", 1, sizes = [1, 1, 1, 1], parts = [4]>]{{.*}}-> tensor<1x4x16x16xf32>
// TP4: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// TP4: tp.AllReduce
// TP4-NOT: tp.AllReduce
// TP4-NOT: tp.AllGather
// TP2-LABEL: func.func @main
// TP2-COUNT-3: tp.role = #tp.role<column>
// TP2: tp.role = #tp.role<row>
// TP2-NOT: tp.Shard {{.*}}tensor<1x4x16x8xf32>
func.func @main(%x: tensor<1x16x32xf32> {onnx.name = "x"}) -> tensor<1x16x32xf32> attributes {onnx.output_names = ["y"]} {
  %wq = onnx.Weight "wq" {file = "m.onnx", offset = 0 : i64, length = 4096 : i64} : tensor<32x32xf32>
  %wk = onnx.Weight "wk" {file = "m.onnx", offset = 4096 : i64, length = 2048 : i64} : tensor<32x16xf32>
  %wv = onnx.Weight "wv" {file = "m.onnx", offset = 6144 : i64, length = 2048 : i64} : tensor<32x16xf32>
  %wo = onnx.Weight "wo" {file = "m.onnx", offset = 8192 : i64, length = 4096 : i64} : tensor<32x32xf32>
  %q = onnx.MatMul %x, %wq : tensor<1x16x32xf32>, tensor<32x32xf32> -> tensor<1x16x32xf32>
  %k = onnx.MatMul %x, %wk : tensor<1x16x32xf32>, tensor<32x16xf32> -> tensor<1x16x16xf32>
  %v = onnx.MatMul %x, %wv : tensor<1x16x32xf32>, tensor<32x16xf32> -> tensor<1x16x16xf32>
  %q4 = onnx.Reshape %q : tensor<1x16x32xf32> -> tensor<1x16x4x8xf32>
  %k4 = onnx.Reshape %k : tensor<1x16x16xf32> -> tensor<1x16x2x8xf32>
  %v4 = onnx.Reshape %v : tensor<1x16x16xf32> -> tensor<1x16x2x8xf32>
  %qt = onnx.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x8xf32> -> tensor<1x4x16x8xf32>
  %kt = onnx.Transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x2x8xf32> -> tensor<1x2x16x8xf32>
  %vt = onnx.Transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x2x8xf32> -> tensor<1x2x16x8xf32>
  %k5 = onnx.Reshape %kt : tensor<1x2x16x8xf32> -> tensor<1x2x1x16x8xf32>
  %v5 = onnx.Reshape %vt : tensor<1x2x16x8xf32> -> tensor<1x2x1x16x8xf32>
  %ke = onnx.Expand %k5 : tensor<1x2x1x16x8xf32> -> tensor<1x2x2x16x8xf32>
  %ve = onnx.Expand %v5 : tensor<1x2x1x16x8xf32> -> tensor<1x2x2x16x8xf32>
  %kr = onnx.Reshape %ke : tensor<1x2x2x16x8xf32> -> tensor<1x4x16x8xf32>
  %vr = onnx.Reshape %ve : tensor<1x2x2x16x8xf32> -> tensor<1x4x16x8xf32>
  %ktt = onnx.Transpose %kr {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x16x8xf32> -> tensor<1x4x8x16xf32>
  %s = onnx.MatMul %qt, %ktt : tensor<1x4x16x8xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x16x16xf32>
  %p = onnx.Softmax %s : tensor<1x4x16x16xf32>
  %c = onnx.MatMul %p, %vr : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32> -> tensor<1x4x16x8xf32>
  %ct = onnx.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x16x8xf32> -> tensor<1x16x4x8xf32>
  %c3 = onnx.Reshape %ct : tensor<1x16x4x8xf32> -> tensor<1x16x32xf32>
  %o = onnx.MatMul %c3, %wo : tensor<1x16x32xf32>, tensor<32x32xf32> -> tensor<1x16x32xf32>
  %r = onnx.Add %o, %x : tensor<1x16x32xf32>, tensor<1x16x32xf32> -> tensor<1x16x32xf32>
  return %r : tensor<1x16x32xf32>
}
