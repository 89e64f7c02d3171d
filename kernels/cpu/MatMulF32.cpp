//===- MatMulF32.cpp - fp32 MatMul and Gemm on tpc's sgemm ----------------===//
//
// The fp32 products run on Sgemm.h rather than a BLAS: a weight operand is
// packed once when the engine binds it (bindConstantInput), and speed does
// not depend on which micro-kernel a BLAS library picks for the host.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/MatMul.h"
#include "kernels/cpu/Parallel.h"
#include "kernels/cpu/Sgemm.h"

#include <algorithm>
#include <array>
#include <memory>

namespace tpc::cpu {
namespace {

class MatMulF32 final
    : public PackedMatMulKernel<MatMulF32, PackedMatrix, float> {
public:
  using PackedMatMulKernel::PackedMatMulKernel;

  bool packsWeight() const { return sharesWeight(); }

  void run(const void *const *in, void *const *out,
           const ExecContext &ctx) override {
    const float *a = static_cast<const float *>(in[0]);
    const float *b = static_cast<const float *>(in[1]);
    float *y = static_cast<float *>(out[0]);
    auto one = [&](const ProductOffsets &o, int threads) {
      SgemmArgs g;
      g.m = rows_;
      g.n = p_.n;
      g.k = p_.k;
      g.a = a + o[1];
      g.lda = p_.k;
      if (!packed_) {
        g.b = b + o[2];
        g.ldb = p_.n;
      } else {
        g.packedB = packed_.get();
      }
      g.c = y + o[0];
      g.ldc = p_.n;
      g.bias = bias<float>(in);
      g.act = epilogue_.act;
      sgemm(g, threads);
    };
    const int threads = std::max(1, ctx.numThreads);
    const int64_t count = int64_t(offsets_.size());
    if (threads > 1 && count >= threads) {
      // Many small products (attention heads): one thread per product.
      parallelSlices(threads, count, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i)
          one(offsets_[size_t(i)], 1);
      });
      return;
    }
    for (const ProductOffsets &o : offsets_)
      one(o, threads);
  }
};

class GemmF32 final
    : public PackedWeightKernel<GemmF32, GemmParams, PackedMatrix, float> {
public:
  using PackedWeightKernel::PackedWeightKernel;

  bool packsWeight() const { return p_.k > 0 && p_.n > 0; }

  void run(const void *const *in, void *const *out,
           const ExecContext &ctx) override {
    const float *c = p_.hasC ? static_cast<const float *>(in[2]) : nullptr;
    float *y = static_cast<float *>(out[0]);
    SgemmArgs g;
    if (c && p_.beta != 0) {
      // A bias (one value per column, beta 1) is the epilogue; any other C
      // seeds the output, each thread its own columns.
      if (p_.beta == 1 && p_.cRowStride == 0 && p_.cColStride == 1) {
        g.bias = c;
      } else {
        g.seed = c;
        g.seedRowStride = p_.cRowStride;
        g.seedColStride = p_.cColStride;
        g.beta = float(p_.beta);
      }
    }
    g.m = p_.m;
    g.n = p_.n;
    g.k = p_.k;
    g.a = static_cast<const float *>(in[0]);
    g.lda = p_.transA ? p_.m : p_.k;
    g.transA = p_.transA;
    if (!packed_) {
      g.b = static_cast<const float *>(in[1]);
      g.ldb = p_.transB ? p_.k : p_.n;
      g.transB = p_.transB;
    } else {
      g.packedB = packed_.get();
    }
    g.c = y;
    g.ldc = p_.n;
    g.alpha = float(p_.alpha);
    sgemm(g, std::max(1, ctx.numThreads));
  }
};

} // namespace

std::unique_ptr<PreparedKernel>
makeMatMulF32Kernel(const MatMulParams &p, const MatMulEpilogue &epilogue) {
  return std::make_unique<MatMulF32>(p, epilogue);
}

std::unique_ptr<PreparedKernel> makeGemmF32Kernel(const GemmParams &p) {
  return std::make_unique<GemmF32>(p);
}

} // namespace tpc::cpu
