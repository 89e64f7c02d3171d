// The tp.* attributes that passes leave on other dialects' ops are checked
// by the tp dialect wherever they appear.
// RUN: tpc-opt %s --split-input-file --verify-diagnostics

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{attribute 'tp.sharding' must be an array of #tp.sharding, one per result}}
  %y = onnx.Relu %x {tp.sharding = ["split"]} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{has 1 results but 2 entries in tp.sharding}}
  %y = onnx.Relu %x {tp.sharding = [#tp.sharding<"replicated", 0>, #tp.sharding<"replicated", 0>]} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{has a split on axis 2 of a result of type 'tensor<4x8xf32>'}}
  %y = onnx.Relu %x {tp.sharding = [#tp.sharding<"split", 2, sizes = [4, 4], parts = [8]>]} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#tp.sharding kind must be replicated, split or partial, not 'sharded'}}
  %y = onnx.Relu %x {tp.sharding = [#tp.sharding<"sharded", 1>]} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{a split #tp.sharding needs sizes (one per rank) and parts}}
  %y = onnx.Relu %x {tp.sharding = [#tp.sharding<"split", 1>]} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#tp.sharding whole must list part indices in ascending order}}
  %y = onnx.Relu %x {tp.sharding = [#tp.sharding<"split", 1, sizes = [4, 4], parts = [4, 2, 2], whole = [2, 1]>]} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{a partial #tp.sharding has no sizes, parts or whole}}
  %y = onnx.Relu %x {tp.sharding = [#tp.sharding<"partial", 0, sizes = [4, 4]>]} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 256 : i64} : tensor<8x8xf32>
  // expected-error @+1 {{attribute 'tp.role' must be a #tp.role, not "column"}}
  %y = onnx.MatMul %x, %w {tp.role = "column"} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 256 : i64} : tensor<8x8xf32>
  // expected-error @+2 {{expected ::tpc::tp::Role to be one of: column, row, replicated}}
  // expected-error @+1 {{failed to parse TP_RoleAttr parameter 'value'}}
  %y = onnx.MatMul %x, %w {tp.role = #tp.role<colwise>} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 256 : i64} : tensor<8x8xf32>
  // expected-error @+1 {{has a tp.reason but is not tp.role = #tp.role<replicated>}}
  %y = onnx.MatMul %x, %w {tp.role = #tp.role<column>, tp.reason = "sharding plan"} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{attribute 'tp.size' must be >= 1, not 0}}
module attributes {tp.size = 0 : i64} {
}

// -----

module attributes {tp.size = 2 : i64} {
  // expected-error @+1 {{is rank 2 of a module of tp.size 2}}
  func.func @rank2() attributes {tp.rank = 2 : i64} {
    return
  }
}

// -----

func.func @main() -> tensor<4x8xf32> {
  // expected-error @+1 {{attribute 'tp.ranges' must be an array<i64> of [start, size] pairs}}
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 128 : i64, tp.ranges = array<i64: 0>} : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{has an unknown tp dialect attribute 'tp.kernel'}}
  %y = onnx.Relu %x {tp.kernel = "Relu"} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
