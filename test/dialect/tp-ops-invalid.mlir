// The collectives' verifiers: AllGather and Shard name an axis of both
// types, per-rank sizes and whole parts that make up the whole tensor's
// axis, and agree with the other type everywhere else.
// RUN: tpc-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<1x16x32xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{axis 3 out of range for rank 3}}
  %y = tp.AllGather %x {axis = 3 : i64, sizes = array<i64: 32, 32>, parts = array<i64: 64>} : tensor<1x16x32xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

func.func @f(%x: tensor<1x16x32xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{the whole tensor's axis 2 is 64, not the 48 its parts give}}
  %y = tp.AllGather %x {axis = 2 : i64, sizes = array<i64: 32, 32>, parts = array<i64: 48>} : tensor<1x16x32xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

func.func @f(%x: tensor<1x8x32xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{dimension 1 differs between input and result}}
  %y = tp.AllGather %x {axis = 2 : i64, sizes = array<i64: 32, 32>, parts = array<i64: 64>} : tensor<1x8x32xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

func.func @f(%x: tensor<16x32xf32>) -> tensor<1x16x64xf32> {
  // expected-error @+1 {{input and result ranks differ}}
  %y = tp.AllGather %x {axis = 1 : i64, sizes = array<i64: 32, 32>, parts = array<i64: 64>} : tensor<16x32xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

func.func @f(%x: tensor<16x64xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{sizes must be >= 0 and parts > 0}}
  %y = tp.Shard %x {axis = 1 : i64, sizes = array<i64: 32, -32>, parts = array<i64: 64>} : tensor<16x64xf32> -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

func.func @f(%x: tensor<16x64xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{needs sizes (one per rank) and parts}}
  %y = tp.Shard %x {axis = 1 : i64, sizes = array<i64>, parts = array<i64: 64>} : tensor<16x64xf32> -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

func.func @f(%x: tensor<16x64xf32>) -> tensor<16x32xf16> {
  // expected-error @+1 {{input and result element types differ}}
  %y = tp.Shard %x {axis = 1 : i64, sizes = array<i64: 32, 32>, parts = array<i64: 64>} : tensor<16x64xf32> -> tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}

// -----

func.func @f(%x: tensor<16x64xf32>) -> tensor<16x32xf16> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = "tp.AllReduce"(%x) : (tensor<16x64xf32>) -> tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}
