// The custom assembly of the onnx, tpc, tp and plan dialects prints what it
// parses: the printed form parses back to the same text, and the generic
// form to the same ops.
// RUN: tpc-opt %s | tpc-opt | FileCheck %s
// RUN: tpc-opt %s --mlir-print-op-generic | tpc-opt | FileCheck %s

// CHECK-LABEL: func.func @onnx_ops
// CHECK: onnx.Weight "w" {file = "m.onnx", length = 16384 : i64, offset = 0 : i64} : tensor<64x64xf32>
// CHECK: onnx.Attention %{{.*}}, %{{.*}}, %{{.*}} {is_causal = 1 : i64, scale = 2.500000e-01 : f32} : tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x4x16x16xf32>
// CHECK: onnx.TopK %{{.*}} {axis = 0 : i64, k = 2 : i64, largest = 0 : i64} : tensor<4x8xf32> -> tensor<2x8xf32>, tensor<2x8xi64>
func.func @onnx_ops(%q: tensor<1x4x16x16xf32>, %k: tensor<1x2x16x16xf32>, %t: tensor<4x8xf32>) -> (tensor<64x64xf32>, tensor<1x4x16x16xf32>, tensor<2x8xf32>) {
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 16384 : i64} : tensor<64x64xf32>
  %a = onnx.Attention %q, %k, %k {scale = 2.500000e-01 : f32, is_causal = 1 : i64} : tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x4x16x16xf32>
  %v, %i = onnx.TopK %t {axis = 0 : i64, k = 2 : i64, largest = 0 : i64} : tensor<4x8xf32> -> tensor<2x8xf32>, tensor<2x8xi64>
  return %w, %a, %v : tensor<64x64xf32>, tensor<1x4x16x16xf32>, tensor<2x8xf32>
}

// CHECK-LABEL: func.func @tpc_ops
// CHECK: tpc.MatMulBias %{{.*}}, %{{.*}}, %{{.*}} {activation = "gelu"} : tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
// CHECK: tpc.AddNormalization %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>, tensor<1x16x64xf32>
// CHECK: tpc.AddNormalization %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999997E-7 : f32, rms = 1 : i64} : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>, tensor<1x16x64xf32>
// CHECK: tpc.SwiGLU %{{.*}}, %{{.*}} : tensor<1x16x64xf32>
// CHECK: tpc.KVState "past.0.key" : tensor<1x2x8x16xf32>
// CHECK: tpc.CacheWrite %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64} : tensor<1x2x8x16xf32>, tensor<1x2x1x16xf32>, tensor<1xi64> -> tensor<1x2x8x16xf32>
func.func @tpc_ops(%x: tensor<1x16x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>, %u: tensor<1x2x1x16xf32>, %p: tensor<1xi64>) -> (tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<1x2x8x16xf32>) {
  %h = tpc.MatMulBias %x, %w, %b {activation = "gelu"} : tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %y, %s = tpc.AddNormalization %h, %x, %b, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32, rms = 0 : i64} : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>, tensor<1x16x64xf32>
  %y2, %s2 = tpc.AddNormalization %h, %x, %b {epsilon = 1.0e-06 : f32, rms = 1 : i64} : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>, tensor<1x16x64xf32>
  %g = tpc.SwiGLU %y, %y2 : tensor<1x16x64xf32>
  %c = tpc.KVState "past.0.key" : tensor<1x2x8x16xf32>
  %c2 = tpc.CacheWrite %c, %u, %p {axis = 2 : i64} : tensor<1x2x8x16xf32>, tensor<1x2x1x16xf32>, tensor<1xi64> -> tensor<1x2x8x16xf32>
  return %g, %s, %c2 : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @tp_ops
// CHECK: onnx.Relu %{{.*}} {tp.sharding = [#tp.sharding<"split", 1, sizes = [64, 64], parts = [64, 16, 16], whole = [1, 2]>]} : tensor<16x96xf32>
// CHECK: tp.AllReduce %{{.*}} : tensor<16x96xf32>
// CHECK: tp.Shard %{{.*}} {axis = 1 : i64, parts = array<i64: 96>, sizes = array<i64: 48, 48>} : tensor<16x96xf32> -> tensor<16x48xf32>
// CHECK: tp.AllGather %{{.*}} {axis = 1 : i64, parts = array<i64: 32, 32, 32>, sizes = array<i64: 48, 48>} : tensor<16x48xf32> -> tensor<16x96xf32>
// CHECK: tp.ToPartial %{{.*}} : tensor<16x96xf32>
func.func @tp_ops(%x: tensor<16x96xf32>) -> (tensor<16x96xf32>, tensor<16x96xf32>) attributes {tp.rank = 0 : i64} {
  %r = onnx.Relu %x {tp.sharding = [#tp.sharding<"split", 1, sizes = [64, 64], parts = [64, 16, 16], whole = [1, 2]>]} : tensor<16x96xf32>
  %s = tp.AllReduce %r : tensor<16x96xf32>
  %b = tp.Shard %s {axis = 1 : i64, sizes = array<i64: 48, 48>, parts = array<i64: 96>} : tensor<16x96xf32> -> tensor<16x48xf32>
  %g = tp.AllGather %b {axis = 1 : i64, sizes = array<i64: 48, 48>, parts = array<i64: 32, 32, 32>} : tensor<16x48xf32> -> tensor<16x96xf32>
  %p = tp.ToPartial %g : tensor<16x96xf32>
  return %g, %p : tensor<16x96xf32>, tensor<16x96xf32>
}

// CHECK-LABEL: func.func @tp_roles
// CHECK: onnx.MatMul %{{.*}}, %{{.*}} {tp.role = #tp.role<column>}
// CHECK: onnx.MatMul %{{.*}}, %{{.*}} {tp.role = #tp.role<row>}
// CHECK: onnx.MatMul %{{.*}}, %{{.*}} {tp.reason = "output projection", tp.role = #tp.role<replicated>}
func.func @tp_roles(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = onnx.Weight "w" {file = "m.onnx", offset = 0 : i64, length = 256 : i64} : tensor<8x8xf32>
  %a = onnx.MatMul %x, %w {tp.role = #tp.role<column>} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %b = onnx.MatMul %a, %w {tp.role = #tp.role<row>} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %c = onnx.MatMul %b, %w {tp.role = #tp.role<replicated>, tp.reason = "output projection"} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @plan_ops
// CHECK: plan.weight "w" {axis = 1 : i64, file = "m.onnx", length = 65536 : i64, offset = 0 : i64, ranges = array<i64: 0, 64, 128, 64>, source_shape = array<i64: 64, 256>} : tensor<64x128xf32>
// CHECK: plan.constant "const.0" dense<1.000000e+00> : tensor<f32>
// CHECK: plan.state "past.0.key" : tensor<1x2x8x16xf32>
// CHECK: plan.kernel "MatMul"(%{{.*}}, %{{.*}}) {attrs = {}, node = "/mm", offsets = array<i64: 0>} : (tensor<4x64xf32>, tensor<64x128xf32>) -> tensor<4x128xf32>
// CHECK: plan.kernel "Add"(%{{.*}}, %{{.*}}) {attrs = {}, node = "/add"} : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
func.func @plan_ops(%x: tensor<4x64xf32>) -> (tensor<4x128xf32>, tensor<1x2x8x16xf32>) {
  %w = plan.weight "w" {file = "m.onnx", offset = 0 : i64, length = 65536 : i64, source_shape = array<i64: 64, 256>, axis = 1 : i64, ranges = array<i64: 0, 64, 128, 64>} : tensor<64x128xf32>
  %c = plan.constant "const.0" dense<1.000000e+00> : tensor<f32>
  %s = plan.state "past.0.key" : tensor<1x2x8x16xf32>
  %m = plan.kernel "MatMul"(%x, %w) {attrs = {}, node = "/mm", offsets = array<i64: 0>} : (tensor<4x64xf32>, tensor<64x128xf32>) -> tensor<4x128xf32>
  %y = plan.kernel "Add"(%m, %c) {attrs = {}, node = "/add"} : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  return %y, %s : tensor<4x128xf32>, tensor<1x2x8x16xf32>
}
