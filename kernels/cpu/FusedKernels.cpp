//===- FusedKernels.cpp - Attention and SwiGLU adapters -------------------===//
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/Fused.h"
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/MatMul.h"
#include "kernels/cpu/Norm.h"
#include "kernels/cpu/Parallel.h"

#include <cmath>
#include <memory>
#include <type_traits>

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
                                   const ExecContext &ctx) {
    attentionKernel(p, i[0], i[1], i[2], hasMask ? i[3] : nullptr, o[0],
                    ctx.numThreads);
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


/// AddNormalization (A, B, Scale, optional Bias -> Y, Sum): Sum = A + B,
/// then LayerNormalization (attr rms = 0) or RMSNormalization (rms = 1) of Sum, with
/// the same arithmetic as the Add and norm kernels.
Status prepareAddNorm(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      std::unique_ptr<PreparedKernel> &kernel) {
  NormParams p;
  TPC_RETURN_IF_ERROR(makeAddNormParams(in, out, attrs, p));
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &ctx) {
    const int64_t row = p.norm * int64_t(dtypeSize(p.dtype));
    // Each thread adds and normalizes a block of rows.
    parallelFor(ctx.numThreads, p.outer, 4 * row, [&](int64_t r0, int64_t r1) {
      NormParams q = p;
      q.outer = r1 - r0;
      void *sum = byteOffset(o[1], r0 * row);
      addKernel(p.dtype, q.outer * p.norm, byteOffset(i[0], r0 * row),
                byteOffset(i[1], r0 * row), sum);
      normKernel(q, sum, i[2], p.hasBias ? i[3] : nullptr,
                 byteOffset(o[0], r0 * row), nullptr, nullptr);
    });
  });
  return Status::ok();
}


/// The MatMulBias epilogue on one element, in float as the unfused Add and
/// activation kernels compute (f64 in double).
template <class F> F epilogue(F x, F bias, int act) {
  F v = x + bias;
  switch (act) {
  case 1:
    return v < F(0) ? F(0) : v; // NaN passes through, as Relu
  case 2:
    return F(0.5) * v * (F(1) + std::erf(v * F(0.70710678118654752440)));
  case 3: {
    F inner = F(0.79788456080286535588) * (v + F(0.044715) * v * v * v);
    return F(0.5) * v * (F(1) + std::tanh(inner));
  }
  default:
    return v;
  }
}

/// The MatMul kernel (which packs a weight B when bound), then the bias and
/// activation; f16, bf16 and f64 (fp32 runs them in sgemm's epilogue).
class MatMulBiasKernel final : public PreparedKernel {
public:
  MatMulBiasKernel(std::unique_ptr<PreparedKernel> product, DType dtype,
                   int64_t rows, int64_t n, int act)
      : product_(std::move(product)), dtype_(dtype), rows_(rows), n_(n),
        act_(act) {}

  void bindConstantInput(size_t index, const void *data) override {
    if (index < 2)
      product_->bindConstantInput(index, data);
  }

  void run(const void *const *i, void *const *o,
           const ExecContext &ctx) override {
    product_->run(i, o, ctx);
    if (!visitFloat16(dtype_, [&](auto tag) {
          using S = typename decltype(tag)::type;
          S *y = static_cast<S *>(o[0]);
          const S *b = static_cast<const S *>(i[2]);
          for (int64_t r = 0; r < rows_; ++r)
            for (int64_t j = 0; j < n_; ++j)
              y[r * n_ + j] = narrowTo<S>(
                  epilogue(widen(y[r * n_ + j]), widen(b[j]), act_));
        }))
      visitFloat(dtype_, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T *y = static_cast<T *>(o[0]);
        const T *b = static_cast<const T *>(i[2]);
        for (int64_t r = 0; r < rows_; ++r)
          for (int64_t j = 0; j < n_; ++j)
            y[r * n_ + j] = epilogue(y[r * n_ + j], b[j], act_);
      });
  }

private:
  std::unique_ptr<PreparedKernel> product_;
  DType dtype_;
  int64_t rows_, n_;
  int act_;
};

/// MatMulBias (A [..., K], B [K, N], Bias [N] -> Y): the MatMul kernel,
/// then y = act(y + bias) in place; attr activation none|relu|gelu|gelu_tanh.
Status prepareMatMulBias(const std::vector<TensorDesc> &in,
                         const std::vector<TensorDesc> &out, const Attrs &attrs,
                         std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 3, 3, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(
      in[0], "input 0 (A)", {DType::F32, DType::F64, DType::F16, DType::BF16}));
  if (in[1].shape.size() != 2 || in[0].shape.size() < 2)
    return Status::error("MatMulBias takes A [..., K] and B [K, N], got " +
                         fmtShape(in[0].shape) + " and " +
                         fmtShape(in[1].shape));
  const int64_t n = in[1].shape[1];
  TPC_RETURN_IF_ERROR(checkSameDType(in[2], "input 2 (Bias)", in[0], "input 0 (A)"));
  if (stripLeadingOnes(in[2].shape) != Shape{n})
    return Status::error("input 2 (Bias) shape " + fmtShape(in[2].shape) +
                         " is not one value per column of " + std::to_string(n));
  const std::string act = attrs.getString("activation", "none");
  int actCode;
  if (act == "none")
    actCode = 0;
  else if (act == "relu")
    actCode = 1;
  else if (act == "gelu")
    actCode = 2;
  else if (act == "gelu_tanh")
    actCode = 3;
  else
    return Status::error("attribute activation must be none, relu, gelu or "
                         "gelu_tanh, got \"" + act + "\"");
  if (in[0].dtype == DType::F32) {
    // fp32: the bias and activation run in sgemm's epilogue, on each block
    // of rows in the thread that computed it.
    MatMulParams p;
    TPC_RETURN_IF_ERROR(makeMatMulParams({in[0], in[1]}, out, p));
    static const SgemmActivation acts[] = {
        SgemmActivation::None, SgemmActivation::Relu, SgemmActivation::Gelu,
        SgemmActivation::GeluTanh};
    kernel = makeMatMulF32Kernel(p, MatMulEpilogue{2, acts[actCode]});
    return Status::ok();
  }
  const KernelDef *mm = lookupKernel("MatMul");
  std::unique_ptr<PreparedKernel> inner;
  TPC_RETURN_IF_ERROR(mm->prepare({in[0], in[1]}, out, Attrs(), inner));
  const int64_t rows = numElements(out[0].shape) / (n ? n : 1);
  kernel = std::make_unique<MatMulBiasKernel>(std::move(inner), in[0].dtype,
                                              rows, n, actCode);
  return Status::ok();
}

} // namespace

void addFusedKernels(KernelTable &t) {
  t.push_back({"MatMulBias",
               "act(A x B + bias), B [K, N] (attr activation none, relu, "
               "gelu, gelu_tanh)",
               prepareMatMulBias});
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
