// A plugin's op states its own sharding rule (ShardingRuleOpInterface), and
// tpc's sharding follows it; an op without a rule that a split reaches is
// an error naming it, not a silent all-gather.
// RUN: not tpc-opt %s --split-input-file --load-dialect-plugin=%plugin_dir/TPCTestRulesPlugin.so --tpc-tp-shard="tp=2" 2>/dev/null | FileCheck %s
// RUN: not tpc-opt %s --split-input-file --load-dialect-plugin=%plugin_dir/TPCTestRulesPlugin.so --tpc-tp-shard="tp=2" 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR

// Column MatMul, the plugin's linear op on the split, row MatMul, then the
// op on the partial sum: the split passes through, the partial sum stays
// partial, and one all-reduce is placed, after the second scale.
// CHECK-LABEL: func.func @main
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: tpctest.scale {{.*}}tp.sharding = [#tp.sharding<"split", 2, sizes = [128, 128], parts = [256]>]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
// CHECK: %[[S:.*]] = tpctest.scale {{.*}}tp.sharding = [#tp.sharding<"partial", 0>]
// CHECK-NEXT: tp.AllReduce %[[S]]
// CHECK-NOT: tp.AllReduce
// CHECK-NOT: tp.AllGather
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32> loc("fc1")
  %s = tpctest.scale %h {factor = 0.5 : f32} : tensor<1x16x256xf32>
  %o = onnx.MatMul %s, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32> loc("fc2")
  %t = tpctest.scale %o {factor = 2.0 : f32} : tensor<1x16x64xf32>
  %r = onnx.Add %t, %x : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

// -----

// The same block with an op that has no rule between the MatMuls.
// ERR: error: loc("act"): 'tpctest.opaque' (node 'act') has no sharding rule, and its operand 0 is split(axis 2, sizes 128 128); its dialect must attach a ShardingRuleOpInterface model (see docs/custom-sharding.md)
// ERR-NOT: error
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %h = onnx.MatMul %x, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32> loc("fc1")
  %s = tpctest.opaque %h : tensor<1x16x256xf32> loc("act")
  %o = onnx.MatMul %s, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32> loc("fc2")
  return %o : tensor<1x16x64xf32>
}

// -----

// Where nothing distributed reaches it, an op without a rule runs
// replicated: here the input of the block.
// CHECK-LABEL: func.func @main
// CHECK: tpctest.opaque {{.*}}tp.sharding = [#tp.sharding<"replicated", 0>]
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<column>
// CHECK: onnx.MatMul {{.*}}tp.role = #tp.role<row>
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w1 = onnx.Weight "w1" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64} : tensor<64x256xf32>
  %w2 = onnx.Weight "w2" {file = "m.onnx", offset = 65536 : i64, length = 65536 : i64} : tensor<256x64xf32>
  %p = tpctest.opaque %x : tensor<1x16x64xf32>
  %h = onnx.MatMul %p, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32> loc("fc1")
  %g = onnx.Gelu %h : tensor<1x16x256xf32>
  %o = onnx.MatMul %g, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32> loc("fc2")
  return %o : tensor<1x16x64xf32>
}
