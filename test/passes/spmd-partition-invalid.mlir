// RUN: tpc-opt %s --split-input-file --tpc-spmd-partition -verify-diagnostics

// A sharding pass that claims a row-parallel result is replicated is
// refused: the MatMul's operands make it partial.
module attributes {tp.size = 2 : i64} {
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 16384 : i64, tp.sharding = [#tp.sharding<"replicated", 0>]} : tensor<64x64xf32>
  %xs = tp.Shard %x {axis = 2 : i64, sizes = array<i64: 32, 32>, parts = array<i64: 64>, tp.sharding = [#tp.sharding<"split", 2, sizes = [32, 32], parts = [64]>]} : tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %ws = tp.Shard %w {axis = 0 : i64, sizes = array<i64: 32, 32>, parts = array<i64: 64>, tp.sharding = [#tp.sharding<"split", 0, sizes = [32, 32], parts = [64]>]} : tensor<64x64xf32> -> tensor<64x64xf32>
  // expected-error @+1 {{sharding check: 'onnx.MatMul' is annotated replicated but its operands make it partial}}
  %y = onnx.MatMul %xs, %ws {tp.role = #tp.role<row>, tp.sharding = [#tp.sharding<"replicated", 0>]} : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}
}

// -----

// A value used without an annotation is refused.
module attributes {tp.size = 2 : i64} {
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  // expected-error @+1 {{sharding check: 'onnx.Relu' has no tp.sharding for each result}}
  %y = onnx.Relu %x : tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}
}

// -----

// A partial value returned without an all-reduce is refused.
module attributes {tp.size = 2 : i64} {
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 16384 : i64, tp.sharding = [#tp.sharding<"replicated", 0>]} : tensor<64x64xf32>
  %xs = tp.Shard %x {axis = 2 : i64, sizes = array<i64: 32, 32>, parts = array<i64: 64>, tp.sharding = [#tp.sharding<"split", 2, sizes = [32, 32], parts = [64]>]} : tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %ws = tp.Shard %w {axis = 0 : i64, sizes = array<i64: 32, 32>, parts = array<i64: 64>, tp.sharding = [#tp.sharding<"split", 0, sizes = [32, 32], parts = [64]>]} : tensor<64x64xf32> -> tensor<64x64xf32>
  %y = onnx.MatMul %xs, %ws {tp.role = #tp.role<row>, tp.sharding = [#tp.sharding<"partial", 0>]} : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  // expected-error @+1 {{sharding check: operand 0 of 'func.return' is partial but the op needs it replicated}}
  return %y : tensor<1x16x64xf32>
}
}
