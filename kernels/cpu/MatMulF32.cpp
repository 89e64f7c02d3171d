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
    : public PackedWeightKernel<MatMulF32, PackedMatrix, float> {
public:
  MatMulF32(const MatMulParams &p, const MatMulEpilogue &e)
      : p_(p), epilogue_(e), offsets_(matMulOffsets(p)),
        bShared_(sharesB(offsets_)) {}

  bool packsWeight() const { return bShared_ && p_.k > 0 && p_.n > 0; }
  WeightLayout weight() const { return {p_.k, p_.n, p_.n, false}; }

  void run(const void *const *in, void *const *out,
           const ExecContext &ctx) override {
    const float *a = static_cast<const float *>(in[0]);
    const float *b = static_cast<const float *>(in[1]);
    float *y = static_cast<float *>(out[0]);
    const int64_t rows = p_.foldBatch ? p_.m * p_.batch.numel : p_.m;
    auto one = [&](const std::array<int64_t, 3> &o, int threads) {
      SgemmArgs g;
      g.m = rows;
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
      if (epilogue_.biasInput >= 0)
        g.bias = static_cast<const float *>(in[epilogue_.biasInput]);
      g.act = epilogue_.act;
      sgemm(g, threads);
    };
    const int threads = std::max(1, ctx.numThreads);
    const int64_t count = int64_t(offsets_.size());
    if (threads > 1 && count >= threads) {
      // Many small products (attention heads): one thread per product.
      parallelRun(threads, [&](int t, int parts) {
        int64_t lo, hi;
        splitRange(count, t, parts, 1, lo, hi);
        for (int64_t i = lo; i < hi; ++i)
          one(offsets_[size_t(i)], 1);
      });
      return;
    }
    for (const std::array<int64_t, 3> &o : offsets_)
      one(o, threads);
  }

private:
  MatMulParams p_;
  MatMulEpilogue epilogue_;
  std::vector<std::array<int64_t, 3>> offsets_;
  bool bShared_ = false;
};

class GemmF32 final : public PackedWeightKernel<GemmF32, PackedMatrix, float> {
public:
  explicit GemmF32(const GemmParams &p) : p_(p) {}

  bool packsWeight() const { return p_.k > 0 && p_.n > 0; }
  WeightLayout weight() const {
    return {p_.k, p_.n, p_.transB ? p_.k : p_.n, p_.transB};
  }

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

private:
  GemmParams p_;
};

} // namespace

std::vector<std::array<int64_t, 3>> matMulOffsets(const MatMulParams &p) {
  std::vector<std::array<int64_t, 3>> offsets;
  if (p.foldBatch) {
    offsets.push_back({0, 0, 0});
    return offsets;
  }
  const int last = p.batch.rank - 1;
  forEachRow(p.batch, [&](const int64_t *off) {
    for (int64_t i = 0; i < p.batch.shape[last]; ++i)
      offsets.push_back({off[0] + i * p.batch.strides[0][last],
                         off[1] + i * p.batch.strides[1][last],
                         off[2] + i * p.batch.strides[2][last]});
  });
  return offsets;
}

bool sharesB(const std::vector<std::array<int64_t, 3>> &offsets) {
  return std::all_of(offsets.begin(), offsets.end(),
                     [](const std::array<int64_t, 3> &o) { return o[2] == 0; });
}

std::unique_ptr<PreparedKernel>
makeMatMulF32Kernel(const MatMulParams &p, const MatMulEpilogue &epilogue) {
  return std::make_unique<MatMulF32>(p, epilogue);
}

std::unique_ptr<PreparedKernel> makeGemmF32Kernel(const GemmParams &p) {
  return std::make_unique<GemmF32>(p);
}

} // namespace tpc::cpu
