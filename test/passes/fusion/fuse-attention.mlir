// RUN: tpc-opt %s --split-input-file --tpc-fuse-attention | FileCheck %s

// GPT-2: K^T as Transpose [0, 2, 3, 1] of [B, S, H, D], scale on the scores,
// a constant causal mask: the mask becomes is_causal.
// CHECK-LABEL: func.func @gpt2_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x4x2x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
// CHECK: %[[KT:.+]] = onnx.Transpose %[[K]] {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x2x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = onnx.Attention %[[Q]], %[[KT]], %[[V]] {is_causal = 1 : i64, scale = 3.535500e-01 : f32} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gpt2_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x4x2x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %scale = onnx.Constant dense<0.35355> : tensor<f32>
  %mask = onnx.Constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %kt = onnx.Transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<1x4x2x8xf32> -> tensor<1x2x8x4xf32>
  %s = onnx.MatMul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %s1 = onnx.Mul %s, %scale : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %s2 = onnx.Add %s1, %mask : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax %s2 : tensor<1x2x4x4xf32>
  %y = onnx.MatMul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Llama: GQA's Reshape / Expand / Reshape on K and V (2 kv heads for 4 q
// heads), K^T as Transpose [0, 1, 3, 2], a causal mask of another constant.
// CHECK-LABEL: func.func @llama_gqa
// CHECK-SAME: (%[[Q:.+]]: tensor<1x4x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = onnx.Attention %[[Q]], %[[K]], %[[V]] {is_causal = 1 : i64, scale = 0.353553385 : f32} : tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x4x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @llama_gqa(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %scale = onnx.Constant dense<0.353553385> : tensor<f32>
  %mask = onnx.Constant dense<[[[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %k1 = onnx.Reshape %k : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %k2 = onnx.Expand %k1 : tensor<1x2x1x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %k3 = onnx.Reshape %k2 : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %v1 = onnx.Reshape %v : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %v2 = onnx.Expand %v1 : tensor<1x2x1x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %v3 = onnx.Reshape %v2 : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %kt = onnx.Transpose %k3 {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x4x8xf32> -> tensor<1x4x8x4xf32>
  %s = onnx.MatMul %q, %kt : tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32> -> tensor<1x4x4x4xf32>
  %s1 = onnx.Mul %s, %scale : tensor<1x4x4x4xf32>, tensor<f32> -> tensor<1x4x4x4xf32>
  %s2 = onnx.Add %s1, %mask : tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x4x4x4xf32>
  %p = onnx.Softmax %s2 {axis = 3 : i64} : tensor<1x4x4x4xf32>
  %y = onnx.MatMul %p, %v3 : tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf32>
  return %y : tensor<1x4x4x8xf32>
}

// -----

// BERT: a padding mask computed at run time, the scale as a division, and
// scales on Q and K that multiply into the attribute.
// CHECK-LABEL: func.func @bert_padding
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x4x8xf32>, %[[K:.+]]: tensor<2x2x4x8xf32>, %[[V:.+]]: tensor<2x2x4x8xf32>, %[[M:.+]]: tensor<2x1x1x4xf32>)
// CHECK-NEXT: %[[Y:.+]] = onnx.Attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.250000e-01 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @bert_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32> {
  %two = onnx.Constant dense<2.0> : tensor<f32>
  %half = onnx.Constant dense<0.5> : tensor<f32>
  %qs = onnx.Mul %q, %half : tensor<2x2x4x8xf32>, tensor<f32> -> tensor<2x2x4x8xf32>
  %ks = onnx.Mul %half, %k : tensor<f32>, tensor<2x2x4x8xf32> -> tensor<2x2x4x8xf32>
  %kt = onnx.Transpose %ks {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = onnx.MatMul %qs, %kt : tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32> -> tensor<2x2x4x4xf32>
  %s1 = onnx.Div %s, %two : tensor<2x2x4x4xf32>, tensor<f32> -> tensor<2x2x4x4xf32>
  %s2 = onnx.Add %m, %s1 : tensor<2x1x1x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x4xf32>
  %p = onnx.Softmax %s2 : tensor<2x2x4x4xf32>
  %y = onnx.MatMul %p, %v : tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32> -> tensor<2x2x4x8xf32>
  return %y : tensor<2x2x4x8xf32>
}

// -----

// A boolean mask applied with Where(m, scores, finfo.min).
// CHECK-LABEL: func.func @bool_mask
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[KT:.+]]: tensor<1x2x8x4xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>, %[[M:.+]]: tensor<1x1x4x4xi1>)
// CHECK: %[[K:.+]] = onnx.Transpose %[[KT]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT: onnx.Attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.000000e+00 : f32}
func.func @bool_mask(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %min = onnx.Constant dense<-3.40282347E+38> : tensor<f32>
  %s = onnx.MatMul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %s1 = onnx.Where %m, %s, %min : tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax %s1 : tensor<1x2x4x4xf32>
  %y = onnx.MatMul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// The causal mask repeated along the batch (an exporter's Expand to
// [batch, 1, S, S], folded at batch 2) is causal too; one batch whose
// slice differs keeps its mask.
// CHECK-LABEL: func.func @causal_per_batch
// CHECK: %[[M:.+]] = onnx.Constant
// CHECK: onnx.Attention %{{.+}}, %{{.+}}, %{{.+}} {is_causal = 1 : i64, scale
// CHECK: onnx.Attention %{{.+}}, %{{.+}}, %{{.+}}, %[[M]] {scale
func.func @causal_per_batch(%q: tensor<2x2x2x8xf32>, %kt: tensor<2x2x8x2xf32>, %v: tensor<2x2x2x8xf32>) -> (tensor<2x2x2x8xf32>, tensor<2x2x2x8xf32>) {
  %mask = onnx.Constant dense<[[[[0.0, -3.40282347E+38], [0.0, 0.0]]], [[[0.0, -3.40282347E+38], [0.0, 0.0]]]]> : tensor<2x1x2x2xf32>
  %s = onnx.MatMul %q, %kt : tensor<2x2x2x8xf32>, tensor<2x2x8x2xf32> -> tensor<2x2x2x2xf32>
  %s2 = onnx.Add %s, %mask : tensor<2x2x2x2xf32>, tensor<2x1x2x2xf32> -> tensor<2x2x2x2xf32>
  %p = onnx.Softmax %s2 : tensor<2x2x2x2xf32>
  %y = onnx.MatMul %p, %v : tensor<2x2x2x2xf32>, tensor<2x2x2x8xf32> -> tensor<2x2x2x8xf32>
  %other = onnx.Constant dense<[[[[0.0, -3.40282347E+38], [0.0, 0.0]]], [[[0.0, 0.0], [0.0, 0.0]]]]> : tensor<2x1x2x2xf32>
  %t = onnx.MatMul %q, %kt : tensor<2x2x2x8xf32>, tensor<2x2x8x2xf32> -> tensor<2x2x2x2xf32>
  %t2 = onnx.Add %t, %other : tensor<2x2x2x2xf32>, tensor<2x1x2x2xf32> -> tensor<2x2x2x2xf32>
  %pt = onnx.Softmax %t2 : tensor<2x2x2x2xf32>
  %z = onnx.MatMul %pt, %v : tensor<2x2x2x2xf32>, tensor<2x2x2x8xf32> -> tensor<2x2x2x8xf32>
  return %y, %z : tensor<2x2x2x8xf32>, tensor<2x2x2x8xf32>
}

// -----

// A constant mask that is not causal (one entry differs) stays a mask.
// CHECK-LABEL: func.func @almost_causal
// CHECK: %[[M:.+]] = onnx.Constant
// CHECK: onnx.Attention %{{.+}}, %{{.+}}, %{{.+}}, %[[M]] {scale
func.func @almost_causal(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %mask = onnx.Constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %s = onnx.MatMul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %s2 = onnx.Add %s, %mask : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax %s2 : tensor<1x2x4x4xf32>
  %y = onnx.MatMul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Softmax over the query axis is not attention.
// CHECK-LABEL: func.func @wrong_axis
// CHECK-NOT: onnx.Attention
func.func @wrong_axis(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = onnx.MatMul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax %s {axis = 2 : i64} : tensor<1x2x4x4xf32>
  %y = onnx.MatMul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// The probabilities are also returned: no fusion.
// CHECK-LABEL: func.func @probs_other_use
// CHECK-NOT: onnx.Attention
func.func @probs_other_use(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = onnx.MatMul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax %s : tensor<1x2x4x4xf32>
  %y = onnx.MatMul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// The scaled scores are also returned: no fusion.
// CHECK-LABEL: func.func @scores_other_use
// CHECK-NOT: onnx.Attention
func.func @scores_other_use(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %c = onnx.Constant dense<0.5> : tensor<f32>
  %s = onnx.MatMul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %s1 = onnx.Mul %s, %c : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax %s1 : tensor<1x2x4x4xf32>
  %y = onnx.MatMul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y, %s1 : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// Where fills with 0, not a very negative score: not a mask.
// CHECK-LABEL: func.func @where_zero
// CHECK-NOT: onnx.Attention
func.func @where_zero(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %zero = onnx.Constant dense<0.0> : tensor<f32>
  %s = onnx.MatMul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %s1 = onnx.Where %m, %s, %zero : tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax %s1 : tensor<1x2x4x4xf32>
  %y = onnx.MatMul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Fewer kv heads than ranks: the rank's q heads 2 and 3 (of 8, groups of 4)
// are sliced out of the repeated K^T and V; both read kv head 0, which
// becomes a one-head Slice of K and V.
// CHECK-LABEL: func.func @gqa_rank_slice
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
// CHECK-DAG: %[[KS:.+]] = onnx.Slice %[[K]] {axes = array<i64: 1>, ends = array<i64: 1>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<1x2x4x8xf32> -> tensor<1x1x4x8xf32>
// CHECK-DAG: %[[VS:.+]] = onnx.Slice %[[V]] {axes = array<i64: 1>, ends = array<i64: 1>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<1x2x4x8xf32> -> tensor<1x1x4x8xf32>
// CHECK: onnx.Attention %[[Q]], %[[KS]], %[[VS]] {scale = 1.000000e+00 : f32} : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NOT: onnx.Expand
func.func @gqa_rank_slice(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %k1 = onnx.Reshape %k : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %k2 = onnx.Expand %k1 : tensor<1x2x1x4x8xf32> -> tensor<1x2x4x4x8xf32>
  %k3 = onnx.Reshape %k2 : tensor<1x2x4x4x8xf32> -> tensor<1x8x4x8xf32>
  %v1 = onnx.Reshape %v : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %v2 = onnx.Expand %v1 : tensor<1x2x1x4x8xf32> -> tensor<1x2x4x4x8xf32>
  %v3 = onnx.Reshape %v2 : tensor<1x2x4x4x8xf32> -> tensor<1x8x4x8xf32>
  %vs = onnx.Slice %v3 {axes = array<i64: 1>, ends = array<i64: 4>, starts = array<i64: 2>, steps = array<i64: 1>} : tensor<1x8x4x8xf32> -> tensor<1x2x4x8xf32>
  %kt = onnx.Transpose %k3 {perm = array<i64: 0, 1, 3, 2>} : tensor<1x8x4x8xf32> -> tensor<1x8x8x4xf32>
  %kts = onnx.Slice %kt {axes = array<i64: 1>, ends = array<i64: 4>, starts = array<i64: 2>, steps = array<i64: 1>} : tensor<1x8x8x4xf32> -> tensor<1x2x8x4xf32>
  %s = onnx.MatMul %q, %kts : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax %s : tensor<1x2x4x4xf32>
  %y = onnx.MatMul %p, %vs : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Multi-query attention (Gemma): one kv head, K^T scaled apart from q
// between the transpose and the rank's slice of its q heads. The scale joins
// the fused op's; K and V are the one kv head, not its broadcast.
// CHECK-LABEL: func.func @mqa_scaled_rank_slice
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x1x4x8xf32>, %[[V:.+]]: tensor<1x1x4x8xf32>)
// CHECK: onnx.Attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32} : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NOT: onnx.Expand
// CHECK-NOT: onnx.Mul
func.func @mqa_scaled_rank_slice(%q: tensor<1x2x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %half = onnx.Constant dense<0.5> : tensor<f32>
  %k1 = onnx.Reshape %k : tensor<1x1x4x8xf32> -> tensor<1x1x1x4x8xf32>
  %k2 = onnx.Expand %k1 : tensor<1x1x1x4x8xf32> -> tensor<1x1x4x4x8xf32>
  %k3 = onnx.Reshape %k2 : tensor<1x1x4x4x8xf32> -> tensor<1x4x4x8xf32>
  %v1 = onnx.Reshape %v : tensor<1x1x4x8xf32> -> tensor<1x1x1x4x8xf32>
  %v2 = onnx.Expand %v1 : tensor<1x1x1x4x8xf32> -> tensor<1x1x4x4x8xf32>
  %v3 = onnx.Reshape %v2 : tensor<1x1x4x4x8xf32> -> tensor<1x4x4x8xf32>
  %vs = onnx.Slice %v3 {axes = array<i64: 1>, ends = array<i64: 4>, starts = array<i64: 2>, steps = array<i64: 1>} : tensor<1x4x4x8xf32> -> tensor<1x2x4x8xf32>
  %qs = onnx.Mul %q, %half : tensor<1x2x4x8xf32>, tensor<f32> -> tensor<1x2x4x8xf32>
  %kt = onnx.Transpose %k3 {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x4x8xf32> -> tensor<1x4x8x4xf32>
  %ktm = onnx.Mul %kt, %half : tensor<1x4x8x4xf32>, tensor<f32> -> tensor<1x4x8x4xf32>
  %kts = onnx.Slice %ktm {axes = array<i64: 1>, ends = array<i64: 4>, starts = array<i64: 2>, steps = array<i64: 1>} : tensor<1x4x8x4xf32> -> tensor<1x2x8x4xf32>
  %s = onnx.MatMul %qs, %kts : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax %s : tensor<1x2x4x4xf32>
  %y = onnx.MatMul %p, %vs : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Heads 3 and 4 straddle two groups of 4 unevenly: the repeat stays and the
// sliced K^T and V are the fused op's operands.
// CHECK-LABEL: func.func @gqa_uneven_slice
// CHECK: onnx.Expand
// CHECK: onnx.Attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.000000e+00 : f32} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
func.func @gqa_uneven_slice(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %v1 = onnx.Reshape %v : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %v2 = onnx.Expand %v1 : tensor<1x2x1x4x8xf32> -> tensor<1x2x4x4x8xf32>
  %v3 = onnx.Reshape %v2 : tensor<1x2x4x4x8xf32> -> tensor<1x8x4x8xf32>
  %vs = onnx.Slice %v3 {axes = array<i64: 1>, ends = array<i64: 5>, starts = array<i64: 3>, steps = array<i64: 1>} : tensor<1x8x4x8xf32> -> tensor<1x2x4x8xf32>
  %kt = onnx.Transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = onnx.MatMul %q, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax %s : tensor<1x2x4x4xf32>
  %y = onnx.MatMul %p, %vs : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// PyTorch's SDPA export guards the probabilities with Where(IsNaN(p), 0, p)
// (a fully masked row gives zeros, not NaN): fused with nan_to_zero, the
// guard gone. The padding mask enters as Where(m, 0, -inf) added.
// CHECK-LABEL: func.func @sdpa_nan_guard
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x1x8xf32>, %[[K:.+]]: tensor<1x2x6x8xf32>, %[[V:.+]]: tensor<1x2x6x8xf32>
// CHECK: onnx.Attention %[[Q]], %[[K]], %[[V]], %{{.+}} {nan_to_zero = 1 : i64, scale = {{.*}} : f32}
// CHECK-NOT: onnx.IsNaN
// CHECK-NOT: onnx.Softmax
func.func @sdpa_nan_guard(%q: tensor<1x2x1x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %m: tensor<1x1x1x6xi1>) -> tensor<1x2x1x8xf32> {
  %scale = onnx.Constant dense<0.353553385> : tensor<f32>
  %zero = onnx.Constant dense<0.0> : tensor<f32>
  %ninf = onnx.Constant dense<0xFF800000> : tensor<f32>
  %kt = onnx.Transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x6x8xf32> -> tensor<1x2x8x6xf32>
  %s = onnx.MatMul %q, %kt : tensor<1x2x1x8xf32>, tensor<1x2x8x6xf32> -> tensor<1x2x1x6xf32>
  %s1 = onnx.Mul %s, %scale : tensor<1x2x1x6xf32>, tensor<f32> -> tensor<1x2x1x6xf32>
  %add = onnx.Where %m, %zero, %ninf : tensor<1x1x1x6xi1>, tensor<f32>, tensor<f32> -> tensor<1x1x1x6xf32>
  %s2 = onnx.Add %s1, %add : tensor<1x2x1x6xf32>, tensor<1x1x1x6xf32> -> tensor<1x2x1x6xf32>
  %p = onnx.Softmax %s2 : tensor<1x2x1x6xf32>
  %nan = onnx.IsNaN %p : tensor<1x2x1x6xf32> -> tensor<1x2x1x6xi1>
  %g = onnx.Where %nan, %zero, %p : tensor<1x2x1x6xi1>, tensor<f32>, tensor<1x2x1x6xf32> -> tensor<1x2x1x6xf32>
  %y = onnx.MatMul %g, %v : tensor<1x2x1x6xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x1x8xf32>
  return %y : tensor<1x2x1x8xf32>
}
