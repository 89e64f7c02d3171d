// RUN: tpc-opt %s --tpc-tp-shard="tp=3" -verify-diagnostics

// Three ranks cannot split four heads.
func.func @main(%x: tensor<1x16x64xf32> {onnx.name = "x"}) -> tensor<1x16x64xf32> attributes {onnx.output_names = ["y"]} {
  %wq = onnx.Weight "wq" {file = "m.onnx", offset = 0 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %q = onnx.MatMul %x, %wq : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  // expected-error @+1 {{tp=3 does not divide the 4 heads (dimension 2 of 'tensor<1x16x4x16xf32>') of node ''; tp values that work: 1, 2, 4}}
  %q4 = onnx.Reshape %q : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %qt = onnx.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %s = onnx.MatMul %qt, %qt : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %st = onnx.Transpose %s {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x16x16xf32> -> tensor<1x16x4x16xf32>
  %s3 = onnx.Reshape %st : tensor<1x16x4x16xf32> -> tensor<1x16x64xf32>
  return %s3 : tensor<1x16x64xf32>
}
