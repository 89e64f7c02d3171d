// RUN: tpc-opt %s --split-input-file --tpc-fuse-matmul-nbits | FileCheck %s

// MatMulNBits as the importer writes it: 4-bit codes unpacked from their
// bytes, packed 4-bit zero points, K = 40 padded to two blocks of 32 (the
// Gather keeps the first 40 columns). The packed codes and zero points
// feed the fused op directly; the bias stays an Add.
// CHECK-LABEL: func.func @four_bit_packed_zero
// CHECK-SAME: (%[[A:.+]]: tensor<1x3x40xf32>, %[[P:.+]]: tensor<8x2x16xui8>, %[[S:.+]]: tensor<8x2xf32>, %[[Z:.+]]: tensor<8x1xui8>, %[[B:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.+]] = tpc.MatMulNBits %[[A]], %[[P]], %[[S]], %[[Z]] {bits = 4 : i64, block_size = 32 : i64, tp.role = #tp.role<column>} : tensor<1x3x40xf32>, tensor<8x2x16xui8>, tensor<8x2xf32>, tensor<8x1xui8> -> tensor<1x3x8xf32>
// CHECK-NEXT: %[[R:.+]] = onnx.Add %[[Y]], %[[B]]
// CHECK-NEXT: return %[[R]]
func.func @four_bit_packed_zero(%a: tensor<1x3x40xf32>, %p: tensor<8x2x16xui8>, %s: tensor<8x2xf32>, %z: tensor<8x1xui8>, %bias: tensor<8xf32>) -> tensor<1x3x8xf32> {
  %sixteen = onnx.Constant dense<16> : tensor<ui8>
  %idx32 = onnx.Constant dense<[0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15]> : tensor<32xi64>
  %sh32 = onnx.Constant dense<[1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16]> : tensor<32xui8>
  %idx2 = onnx.Constant dense<[0, 0]> : tensor<2xi64>
  %sh2 = onnx.Constant dense<[1, 16]> : tensor<2xui8>
  %keep = onnx.Constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39]> : tensor<40xi64>
  %g = onnx.Gather %p, %idx32 {axis = 2 : i64} : tensor<8x2x16xui8>, tensor<32xi64> -> tensor<8x2x32xui8>
  %d = onnx.Div %g, %sh32 : tensor<8x2x32xui8>, tensor<32xui8> -> tensor<8x2x32xui8>
  %d16 = onnx.Div %d, %sixteen : tensor<8x2x32xui8>, tensor<ui8> -> tensor<8x2x32xui8>
  %m16 = onnx.Mul %d16, %sixteen : tensor<8x2x32xui8>, tensor<ui8> -> tensor<8x2x32xui8>
  %codes = onnx.Sub %d, %m16 : tensor<8x2x32xui8>, tensor<8x2x32xui8> -> tensor<8x2x32xui8>
  %zg = onnx.Gather %z, %idx2 {axis = 1 : i64} : tensor<8x1xui8>, tensor<2xi64> -> tensor<8x2xui8>
  %zd = onnx.Div %zg, %sh2 : tensor<8x2xui8>, tensor<2xui8> -> tensor<8x2xui8>
  %zd16 = onnx.Div %zd, %sixteen : tensor<8x2xui8>, tensor<ui8> -> tensor<8x2xui8>
  %zm16 = onnx.Mul %zd16, %sixteen : tensor<8x2xui8>, tensor<ui8> -> tensor<8x2xui8>
  %zc = onnx.Sub %zd, %zm16 : tensor<8x2xui8>, tensor<8x2xui8> -> tensor<8x2xui8>
  %zf = onnx.Cast %zc {to = 1 : i64} : tensor<8x2xui8> -> tensor<8x2xf32>
  %zr = onnx.Reshape %zf : tensor<8x2xf32> -> tensor<8x2x1xf32>
  %sr = onnx.Reshape %s : tensor<8x2xf32> -> tensor<8x2x1xf32>
  %cf = onnx.Cast %codes {to = 1 : i64} : tensor<8x2x32xui8> -> tensor<8x2x32xf32>
  %x = onnx.Sub %cf, %zr : tensor<8x2x32xf32>, tensor<8x2x1xf32> -> tensor<8x2x32xf32>
  %w3 = onnx.Mul %x, %sr : tensor<8x2x32xf32>, tensor<8x2x1xf32> -> tensor<8x2x32xf32>
  %w2 = onnx.Reshape %w3 : tensor<8x2x32xf32> -> tensor<8x64xf32>
  %w = onnx.Gather %w2, %keep {axis = 1 : i64} : tensor<8x64xf32>, tensor<40xi64> -> tensor<8x40xf32>
  %wt = onnx.Transpose %w {perm = array<i64: 1, 0>} : tensor<8x40xf32> -> tensor<40x8xf32>
  %y = onnx.MatMul %a, %wt {tp.role = #tp.role<column>} : tensor<1x3x40xf32>, tensor<40x8xf32> -> tensor<1x3x8xf32>
  %r = onnx.Add %y, %bias : tensor<1x3x8xf32>, tensor<8xf32> -> tensor<1x3x8xf32>
  return %r : tensor<1x3x8xf32>
}

// -----

// 4-bit codes with the default zero point 8: no zero-point operand. The
// scale operand order of the Mul does not matter.
// CHECK-LABEL: func.func @four_bit_default_zero
// CHECK-SAME: (%[[A:.+]]: tensor<2x64xf32>, %[[P:.+]]: tensor<4x2x16xui8>, %[[S:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.+]] = tpc.MatMulNBits %[[A]], %[[P]], %[[S]] {bits = 4 : i64, block_size = 32 : i64} : tensor<2x64xf32>, tensor<4x2x16xui8>, tensor<8xf32> -> tensor<2x4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @four_bit_default_zero(%a: tensor<2x64xf32>, %p: tensor<4x2x16xui8>, %s: tensor<8xf32>) -> tensor<2x4xf32> {
  %sixteen = onnx.Constant dense<16> : tensor<ui8>
  %eight = onnx.Constant dense<8.0> : tensor<f32>
  %idx32 = onnx.Constant dense<[0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15]> : tensor<32xi64>
  %sh32 = onnx.Constant dense<[1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16, 1, 16]> : tensor<32xui8>
  %g = onnx.Gather %p, %idx32 {axis = 2 : i64} : tensor<4x2x16xui8>, tensor<32xi64> -> tensor<4x2x32xui8>
  %d = onnx.Div %g, %sh32 : tensor<4x2x32xui8>, tensor<32xui8> -> tensor<4x2x32xui8>
  %d16 = onnx.Div %d, %sixteen : tensor<4x2x32xui8>, tensor<ui8> -> tensor<4x2x32xui8>
  %m16 = onnx.Mul %sixteen, %d16 : tensor<ui8>, tensor<4x2x32xui8> -> tensor<4x2x32xui8>
  %codes = onnx.Sub %d, %m16 : tensor<4x2x32xui8>, tensor<4x2x32xui8> -> tensor<4x2x32xui8>
  %sr = onnx.Reshape %s : tensor<8xf32> -> tensor<4x2x1xf32>
  %cf = onnx.Cast %codes {to = 1 : i64} : tensor<4x2x32xui8> -> tensor<4x2x32xf32>
  %x = onnx.Sub %cf, %eight : tensor<4x2x32xf32>, tensor<f32> -> tensor<4x2x32xf32>
  %w3 = onnx.Mul %sr, %x : tensor<4x2x1xf32>, tensor<4x2x32xf32> -> tensor<4x2x32xf32>
  %w = onnx.Reshape %w3 : tensor<4x2x32xf32> -> tensor<4x64xf32>
  %wt = onnx.Transpose %w {perm = array<i64: 1, 0>} : tensor<4x64xf32> -> tensor<64x4xf32>
  %y = onnx.MatMul %a, %wt : tensor<2x64xf32>, tensor<64x4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// 8-bit codes, float zero points one per block (f16 scales and zero points
// cast to f32 on the way: the op takes them as they are stored).
// CHECK-LABEL: func.func @eight_bit_float_zero
// CHECK-SAME: (%[[A:.+]]: tensor<1x32xf32>, %[[C:.+]]: tensor<4x1x32xui8>, %[[S:.+]]: tensor<4x1xf16>, %[[Z:.+]]: tensor<4x1xf16>)
// CHECK-NEXT: %[[Y:.+]] = tpc.MatMulNBits %[[A]], %[[C]], %[[S]], %[[Z]] {bits = 8 : i64, block_size = 32 : i64} : tensor<1x32xf32>, tensor<4x1x32xui8>, tensor<4x1xf16>, tensor<4x1xf16> -> tensor<1x4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @eight_bit_float_zero(%a: tensor<1x32xf32>, %c: tensor<4x1x32xui8>, %s: tensor<4x1xf16>, %z: tensor<4x1xf16>) -> tensor<1x4xf32> {
  %zf = onnx.Cast %z {to = 1 : i64} : tensor<4x1xf16> -> tensor<4x1xf32>
  %zr = onnx.Reshape %zf : tensor<4x1xf32> -> tensor<4x1x1xf32>
  %sf = onnx.Cast %s {to = 1 : i64} : tensor<4x1xf16> -> tensor<4x1xf32>
  %sr = onnx.Reshape %sf : tensor<4x1xf32> -> tensor<4x1x1xf32>
  %cf = onnx.Cast %c {to = 1 : i64} : tensor<4x1x32xui8> -> tensor<4x1x32xf32>
  %x = onnx.Sub %cf, %zr : tensor<4x1x32xf32>, tensor<4x1x1xf32> -> tensor<4x1x32xf32>
  %w3 = onnx.Mul %x, %sr : tensor<4x1x32xf32>, tensor<4x1x1xf32> -> tensor<4x1x32xf32>
  %w = onnx.Reshape %w3 : tensor<4x1x32xf32> -> tensor<4x32xf32>
  %wt = onnx.Transpose %w {perm = array<i64: 1, 0>} : tensor<4x32xf32> -> tensor<32x4xf32>
  %y = onnx.MatMul %a, %wt : tensor<1x32xf32>, tensor<32x4xf32> -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// Codes already unpacked (one code per byte, as constant folding leaves a
// small weight's) are taken as 8-bit codes, so the default of 4-bit codes
// (8) is passed as the scalar zero point it is for them.
// CHECK-LABEL: func.func @unpacked_codes_keep_their_zero
// CHECK: %[[Z:.+]] = onnx.Constant dense<8.000000e+00> : tensor<1xf32>
// CHECK: tpc.MatMulNBits %{{.+}}, %{{.+}}, %{{.+}}, %[[Z]] {bits = 8 : i64, block_size = 16 : i64}
// CHECK-NOT: onnx.MatMul
func.func @unpacked_codes_keep_their_zero(%a: tensor<1x16xf32>, %c: tensor<2x1x16xui8>, %s: tensor<2x1x1xf32>) -> tensor<1x2xf32> {
  %eight = onnx.Constant dense<8.0> : tensor<f32>
  %cf = onnx.Cast %c {to = 1 : i64} : tensor<2x1x16xui8> -> tensor<2x1x16xf32>
  %x = onnx.Sub %cf, %eight : tensor<2x1x16xf32>, tensor<f32> -> tensor<2x1x16xf32>
  %w3 = onnx.Mul %x, %s : tensor<2x1x16xf32>, tensor<2x1x1xf32> -> tensor<2x1x16xf32>
  %w = onnx.Reshape %w3 : tensor<2x1x16xf32> -> tensor<2x16xf32>
  %wt = onnx.Transpose %w {perm = array<i64: 1, 0>} : tensor<2x16xf32> -> tensor<16x2xf32>
  %y = onnx.MatMul %a, %wt : tensor<1x16xf32>, tensor<16x2xf32> -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// Not a block-quantized weight: the scale varies along the block (one per
// element), a Gather that reorders columns, and a float weight. Unchanged.
// CHECK-LABEL: func.func @not_blocked
// CHECK-NOT: tpc.MatMulNBits
// CHECK-COUNT-3: onnx.MatMul
func.func @not_blocked(%a: tensor<1x32xf32>, %c: tensor<4x1x32xui8>, %s: tensor<4x1x32xf32>, %s1: tensor<4x1x1xf32>, %f: tensor<32x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) {
  %cf = onnx.Cast %c {to = 1 : i64} : tensor<4x1x32xui8> -> tensor<4x1x32xf32>
  %w3 = onnx.Mul %cf, %s : tensor<4x1x32xf32>, tensor<4x1x32xf32> -> tensor<4x1x32xf32>
  %w = onnx.Reshape %w3 : tensor<4x1x32xf32> -> tensor<4x32xf32>
  %wt = onnx.Transpose %w {perm = array<i64: 1, 0>} : tensor<4x32xf32> -> tensor<32x4xf32>
  %y = onnx.MatMul %a, %wt : tensor<1x32xf32>, tensor<32x4xf32> -> tensor<1x4xf32>
  %rev = onnx.Constant dense<[31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]> : tensor<32xi64>
  %v3 = onnx.Mul %cf, %s1 : tensor<4x1x32xf32>, tensor<4x1x1xf32> -> tensor<4x1x32xf32>
  %v = onnx.Reshape %v3 : tensor<4x1x32xf32> -> tensor<4x32xf32>
  %vg = onnx.Gather %v, %rev {axis = 1 : i64} : tensor<4x32xf32>, tensor<32xi64> -> tensor<4x32xf32>
  %vt = onnx.Transpose %vg {perm = array<i64: 1, 0>} : tensor<4x32xf32> -> tensor<32x4xf32>
  %y2 = onnx.MatMul %a, %vt : tensor<1x32xf32>, tensor<32x4xf32> -> tensor<1x4xf32>
  %y3 = onnx.MatMul %a, %f : tensor<1x32xf32>, tensor<32x4xf32> -> tensor<1x4xf32>
  return %y, %y2, %y3 : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
}
