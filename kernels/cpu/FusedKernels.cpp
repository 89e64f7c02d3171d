//===- FusedKernels.cpp - Adapters of the fused kernels -------------------===//
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/Fused.h"
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/MatMul.h"
#include "kernels/cpu/MatMulHalf.h"
#include "kernels/cpu/Norm.h"
#include "kernels/cpu/Parallel.h"
#include "kernels/cpu/QuantMatMul.h"
#include "kernels/cpu/Scratch.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace tpc::cpu {
namespace {

void runAttention(const AttentionParams &p, const void *const *i,
                  void *const *o, const ExecContext &ctx) {
  const bool hasMask = p.mask != AttentionParams::Mask::None;
  const auto *lengths =
      p.kvLengthsInput >= 0
          ? static_cast<const int64_t *>(i[p.kvLengthsInput])
          : nullptr;
  attentionKernel(p, i[0], i[1], i[2], hasMask ? i[3] : nullptr, lengths,
                  o[0], ctx.numThreads);
}

/// SwiGLU (gate, up -> gate * sigmoid(gate) * up), same shapes.
void runSwiGLU(const SwiGLUParams &p, const void *const *i, void *const *o,
               const ExecContext &) {
  swigluKernel(p, i[0], i[1], o[0]);
}

/// AddNormalization (A, B, Scale, optional Bias -> Y, Sum): Sum = A + B,
/// then LayerNormalization (attr rms = 0) or RMSNormalization (rms = 1) of
/// Sum, with the same arithmetic as the Add and norm kernels. Each thread
/// adds and normalizes a block of rows.
void runAddNorm(const NormParams &p, const void *const *i, void *const *o,
                const ExecContext &ctx) {
  const int64_t row = p.norm * int64_t(dtypeSize(p.dtype));
  parallelRows<&NormParams::outer>(
      ctx.numThreads, p, 4 * row, [&](const NormParams &q, int64_t r0) {
        void *sum = byteOffset(o[1], r0 * row);
        addKernel(p.dtype, q.outer * p.norm, byteOffset(i[0], r0 * row),
                  byteOffset(i[1], r0 * row), sum);
        normKernel(q, sum, i[2], p.hasBias ? i[3] : nullptr,
                   byteOffset(o[0], r0 * row), nullptr, nullptr);
      });
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
/// activation; f16 and f64 (fp32 and bf16 run them in the product's
/// epilogue).
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

  bool shareConstantInput(size_t index, const PreparedKernel &bound) override {
    auto *other = dynamic_cast<const MatMulBiasKernel *>(&bound);
    return index < 2 && other &&
           product_->shareConstantInput(index, *other->product_);
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

/// MatMulBias: the MatMul kernel, then y = act(y + bias) in place.
Status prepareMatMulBias(const Operands &in, const Operands &out,
                         const Attrs &attrs,
                         std::unique_ptr<PreparedKernel> &kernel) {
  MatMulBiasParams b;
  TPC_RETURN_IF_ERROR(makeMatMulBiasParams(in, out, attrs, b));
  const int actCode = int(b.activation);
  static const SgemmActivation acts[] = {
      SgemmActivation::None, SgemmActivation::Relu, SgemmActivation::Gelu,
      SgemmActivation::GeluTanh};
  if (b.dtype == DType::F32 || b.dtype == DType::BF16) {
    // The bias and activation run on the product's fp32 blocks, in the
    // thread that computed them (bf16: before the product's one rounding).
    MatMulParams p;
    TPC_RETURN_IF_ERROR(makeMatMulParams({in[0], in[1]}, out, p));
    const MatMulEpilogue e{2, acts[actCode]};
    kernel = b.dtype == DType::F32 ? makeMatMulF32Kernel(p, e)
                                   : makeMatMulBf16Kernel(p, e);
    return Status::ok();
  }
  const KernelDef *mm = lookupKernel("MatMul");
  std::unique_ptr<PreparedKernel> inner;
  TPC_RETURN_IF_ERROR(mm->prepare({in[0], in[1]}, out, Attrs(), inner));
  kernel = std::make_unique<MatMulBiasKernel>(std::move(inner), b.dtype, b.rows,
                                              b.n, actCode);
  return Status::ok();
}

/// `count` floats of `dtype` (f32, f16 or bf16) at `src` as f32 in `dst`.
void widenFloats(DType dtype, const void *src, int64_t count, float *dst) {
  if (dtype == DType::F32) {
    std::memcpy(dst, src, size_t(count) * sizeof(float));
    return;
  }
  visitFloat16(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S *s = static_cast<const S *>(src);
    for (int64_t i = 0; i < count; ++i)
      dst[i] = widen(s[i]);
  });
}

/// MatMulNBits on the block-quantized GEMM (QuantMatMul.h). An engine's
/// weight (codes, scales and zero points all bound) is repacked once for
/// the column-group kernel where one runs; otherwise each run reads the
/// operands as they are (scales and float zero points widened to f32).
/// 16-bit activations are widened on the way in and rounded once on the
/// way out.
class MatMulNBitsKernel final : public PreparedKernel {
public:
  explicit MatMulNBitsKernel(const MatMulNBitsParams &p) : p_(p) {}

  void bindConstantInput(size_t index, const void *data) override {
    if (index < 1 || index > 3)
      return;
    bound_[index - 1] = data;
    const bool needsZero = p_.zero != MatMulNBitsParams::Zero::Default;
    if (packed_ || !bound_[0] || !bound_[1] || (needsZero && !bound_[2]))
      return;
    std::vector<float> scales, zeros;
    BlockQuantWeight w = weightOf(bound_[0], bound_[1], bound_[2], scales,
                                  zeros);
    if (packedBlockQuantSupported(w))
      packed_ = std::make_shared<const PackedBlockQuant>(packBlockQuant(w));
  }

  /// The same step prepared for other run-time shapes shares the packing.
  bool shareConstantInput(size_t index, const PreparedKernel &bound) override {
    auto *other = dynamic_cast<const MatMulNBitsKernel *>(&bound);
    if (index < 1 || index > 3 || !other || !other->packed_ ||
        other->p_.n != p_.n || other->p_.k != p_.k ||
        other->p_.bits != p_.bits || other->p_.blockSize != p_.blockSize)
      return false;
    packed_ = other->packed_;
    return true;
  }

  void run(const void *const *i, void *const *o,
           const ExecContext &ctx) override {
    std::vector<float> scales, zeros;
    BlockQuantWeight w;
    if (!packed_)
      w = weightOf(i[1], i[2], p_.zero == MatMulNBitsParams::Zero::Default
                                   ? nullptr
                                   : i[3],
                   scales, zeros);
    const int64_t rows = p_.rows;
    auto product = [&](const float *a, float *y) {
      if (packed_)
        matmulBlockQuantPacked(a, rows, *packed_, y, ctx.numThreads);
      else
        matmulBlockQuant(a, rows, w, y, ctx.numThreads);
    };
    if (p_.dtype == DType::F32) {
      product(static_cast<const float *>(i[0]), static_cast<float *>(o[0]));
      return;
    }
    // The calling rank thread's buffers: allocated once, not per step.
    thread_local Scratch<float> aScratch, yScratch;
    float *a = aScratch.get(size_t(rows * p_.k));
    float *y = yScratch.get(size_t(rows * p_.n));
    widenFloats(p_.dtype, i[0], rows * p_.k, a);
    product(a, y);
    visitFloat16(p_.dtype, [&](auto tag) {
      using S = typename decltype(tag)::type;
      S *out = static_cast<S *>(o[0]);
      for (int64_t j = 0; j < rows * p_.n; ++j)
        out[j] = narrowTo<S>(y[j]);
    });
  }

private:
  /// The kernel's view of the operands: f32 scales and float zero points
  /// (a scalar repeated per block) widened into `scales` and `zeros` where
  /// they are stored otherwise; `zero` is null for the default.
  BlockQuantWeight weightOf(const void *codes, const void *scale,
                            const void *zero, std::vector<float> &scales,
                            std::vector<float> &zeros) const {
    const int64_t count = p_.n * p_.blocks;
    BlockQuantWeight w;
    w.n = p_.n;
    w.k = p_.k;
    w.blockSize = p_.blockSize;
    w.bits = p_.bits;
    w.codes = static_cast<const uint8_t *>(codes);
    if (p_.scaleType == DType::F32) {
      w.scales = static_cast<const float *>(scale);
    } else {
      scales.resize(size_t(count));
      widenFloats(p_.scaleType, scale, count, scales.data());
      w.scales = scales.data();
    }
    switch (p_.zero) {
    case MatMulNBitsParams::Zero::Default:
      break;
    case MatMulNBitsParams::Zero::Packed:
      w.zeroCodes = static_cast<const uint8_t *>(zero);
      break;
    case MatMulNBitsParams::Zero::PerBlock:
      zeros.resize(size_t(count));
      widenFloats(p_.zeroType, zero, count, zeros.data());
      w.zeroFloats = zeros.data();
      break;
    case MatMulNBitsParams::Zero::Scalar: {
      float z;
      widenFloats(p_.zeroType, zero, 1, &z);
      zeros.assign(size_t(count), z);
      w.zeroFloats = zeros.data();
      break;
    }
    }
    return w;
  }

  MatMulNBitsParams p_;
  /// Bound codes, scales and zero points (index 1, 2, 3 less one).
  const void *bound_[3] = {nullptr, nullptr, nullptr};
  std::shared_ptr<const PackedBlockQuant> packed_;
};

Status prepareMatMulNBits(const Operands &in, const Operands &out,
                          const Attrs &attrs,
                          std::unique_ptr<PreparedKernel> &kernel) {
  MatMulNBitsParams p;
  TPC_RETURN_IF_ERROR(makeMatMulNBitsParams(in, out, attrs, p));
  kernel = std::make_unique<MatMulNBitsKernel>(p);
  return Status::ok();
}

} // namespace

void addFusedKernels(KernelTable &t) {
  addFamily(
      t, kFusedKernels,
      {{FusedOp::MatMulBias, prepareMatMulBias},
       {FusedOp::AddNormalization, prepareWith<makeAddNormParams, runAddNorm>},
       {FusedOp::Attention, prepareWith<makeAttentionParams, runAttention>},
       {FusedOp::SwiGLU, prepareWith<makeSwiGLUParams, runSwiGLU>},
       {FusedOp::MatMulNBits, prepareMatMulNBits}});
}

} // namespace tpc::cpu
