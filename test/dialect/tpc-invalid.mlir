// Every verifier of the tpc dialect's ops (fusion targets and KV cache)
// rejects what it exists to reject, with the message naming the problem.
// RUN: tpc-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{an RMS norm has no bias}}
  %y, %s = tpc.AddNormalization %x, %x, %g, %g {rms = 1 : i64} : tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>, tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @f(%x: tensor<2x8xf32>, %g: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{scale and bias must match the normalized dims}}
  %y, %s = tpc.AddNormalization %x, %x, %g : tensor<2x8xf32>, tensor<2x8xf32>, tensor<4xf32> -> tensor<2x8xf32>, tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{bias}}
  %y = tpc.MatMulBias %x, %w, %b : tensor<4x8xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{activation must be none, relu, gelu or gelu_tanh}}
  %y = tpc.MatMulBias %x, %w, %b {activation = "swish"} : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{is not A x B}}
  %y = tpc.MatMulBias %x, %w, %b : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @f(%s: tensor<1x2x8x4xf32>, %u: tensor<1x2x1x4xf32>, %p: tensor<2xi64>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{position must hold one value}}
  %y = tpc.CacheWrite %s, %u, %p {axis = 2 : i64} : tensor<1x2x8x4xf32>, tensor<1x2x1x4xf32>, tensor<2xi64> -> tensor<1x2x8x4xf32>
  return %y : tensor<1x2x8x4xf32>
}

// -----

func.func @f(%s: tensor<1x2x8x4xf32>, %u: tensor<1x3x1x4xf32>, %p: tensor<1xi64>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{cannot write}}
  %y = tpc.CacheWrite %s, %u, %p {axis = 2 : i64} : tensor<1x2x8x4xf32>, tensor<1x3x1x4xf32>, tensor<1xi64> -> tensor<1x2x8x4xf32>
  return %y : tensor<1x2x8x4xf32>
}
