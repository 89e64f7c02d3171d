// The example plugin's tpc-mlp-only-shard keeps attention replicated and
// splits only the MLPs, and tpc-spmd-partition accepts what it leaves.
// RUN: tpc-opt %s --split-input-file --load-pass-plugin=%plugin_dir/TPCMlpOnlyShardingPlugin.so --tpc-mlp-only-shard="tp=2" | FileCheck %s
// RUN: tpc-opt %s --split-input-file --load-pass-plugin %plugin_dir/TPCMlpOnlyShardingPlugin.so --tpc-mlp-only-shard="tp=2" --tpc-spmd-partition | FileCheck %s --check-prefix=PART
// Three ranks do not divide the four heads, which only matters to sharded
// attention: the MLP's 256 columns split 86/85/85.
// RUN: tpc-opt %s --split-input-file --load-pass-plugin=%plugin_dir/TPCMlpOnlyShardingPlugin.so --tpc-mlp-only-shard="tp=3" --tpc-spmd-partition | FileCheck %s --check-prefix=TP3

// GPT-2: a fused QKV Gemm, the output Gemm, then the MLP.
// CHECK-LABEL: module attributes {tp.size = 2 : i64}
// CHECK-NOT: tp.Shard %{{.*}} : tensor<64x192xf32>
// CHECK: %[[W1:.*]] = onnx.Weight "mlp.up"
// CHECK-NEXT: %[[W1S:.*]] = tp.Shard %[[W1]] {axis = 1 : i64, parts = array<i64: 256>, sizes = array<i64: 128, 128>
// CHECK: %[[W2:.*]] = onnx.Weight "mlp.down"
// CHECK-NEXT: %[[W2S:.*]] = tp.Shard %[[W2]] {axis = 0 : i64
// CHECK: onnx.Gemm {{.*}}tp.role = #tp.role<replicated>, tp.sharding = [#tp.sharding<"replicated", 0>]{{.*}}tensor<64x192xf32>
// CHECK: onnx.Split {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>, #tp.sharding<"replicated", 0>, #tp.sharding<"replicated", 0>]
// CHECK: onnx.Softmax {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
// CHECK: onnx.Gemm {{.*}}tp.role = #tp.role<replicated>, tp.sharding = [#tp.sharding<"replicated", 0>]{{.*}}tensor<64x64xf32>
// CHECK: onnx.MatMul %{{.*}}, %[[W1S]] {tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 2, sizes = [128, 128], parts = [256]>]}
// CHECK: %[[P:.*]] = onnx.MatMul %{{.*}}, %[[W2S]] {tp.role = #tp.role<row>, tp.sharding = [#tp.sharding<"partial", 0>]}
// CHECK-NEXT: %[[R:.*]] = tp.AllReduce %[[P]]
// CHECK-NEXT: onnx.Add %[[R]]
// CHECK-NOT: tp.AllReduce
// CHECK-NOT: tp.AllGather

// PART-LABEL: func.func @rank0
// PART: onnx.Weight "attn.qkv" {{.*}}: tensor<64x192xf32>
// PART: onnx.Weight "mlp.up" {{.*}}tp.ranges = array<i64: 0, 128>{{.*}}: tensor<64x128xf32>
// PART: tp.AllReduce
// PART-NOT: tp.AllReduce
// PART-LABEL: func.func @rank1
// PART: onnx.Weight "mlp.up" {{.*}}tp.ranges = array<i64: 128, 128>{{.*}}: tensor<64x128xf32>

// TP3-LABEL: func.func @rank2
// TP3: onnx.Weight "attn.qkv" {{.*}}: tensor<64x192xf32>
// TP3: onnx.Weight "mlp.up" {{.*}}tp.ranges = array<i64: 171, 85>{{.*}}: tensor<64x85xf32>
// TP3: tp.AllReduce
// TP3-NOT: tp.AllReduce
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %wqkv = onnx.Weight "attn.qkv" {file = "m.onnx", offset = 0 : i64, length = 49152 : i64} : tensor<64x192xf32>
  %wo = onnx.Weight "attn.out" {file = "m.onnx", offset = 49152 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %w1 = onnx.Weight "mlp.up" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "mlp.down" {file = "m.onnx", offset = 131072 : i64, length = 65536 : i64} : tensor<256x64xf32>
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
  %h = onnx.MatMul %r, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %a = onnx.Gelu %h : tensor<1x16x256xf32>
  %d = onnx.MatMul %a, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %y = onnx.Add %d, %r : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// Llama: separate q, k and v projections. v never reaches the Softmax, but
// it leads into the context MatMul (P·V), so it stays replicated too; the
// SwiGLU gate and up projections are both column-parallel.
// CHECK-LABEL: module attributes {tp.size = 2 : i64}
// CHECK: onnx.MatMul %{{.*}}, %{{.*}} {tp.role = #tp.role<replicated>{{.*}}-> tensor<1x16x64xf32>
// CHECK-NEXT: onnx.MatMul %{{.*}}, %{{.*}} {tp.role = #tp.role<replicated>{{.*}}-> tensor<1x16x64xf32>
// CHECK-NEXT: onnx.MatMul %{{.*}}, %{{.*}} {tp.role = #tp.role<replicated>{{.*}}-> tensor<1x16x64xf32>
// CHECK: onnx.MatMul %{{.*}}, %{{.*}} {tp.role = #tp.role<replicated>{{.*}}-> tensor<1x16x64xf32>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 2, sizes = [64, 64], parts = [128]>]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>, tp.sharding = [#tp.sharding<"split", 2, sizes = [64, 64], parts = [128]>]
// CHECK: %[[P:.*]] = onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK-NEXT: tp.AllReduce %[[P]]
// CHECK-NOT: tp.AllReduce
// CHECK-NOT: tp.AllGather

// PART-LABEL: func.func @rank0
// PART: onnx.Weight "v_proj" {{.*}}: tensor<64x64xf32>
// PART: onnx.Weight "gate_proj" {{.*}}: tensor<64x64xf32>
// PART: tp.AllReduce
// PART-NOT: tp.AllReduce
// PART-LABEL: func.func @rank1

// TP3-LABEL: func.func @rank0
// TP3: onnx.Weight "gate_proj" {{.*}}tp.ranges = array<i64: 0, 43>{{.*}}: tensor<64x43xf32>
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %wq = onnx.Weight "q_proj" {file = "m.onnx", offset = 0 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %wk = onnx.Weight "k_proj" {file = "m.onnx", offset = 16384 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %wv = onnx.Weight "v_proj" {file = "m.onnx", offset = 32768 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %wo = onnx.Weight "o_proj" {file = "m.onnx", offset = 49152 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %wg = onnx.Weight "gate_proj" {file = "m.onnx", offset = 65536 : i64, length = 32768 : i64} : tensor<64x128xf32>
  %wu = onnx.Weight "up_proj" {file = "m.onnx", offset = 98304 : i64, length = 32768 : i64} : tensor<64x128xf32>
  %wd = onnx.Weight "down_proj" {file = "m.onnx", offset = 131072 : i64, length = 32768 : i64} : tensor<128x64xf32>
  %q = onnx.MatMul %x, %wq : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  %k = onnx.MatMul %x, %wk : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  %v = onnx.MatMul %x, %wv : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
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
  %c3 = onnx.Reshape %ct : tensor<1x16x4x16xf32> -> tensor<1x16x64xf32>
  %o = onnx.MatMul %c3, %wo : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  %r = onnx.Add %o, %x : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %g = onnx.MatMul %r, %wg : tensor<1x16x64xf32>, tensor<64x128xf32> -> tensor<1x16x128xf32>
  %gs = onnx.Sigmoid %g : tensor<1x16x128xf32>
  %ga = onnx.Mul %g, %gs : tensor<1x16x128xf32>, tensor<1x16x128xf32> -> tensor<1x16x128xf32>
  %u = onnx.MatMul %r, %wu : tensor<1x16x64xf32>, tensor<64x128xf32> -> tensor<1x16x128xf32>
  %h = onnx.Mul %ga, %u : tensor<1x16x128xf32>, tensor<1x16x128xf32> -> tensor<1x16x128xf32>
  %d = onnx.MatMul %h, %wd : tensor<1x16x128xf32>, tensor<128x64xf32> -> tensor<1x16x64xf32>
  %y = onnx.Add %d, %r : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}
