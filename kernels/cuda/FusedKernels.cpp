//===- FusedKernels.cpp - Adapters of the fused ops -----------------------===//
//
// The ops the fusion passes produce: Attention and SwiGLU have kernels of
// their own (Fused.cu); AddNormalization is the Add kernel into the Sum
// output followed by the norm kernel on it; MatMulBias is one cuBLASLt
// product with the bias epilogue (or a broadcast Add after it when cuBLASLt
// has none, or the bias is not 16-byte aligned), then the activation as the
// unary kernel in place. Validation is the CPU kernel's.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/Adapters.h"
#include "kernels/cuda/Gemm.h"
#include "kernels/cuda/Kernels.h"

#include <cmath>

namespace tpc::cuda {
namespace {

Status prepareAttention(const KernelContext &,
                        const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Attention", in, out, attrs, true));
  const Shape &q = in[0].shape, &k = in[1].shape, &v = in[2].shape;
  cpu::AttentionParams p;
  p.dtype = in[0].dtype;
  p.batch = q[0];
  p.qHeads = q[1];
  p.kvHeads = k[1];
  p.qLen = q[2];
  p.kvLen = k[2];
  p.headDim = q[3];
  p.vDim = v[3];
  p.scale = attrs.getFloat("scale", q[3] > 0 ? 1.0 / std::sqrt(double(q[3]))
                                             : 1.0);
  p.causal = attrs.getInt("is_causal", 0) != 0;
  const bool hasMask = in.size() == 4 && !cpu::isAbsent(in[3]);
  if (hasMask) {
    p.mask = in[3].dtype == DType::Bool ? cpu::AttentionParams::Mask::Bool
                                        : cpu::AttentionParams::Mask::Float;
    const std::vector<int64_t> s = cpu::broadcastStrides(
        in[3].shape, {p.batch, p.qHeads, p.qLen, p.kvLen});
    for (int d = 0; d < 4; ++d)
      p.maskStrides[d] = s[size_t(d)];
  }
  if (p.kvLen > kMaxAttentionKeys)
    return Status::error("the CUDA Attention kernel takes at most " +
                         std::to_string(kMaxAttentionKeys) + " keys, not " +
                         std::to_string(p.kvLen));
  kernel = makeLaunch("Attention", [p, hasMask](const void *const *i,
                                                void *const *o,
                                                cudaStream_t st) {
    return attentionKernel(p, i[0], i[1], i[2], hasMask ? i[3] : nullptr,
                           o[0], st);
  });
  return Status::ok();
}

Status prepareSwiGLU(const KernelContext &, const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("SwiGLU", in, out, attrs, true));
  const DType dtype = in[0].dtype;
  const int64_t numel = in[0].numel();
  kernel = makeLaunch("SwiGLU", [dtype, numel](const void *const *i,
                                               void *const *o,
                                               cudaStream_t st) {
    return swigluKernel(dtype, numel, i[0], i[1], o[0], st);
  });
  return Status::ok();
}

Status prepareAddNorm(const KernelContext &, const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      std::unique_ptr<PreparedKernel> &kernel) {
  NormParams p;
  TPC_RETURN_IF_ERROR(makeAddNormParams(in, out, attrs, p));
  const Shape &s = in[0].shape;
  BinaryParams add;
  TPC_RETURN_IF_ERROR(makeBinaryParams(BinaryOp::Add, in[0].dtype,
                                            in[0].dtype, s, s, s, add));
  kernel = makeLaunch("AddNormalization", [add, p](
                                              const void *const *i,
                                              void *const *o,
                                              cudaStream_t st) -> cudaError_t {
    // Sum first (output 1), then the norm reads it back.
    if (cudaError_t err = binaryKernel(add, i[0], i[1], o[1], st);
        err != cudaSuccess)
      return err;
    return normKernel(p, o[1], i[2], p.hasBias ? i[3] : nullptr, o[0], nullptr,
                      nullptr, st);
  });
  return Status::ok();
}

class MatMulBiasKernel final : public PreparedKernel {
public:
  std::unique_ptr<LtGemm> plain, withBias;
  BinaryParams addBias;
  bool hasAct = false;
  UnaryParams act;
  size_t bytes = 0;

  Status run(const void *const *inputs, void *const *outputs,
             cudaStream_t stream) override {
    void *y = outputs[0];
    const void *bias = inputs[2];
    if (withBias && reinterpret_cast<uintptr_t>(bias) % 16 == 0) {
      TPC_RETURN_IF_ERROR(withBias->run(inputs[0], inputs[1], y, bias, stream)
                              .withContext("MatMulBias: "));
    } else {
      if (plain)
        TPC_RETURN_IF_ERROR(plain->run(inputs[0], inputs[1], y, nullptr,
                                       stream)
                                .withContext("MatMulBias: "));
      else if (bytes) // k == 0: the product is zeros
        TPC_CUDA_CHECK(cudaMemsetAsync(y, 0, bytes, stream));
      if (cudaError_t err = binaryKernel(addBias, y, bias, y, stream);
          err != cudaSuccess)
        return cudaStatus(err, "MatMulBias: adding the bias");
    }
    if (hasAct)
      if (cudaError_t err = unaryKernel(act, y, y, stream); err != cudaSuccess)
        return cudaStatus(err, "MatMulBias: the activation");
    return Status::ok();
  }
};

Status prepareMatMulBias(const KernelContext &ctx,
                         const std::vector<TensorDesc> &in,
                         const std::vector<TensorDesc> &out,
                         const Attrs &attrs,
                         std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("MatMulBias", in, out, attrs, true));
  const DType dtype = in[0].dtype;
  if (dtype != DType::F32 && dtype != DType::F64 && dtype != DType::F16 &&
      dtype != DType::BF16)
    return Status::error(std::string("MatMulBias of ") + dtypeName(dtype));
  const int64_t k = in[0].shape.back(), n = in[1].shape[1];
  const int64_t rows = n ? out[0].numel() / n : 0;
  auto mk = std::make_unique<MatMulBiasKernel>();
  mk->bytes = out[0].bytes();
  TPC_RETURN_IF_ERROR(makeBinaryParams(BinaryOp::Add, dtype, dtype,
                                            {rows, n}, {n}, {rows, n},
                                            mk->addBias));
  const std::string a = attrs.getString("activation", "none");
  mk->hasAct = a != "none";
  mk->act.dtype = dtype;
  mk->act.numel = out[0].numel();
  mk->act.op = a == "relu"   ? UnaryOp::Relu
               : a == "gelu" ? UnaryOp::Gelu
                             : UnaryOp::GeluTanh;
  if (rows > 0 && n > 0 && k > 0) {
    GemmShape g;
    g.dtype = dtype;
    g.m = rows;
    g.n = n;
    g.k = k;
    g.lda = k;
    g.ldb = n;
    g.ldd = n;
    GemmShape biased = g;
    biased.bias = true;
    // No bias algorithm is not an error: the broadcast Add remains.
    if (!LtGemm::create(ctx, biased, mk->withBias))
      mk->withBias.reset();
    TPC_RETURN_IF_ERROR(LtGemm::create(ctx, g, mk->plain));
  }
  if (rows == 0 || n == 0) {
    kernel = makeLaunch("MatMulBias", [](const void *const *, void *const *,
                                         cudaStream_t) { return cudaSuccess; });
    return Status::ok();
  }
  kernel = std::move(mk);
  return Status::ok();
}

} // namespace

void addFusedKernels(KernelTable &t) {
  t.push_back({"Attention",
               "softmax(scale * Q K^T + mask) V (attrs scale, is_causal; GQA)",
               prepareAttention});
  t.push_back({"SwiGLU", "silu(gate) * up", prepareSwiGLU});
  t.push_back({"AddNormalization",
               "Sum = A + B, Y = norm(Sum) (attrs axis, epsilon, rms)",
               prepareAddNorm});
  t.push_back({"MatMulBias",
               "A B + bias, then attr activation (none, relu, gelu, "
               "gelu_tanh)",
               prepareMatMulBias});
}

} // namespace tpc::cuda
