//===- FusedKernels.cpp - Attention and SwiGLU adapters -------------------===//
#include "kernels/cpu/Fused.h"
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Norm.h"

#include <cmath>

namespace tpc::cpu {
namespace {

/// Attention (Q, K, V, optional attn_mask -> Y), 4-D operands; attributes
/// `scale` (default 1/sqrt(head dim)) and `is_causal` (default 0).
Status prepareAttention(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 3, 4, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0 (Q)", {DType::F32, DType::F64, DType::F16, DType::BF16}));
  static const char *names[] = {"Q", "K", "V"};
  for (int i = 0; i < 3; ++i) {
    std::string what = "input " + std::to_string(i) + " (" + names[i] + ")";
    TPC_RETURN_IF_ERROR(checkSameDType(in[i], what, in[0], "input 0 (Q)"));
    if (in[i].shape.size() != 4)
      return Status::error(what + " must have rank 4 [batch, heads, seq, "
                                  "dim], got " + fmtShape(in[i].shape));
  }
  const Shape &q = in[0].shape, &k = in[1].shape, &v = in[2].shape;
  if (k[0] != q[0] || v[0] != q[0] || v[1] != k[1] || v[2] != k[2] ||
      k[3] != q[3])
    return Status::error("Q " + fmtShape(q) + ", K " + fmtShape(k) + " and V " +
                         fmtShape(v) + " do not agree");
  if (k[1] <= 0 || q[1] % k[1] != 0)
    return Status::error("kv heads (" + std::to_string(k[1]) +
                         ") must divide q heads (" + std::to_string(q[1]) + ")");
  AttentionParams p;
  p.dtype = in[0].dtype;
  p.batch = q[0];
  p.qHeads = q[1];
  p.kvHeads = k[1];
  p.qLen = q[2];
  p.kvLen = k[2];
  p.headDim = q[3];
  p.vDim = v[3];
  p.scale = attrs.getFloat(
      "scale", q[3] > 0 ? 1.0 / std::sqrt(static_cast<double>(q[3])) : 1.0);
  p.causal = attrs.getInt("is_causal", 0) != 0;
  if (in.size() == 4 && !isAbsent(in[3])) {
    const TensorDesc &m = in[3];
    if (m.dtype == DType::Bool)
      p.mask = AttentionParams::Mask::Bool;
    else if (m.dtype == in[0].dtype)
      p.mask = AttentionParams::Mask::Float;
    else
      return Status::error("input 3 (attn_mask) must be bool or Q's dtype");
    const Shape full = {p.batch, p.qHeads, p.qLen, p.kvLen};
    Shape b;
    if (m.shape.size() > 4 || !broadcastShapes({m.shape, full}, b).isOk() ||
        b != full)
      return Status::error("input 3 (attn_mask) shape " + fmtShape(m.shape) +
                           " does not broadcast to " + fmtShape(full));
    std::vector<int64_t> s = broadcastStrides(m.shape, full);
    for (int d = 0; d < 4; ++d)
      p.maskStrides[d] = s[d];
  }
  TPC_RETURN_IF_ERROR(
      checkSameDType(out[0], "output 0 (Y)", in[0], "input 0 (Q)"));
  TPC_RETURN_IF_ERROR(
      checkOutputShape(out[0], {p.batch, p.qHeads, p.qLen, p.vDim}, "output 0 (Y)"));
  const bool hasMask = p.mask != AttentionParams::Mask::None;
  kernel = makeKernel([p, hasMask](const void *const *i, void *const *o,
                                   const ExecContext &) {
    attentionKernel(p, i[0], i[1], i[2], hasMask ? i[3] : nullptr, o[0]);
  });
  return Status::ok();
}

/// SwiGLU (gate, up -> gate * sigmoid(gate) * up), same shapes.
Status prepareSwiGLU(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &,
                     std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 2, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(
      checkDType(in[0], "input 0 (gate)", {DType::F32, DType::F64, DType::F16, DType::BF16}));
  TPC_RETURN_IF_ERROR(
      checkSameDType(in[1], "input 1 (up)", in[0], "input 0 (gate)"));
  if (in[1].shape != in[0].shape)
    return Status::error("input 1 (up) shape " + fmtShape(in[1].shape) +
                         " differs from input 0 (gate) shape " +
                         fmtShape(in[0].shape));
  TPC_RETURN_IF_ERROR(
      checkSameDType(out[0], "output 0", in[0], "input 0 (gate)"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));
  SwiGLUParams p;
  p.dtype = in[0].dtype;
  p.numel = numElements(in[0].shape);
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &) {
    swigluKernel(p, i[0], i[1], o[0]);
  });
  return Status::ok();
}


Shape stripLeadingOnes(const Shape &s) {
  size_t i = 0;
  while (i < s.size() && s[i] == 1)
    ++i;
  return Shape(s.begin() + i, s.end());
}

/// AddNormalization (A, B, Scale, optional Bias -> Y, Sum): Sum = A + B,
/// then LayerNormalization (attr rms = 0) or RMSNorm (rms = 1) of Sum, with
/// the same arithmetic as the Add and norm kernels.
Status prepareAddNorm(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 3, 4, 2, 2));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0 (A)", {DType::F32, DType::F64, DType::F16, DType::BF16}));
  const Shape &s = in[0].shape;
  TPC_RETURN_IF_ERROR(checkSameDType(in[1], "input 1 (B)", in[0], "input 0 (A)"));
  if (in[1].shape != s)
    return Status::error("input 1 (B) shape " + fmtShape(in[1].shape) +
                         " differs from input 0 (A) shape " + fmtShape(s));
  if (s.empty())
    return Status::error("input 0 (A) must have rank >= 1");
  const bool rms = attrs.getInt("rms", 0) != 0;
  const bool hasBias = in.size() == 4 && !isAbsent(in[3]);
  if (rms && hasBias)
    return Status::error("an RMS norm (rms = 1) takes no bias");
  int64_t axis;
  TPC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis", -1),
                                    static_cast<int64_t>(s.size()), "axis", axis));
  const double epsilon = attrs.getFloat("epsilon", 1e-5);
  if (!(epsilon >= 0))
    return Status::error("attribute epsilon must be >= 0");
  const Shape normShape(s.begin() + axis, s.end());
  for (size_t i = 2; i < (hasBias ? 4u : 3u); ++i) {
    std::string what = i == 2 ? "input 2 (Scale)" : "input 3 (Bias)";
    TPC_RETURN_IF_ERROR(checkSameDType(in[i], what, in[0], "input 0 (A)"));
    if (stripLeadingOnes(in[i].shape) != stripLeadingOnes(normShape))
      return Status::error(what + " shape " + fmtShape(in[i].shape) +
                           " does not match the normalized shape " +
                           fmtShape(normShape));
  }
  for (size_t i = 0; i < 2; ++i) {
    std::string what = i == 0 ? "output 0 (Y)" : "output 1 (Sum)";
    TPC_RETURN_IF_ERROR(checkSameDType(out[i], what, in[0], "input 0 (A)"));
    TPC_RETURN_IF_ERROR(checkOutputShape(out[i], s, what));
  }
  NormParams p;
  p.dtype = in[0].dtype;
  p.rms = rms;
  p.outer = product(s, 0, axis);
  p.norm = numElements(normShape);
  p.epsilon = epsilon;
  const int64_t numel = numElements(s);
  kernel = makeKernel([p, hasBias, numel](const void *const *i, void *const *o,
                                          const ExecContext &) {
    addKernel(p.dtype, numel, i[0], i[1], o[1]);
    normKernel(p, o[1], i[2], hasBias ? i[3] : nullptr, o[0], nullptr, nullptr);
  });
  return Status::ok();
}

} // namespace

void addFusedKernels(KernelTable &t) {
  t.push_back({"AddNormalization",
               "Sum = A + B, Y = layer or RMS norm of Sum (attrs axis, "
               "epsilon, rms)",
               prepareAddNorm});
  t.push_back({"Attention",
               "softmax(scale * Q K^T + mask) V, GQA, causal (attrs scale, "
               "is_causal)",
               prepareAttention});
  t.push_back({"SwiGLU", "silu(gate) * up", prepareSwiGLU});
}

} // namespace tpc::cpu
