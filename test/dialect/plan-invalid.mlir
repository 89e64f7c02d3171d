// The plan dialect's verifiers: a kernel has a name and one offset per
// result; a weight's slice lies inside its source and gives its type.
// RUN: tpc-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{needs a kernel name}}
  %y = plan.kernel ""(%x) {attrs = {}, node = "n"} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 2 offsets for 1 results}}
  %y = plan.kernel "Relu"(%x) {attrs = {}, node = "n", offsets = array<i64: 0, 16>} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @f() -> tensor<64x128xf32> {
  // expected-error @+1 {{range [200, 328) leaves the source axis of size 256}}
  %w = plan.weight "w" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64, source_shape = array<i64: 64, 256>, axis = 1 : i64, ranges = array<i64: 200, 128>} : tensor<64x128xf32>
  return %w : tensor<64x128xf32>
}

// -----

func.func @f() -> tensor<64x96xf32> {
  // expected-error @+1 {{result dimension 1 is 96, the slice gives 128}}
  %w = plan.weight "w" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64, source_shape = array<i64: 64, 256>, axis = 1 : i64, ranges = array<i64: 0, 64, 128, 64>} : tensor<64x96xf32>
  return %w : tensor<64x96xf32>
}

// -----

func.func @f() -> tensor<64x128xf32> {
  // expected-error @+1 {{ranges need an axis}}
  %w = plan.weight "w" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64, source_shape = array<i64: 64, 256>, ranges = array<i64: 0, 128>} : tensor<64x128xf32>
  return %w : tensor<64x128xf32>
}

// -----

func.func @f() -> tensor<64x128xf32> {
  // expected-error @+1 {{unsliced weight must have its source shape}}
  %w = plan.weight "w" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64, source_shape = array<i64: 64, 256>} : tensor<64x128xf32>
  return %w : tensor<64x128xf32>
}

// -----

func.func @f() -> tensor<64x256xi8> {
  // expected-error @+1 {{only f32 weights convert, to f16 or bf16}}
  %w = plan.weight "w" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64, source_shape = array<i64: 64, 256>, source_type = f32} : tensor<64x256xi8>
  return %w : tensor<64x256xi8>
}
