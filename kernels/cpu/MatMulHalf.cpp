//===- MatMulHalf.cpp - Matrix products of 16-bit floats ------------------===//
//
// A is widened to float once per product and B one panel of columns at a
// time, so the float copy of a large weight never exists whole; each panel
// is multiplied by the f32 GEMM (gemmKernel) and its results rounded once.
// The float buffers are per thread and grow to the largest product once,
// so steady-state runs do not allocate.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/MatMulHalf.h"
#include "kernels/cpu/Bgemm.h"
#include "kernels/cpu/Convert.h"

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

namespace tpc::cpu {
namespace {

struct Scratch {
  std::vector<float> a, b, c;
};

Scratch &scratch() {
  thread_local Scratch s;
  return s;
}

/// y = act(y + bias) in place over `rows` rows of n bf16 values, in fp32.
void biasActivationBf16(uint16_t *y, const uint16_t *bias, int64_t rows,
                        int64_t n, SgemmActivation act) {
  std::vector<float> &row = scratch().c;
  row.resize(size_t(n));
  for (int64_t r = 0; r < rows; ++r, y += n) {
    for (int64_t j = 0; j < n; ++j)
      row[size_t(j)] = bfloat16ToFloat(BFloat16{y[j]}) +
                       bfloat16ToFloat(BFloat16{bias[j]});
    applyActivation(act, row.data(), n);
    for (int64_t j = 0; j < n; ++j)
      y[j] = floatToBFloat16(row[size_t(j)]).bits;
  }
}

float *grow(std::vector<float> &v, int64_t n) {
  if (v.size() < static_cast<size_t>(n))
    v.resize(static_cast<size_t>(n));
  return v.data();
}

/// Columns of B per panel: about 1 MiB of widened floats, at least 16.
int64_t panelCols(int64_t k, int64_t n) {
  const int64_t cols = std::max<int64_t>(16, (int64_t(1) << 18) /
                                                 std::max<int64_t>(1, k));
  return std::min(n, cols);
}

/// Widens `rows` x `cols` elements (row stride `ld`) into dense `dst`.
template <class S>
void widenBlock(const S *src, int64_t rows, int64_t cols, int64_t ld,
                float *dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dst[r * cols + c] = widen(src[r * ld + c]);
}

/// y = alpha * op(A) op(B) + beta * C of 16-bit matrices. C, when present,
/// is read with the strides of `p`.
template <class S>
void gemm16(const GemmParams &p, const S *a, const S *b, const S *c, S *y,
            int numThreads) {
  if (p.m == 0 || p.n == 0)
    return;
  Scratch &s = scratch();
  float *af = grow(s.a, p.m * p.k);
  widenBlock(a, p.transA ? p.k : p.m, p.transA ? p.m : p.k,
             p.transA ? p.m : p.k, af);
  const int64_t nb = panelCols(p.k, p.n);
  float *bf = grow(s.b, p.k * nb);
  float *cf = grow(s.c, p.m * nb);
  const bool addC = c && p.hasC && p.beta != 0;
  const float beta = static_cast<float>(p.beta);
  for (int64_t j0 = 0; j0 < p.n; j0 += nb) {
    const int64_t w = std::min(nb, p.n - j0);
    // The panel of op(B) holds columns [j0, j0 + w): rows of B when it is
    // transposed, a column block otherwise.
    if (p.transB)
      widenBlock(b + j0 * p.k, w, p.k, p.k, bf);
    else
      widenBlock(b + j0, p.k, w, p.n, bf);
    GemmParams f;
    f.dtype = DType::F32;
    f.m = p.m;
    f.n = w;
    f.k = p.k;
    f.transA = p.transA;
    f.transB = p.transB;
    f.alpha = p.alpha;
    f.beta = 0.0;
    gemmKernel(f, af, bf, nullptr, cf, numThreads);
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < w; ++j) {
        float v = cf[i * w + j];
        if (addC)
          v += beta * widen(c[i * p.cRowStride + (j0 + j) * p.cColStride]);
        y[i * p.n + j0 + j] = narrowTo<S>(v);
      }
  }
}

/// One dense [rows, k] x [k, n] product.
template <class S>
void matMul16(const S *a, const S *b, S *y, int64_t rows, int64_t n,
              int64_t k, int numThreads) {
  GemmParams g;
  g.m = rows;
  g.n = n;
  g.k = k;
  gemm16(g, a, b, static_cast<const S *>(nullptr), y, numThreads);
}

template <class S>
void matMulTyped16(const MatMulParams &p, const S *a, const S *b, S *y,
                   int numThreads) {
  forEachProduct(p, [&](const ProductOffsets &o, int64_t rows) {
    matMul16(a + o[1], b + o[2], y + o[0], rows, p.n, p.k, numThreads);
  });
}

/// bf16 MatMul: a packed weight on the bf16 product, else widening. With
/// an epilogue (MatMulBias), the bias and activation run on the product's
/// fp32 tiles before its one rounding.
class MatMulBf16 final
    : public PackedMatMulKernel<MatMulBf16, PackedBf16, uint16_t> {
public:
  using PackedMatMulKernel::PackedMatMulKernel;

  bool packsWeight() const { return sharesWeight() && bgemmAvailable(); }

  void run(const void *const *in, void *const *out,
           const ExecContext &ctx) override {
    if (!packed_ || !bgemmAvailable()) {
      matMulHalfKernel(p_, in[0], in[1], out[0], ctx.numThreads);
      if (epilogue_.biasInput >= 0)
        biasActivationBf16(static_cast<uint16_t *>(out[0]),
                           static_cast<const uint16_t *>(
                               in[epilogue_.biasInput]),
                           p_.batch.numel * p_.m, p_.n, epilogue_.act);
      return;
    }
    const uint16_t *a = static_cast<const uint16_t *>(in[0]);
    uint16_t *y = static_cast<uint16_t *>(out[0]);
    for (const ProductOffsets &o : offsets_) {
      BgemmArgs g;
      g.m = rows_;
      g.a = a + o[1];
      g.lda = p_.k;
      g.b = packed_.get();
      g.c = y + o[0];
      g.ldc = p_.n;
      g.bias = bias<uint16_t>(in);
      g.act = epilogue_.act;
      bgemm(g, std::max(1, ctx.numThreads));
    }
  }
};

/// bf16 Gemm: a packed weight and an untransposed A on the bf16 product.
class GemmBf16 final
    : public PackedWeightKernel<GemmBf16, GemmParams, PackedBf16, uint16_t> {
public:
  using PackedWeightKernel::PackedWeightKernel;

  bool packsWeight() const {
    return !p_.transA && p_.k > 0 && p_.n > 0 && bgemmAvailable();
  }

  void run(const void *const *in, void *const *out,
           const ExecContext &ctx) override {
    const void *c = p_.hasC ? in[2] : nullptr;
    if (!packed_ || !bgemmAvailable())
      return gemmHalfKernel(p_, in[0], in[1], c, out[0], ctx.numThreads);
    BgemmArgs g;
    g.m = p_.m;
    g.a = static_cast<const uint16_t *>(in[0]);
    g.lda = p_.k;
    g.b = packed_.get();
    g.c = static_cast<uint16_t *>(out[0]);
    g.ldc = p_.n;
    g.alpha = float(p_.alpha);
    if (c && p_.beta != 0) {
      g.c0 = static_cast<const uint16_t *>(c);
      g.c0Row = p_.cRowStride;
      g.c0Col = p_.cColStride;
      g.beta = float(p_.beta);
    }
    bgemm(g, std::max(1, ctx.numThreads));
  }
};

} // namespace

std::unique_ptr<PreparedKernel>
makeMatMulBf16Kernel(const MatMulParams &p, const MatMulEpilogue &epilogue) {
  return std::make_unique<MatMulBf16>(p, epilogue);
}

std::unique_ptr<PreparedKernel> makeGemmBf16Kernel(const GemmParams &p) {
  return std::make_unique<GemmBf16>(p);
}

void matMulHalfKernel(const MatMulParams &p, const void *a, const void *b,
                      void *y, int numThreads) {
  visitFloat16(p.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    matMulTyped16(p, static_cast<const S *>(a), static_cast<const S *>(b),
                  static_cast<S *>(y), numThreads);
  });
}

void gemmHalfKernel(const GemmParams &p, const void *a, const void *b,
                    const void *c, void *y, int numThreads) {
  visitFloat16(p.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    gemm16(p, static_cast<const S *>(a), static_cast<const S *>(b),
           static_cast<const S *>(c), static_cast<S *>(y), numThreads);
  });
}

} // namespace tpc::cpu
