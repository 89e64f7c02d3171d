// Every verifier of the onnx dialect's ops (imported, and the opset-23
// ops the fusion passes target) rejects what it exists to reject, with the message naming the problem.
// RUN: tpc-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<2x32xf32>, %w: tensor<16xf32>) -> tensor<2x32xf32> {
  // expected-error @+1 {{scale}}
  %y = onnx.RMSNormalization %x, %w {axis = 1 : i64, epsilon = 1.0e-06 : f32} : tensor<2x32xf32>, tensor<16xf32> -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

func.func @f(%x: tensor<2x32xf32>, %w: tensor<32xf32>) -> tensor<2x32xf32> {
  // expected-error @+1 {{axis 2 out of range}}
  %y = onnx.RMSNormalization %x, %w {axis = 2 : i64, epsilon = 1.0e-06 : f32} : tensor<2x32xf32>, tensor<32xf32> -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

func.func @f(%q: tensor<1x4x16x8xf32>, %k: tensor<1x3x16x8xf32>) -> tensor<1x4x16x8xf32> {
  // expected-error @+1 {{kv heads (}}
  %y = onnx.Attention %q, %k, %k : tensor<1x4x16x8xf32>, tensor<1x3x16x8xf32>, tensor<1x3x16x8xf32> -> tensor<1x4x16x8xf32>
  return %y : tensor<1x4x16x8xf32>
}

// -----

func.func @f(%q: tensor<1x4x16x8xf32>, %k: tensor<1x2x16x8xf32>, %m: tensor<1x1x16x16xi64>) -> tensor<1x4x16x8xf32> {
  // expected-error @+1 {{attn_mask must be bool or of Q's element type}}
  %y = onnx.Attention %q, %k, %k, %m : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x1x16x16xi64> -> tensor<1x4x16x8xf32>
  return %y : tensor<1x4x16x8xf32>
}

// -----

func.func @f() -> tensor<64x256xf32> {
  // expected-error @+1 {{length 100 differs from the}}
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 100 : i64} : tensor<64x256xf32>
  return %w : tensor<64x256xf32>
}

// -----

func.func @f() -> tensor<4xf32> {
  // expected-error @+1 {{negative offset}}
  %w = onnx.Weight "w" {file = "m.onnx", offset = -8 : i64, length = 16 : i64} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{approximate must be "none" or "tanh", not "erf"}}
  %y = onnx.Gelu %x {approximate = "erf"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{axis 2 out of range}}
  %y = onnx.Softmax %x {axis = 2 : i64} : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{axis -3 out of range}}
  %y = onnx.LogSoftmax %x {axis = -3 : i64} : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{exclusive must be 0 or 1, not 2}}
  %y = onnx.CumSum %x {axis = 1 : i64, exclusive = 2 : i64} : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @f(%d: tensor<4x8xf32>, %i: tensor<2x3xi64>, %u: tensor<2x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{indices}}
  %y = onnx.ScatterND %d, %i, %u : tensor<4x8xf32>, tensor<2x3xi64>, tensor<2x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @f(%d: tensor<4x8xf32>, %i: tensor<4x8xi64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{reduction must be none, add, mul, max or min, not "avg"}}
  %y = onnx.ScatterElements %d, %i, %d {reduction = "avg"} : tensor<4x8xf32>, tensor<4x8xi64>, tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x2xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{largest must be 0 or 1, not 3}}
  %v, %i = onnx.TopK %x {axis = -1 : i64, k = 1 : i64, largest = 3 : i64} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  return %v : tensor<4x1xf32>
}

// -----

func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{direction must be "LEFT" or "RIGHT", not "UP"}}
  %y = onnx.BitShift %x, %x {direction = "UP"} : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xi16> {
  // expected-error @+1 {{the bit widths of}}
  %y = onnx.BitCast %x {to = 5 : i64} : tensor<4xf32> -> tensor<4xi16>
  return %y : tensor<4xi16>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{result element type}}
  %y = onnx.Cast %x {to = 7 : i64} : tensor<4xf32> -> tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{saturate must be 0 or 1, not 5}}
  %y = onnx.Cast %x {to = 6 : i64, saturate = 5 : i64} : tensor<4xf32> -> tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @f(%x: tensor<2x4xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{element count changes from}}
  %y = onnx.Reshape %x : tensor<2x4xf32> -> tensor<3x3xf32>
  return %y : tensor<3x3xf32>
}

// -----

func.func @f(%x: tensor<2x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{cannot broadcast}}
  %y = onnx.Expand %x : tensor<2x4xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

func.func @f() -> tensor<3xi64> {
  // expected-error @+1 {{all of {value, output} have same type}}
  %c = "onnx.Constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<3xi64>
  return %c : tensor<3xi64>
}
