//===- FusedKernels.cpp - Adapters of the fused ops -----------------------===//
//
// The ops the fusion passes produce: Attention and SwiGLU have kernels of
// their own (Fused.cu); AddNormalization is the norm kernel with the sum
// written (rounded to the dtype) and normalised in the same launch;
// MatMulBias is one cuBLASLt
// product with the bias epilogue (or a broadcast Add after it when cuBLASLt
// has none, or the bias is not 16-byte aligned), then the activation as the
// unary kernel in place; MatMulNBits reads its packed codes in a kernel of
// its own (QuantMatMul.cu). The params are the backend-neutral builders'
// (kernels/Fused.h, kernels/Norm.h), as on the CPU.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/Adapters.h"
#include "kernels/cuda/Gemm.h"
#include "kernels/cuda/Kernels.h"

#include <cmath>

namespace tpc::cuda {
namespace {

/// The adapter of fused op Op, specialized for each.
template <FusedOp Op>
Status prepareFused(const KernelContext &ctx, const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel);

template <>
Status prepareFused<FusedOp::Attention>(
    const KernelContext &, const std::vector<TensorDesc> &in,
    const std::vector<TensorDesc> &out, const Attrs &attrs,
    std::unique_ptr<PreparedKernel> &kernel) {
  AttentionParams p;
  TPC_RETURN_IF_ERROR(makeAttentionParams(in, out, attrs, p));
  const bool hasMask = p.mask != AttentionParams::Mask::None;
  if (p.kvLen > kMaxAttentionKeys && !attentionUsesTiles(p))
    return Status::error(
        "the CUDA Attention kernel takes at most " +
        std::to_string(kMaxAttentionKeys) + " keys with " +
        (p.dtype == DType::F64 ? "f64" : "heads over 128 wide") + ", not " +
        std::to_string(p.kvLen));
  kernel =
      makeLaunch("Attention", [p, hasMask](const void *const *i, void *const *o,
                                           cudaStream_t st) {
        const auto *lengths =
            p.kvLengthsInput >= 0
                ? static_cast<const int64_t *>(i[p.kvLengthsInput])
                : nullptr;
        return attentionKernel(p, i[0], i[1], i[2], hasMask ? i[3] : nullptr,
                               lengths, o[0], st);
      });
  return Status::ok();
}

template <>
Status prepareFused<FusedOp::SwiGLU>(const KernelContext &,
                                     const std::vector<TensorDesc> &in,
                                     const std::vector<TensorDesc> &out,
                                     const Attrs &,
                                     std::unique_ptr<PreparedKernel> &kernel) {
  SwiGLUParams p;
  TPC_RETURN_IF_ERROR(makeSwiGLUParams(in, out, p));
  kernel = makeLaunch(
      "SwiGLU", [p](const void *const *i, void *const *o, cudaStream_t st) {
        return swigluKernel(p.dtype, p.numel, i[0], i[1], o[0], st);
      });
  return Status::ok();
}

template <>
Status prepareFused<FusedOp::AddNormalization>(
    const KernelContext &, const std::vector<TensorDesc> &in,
    const std::vector<TensorDesc> &out, const Attrs &attrs,
    std::unique_ptr<PreparedKernel> &kernel) {
  NormParams p;
  TPC_RETURN_IF_ERROR(makeAddNormParams(in, out, attrs, p));
  kernel = makeLaunch("AddNormalization", [p](const void *const *i,
                                              void *const *o, cudaStream_t st) {
    // Output 1 is the sum, output 0 its norm.
    return addNormKernel(p, i[0], i[1], o[1], i[2], p.hasBias ? i[3] : nullptr,
                         o[0], st);
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
        TPC_RETURN_IF_ERROR(plain->run(inputs[0], inputs[1], y, nullptr, stream)
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

template <>
Status prepareFused<FusedOp::MatMulBias>(
    const KernelContext &ctx, const std::vector<TensorDesc> &in,
    const std::vector<TensorDesc> &out, const Attrs &attrs,
    std::unique_ptr<PreparedKernel> &kernel) {
  MatMulBiasParams b;
  TPC_RETURN_IF_ERROR(makeMatMulBiasParams(in, out, attrs, b));
  const DType dtype = b.dtype;
  const int64_t k = b.k, n = b.n, rows = b.rows;
  auto mk = std::make_unique<MatMulBiasKernel>();
  mk->bytes = out[0].bytes();
  TPC_RETURN_IF_ERROR(makeBinaryParams(BinaryOp::Add, dtype, dtype, {rows, n},
                                       {n}, {rows, n}, mk->addBias));
  mk->hasAct = b.activation != BiasActivation::None;
  mk->act.dtype = dtype;
  mk->act.numel = out[0].numel();
  mk->act.op = b.activation == BiasActivation::Relu   ? UnaryOp::Relu
               : b.activation == BiasActivation::Gelu ? UnaryOp::Gelu
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

/// MatMulNBits: one warp per column over the packed codes (QuantMatMul.cu).
template <>
Status prepareFused<FusedOp::MatMulNBits>(
    const KernelContext &, const std::vector<TensorDesc> &in,
    const std::vector<TensorDesc> &out, const Attrs &attrs,
    std::unique_ptr<PreparedKernel> &kernel) {
  MatMulNBitsParams p;
  TPC_RETURN_IF_ERROR(makeMatMulNBitsParams(in, out, attrs, p));
  const bool hasZero = p.zero != MatMulNBitsParams::Zero::Default;
  kernel = makeLaunch("MatMulNBits", [p, hasZero](const void *const *i,
                                                  void *const *o,
                                                  cudaStream_t st) {
    return matMulNBitsKernel(p, i[0], i[1], i[2], hasZero ? i[3] : nullptr,
                             o[0], st);
  });
  return Status::ok();
}

} // namespace

TPC_DEFINE_LISTED_KERNELS(addFusedKernels, KernelTable, kFusedKernels,
                          prepareFused)

} // namespace tpc::cuda
