//===- BgemmTest.cpp - bf16 products on AVX512-BF16 -----------------------===//
//
// bgemm against a double-precision reference of the same bf16 operands, at
// shapes that exercise the tile edges (rows and columns past 16, odd K),
// the single-row GEMV, alpha / beta * C0 and threads; then the bf16 MatMul
// and Gemm kernels with a bound weight against their widening path.
// Skipped, saying so, on CPUs without AVX512-BF16.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/cpu/Bgemm.h"
#include "kernels/cpu/Registry.h"

#include <cmath>

namespace tpc::cpu::test {
namespace {

#define REQUIRE_BF16()                                                         \
  if (!bgemmAvailable())                                                       \
  GTEST_SKIP() << "this CPU has no AVX512-BF16"

const uint16_t *bits(const Tensor &t) {
  return static_cast<const uint16_t *>(t.data());
}

/// Each result within one bf16 rounding (2^-8 relative) of the exact sum,
/// plus float accumulation error on the sum of magnitudes.
void expectNearExact(const Tensor &got, const std::vector<double> &want,
                     const std::vector<double> &mag) {
  ASSERT_EQ(got.numel(), int64_t(want.size()));
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.at(i), want[i],
                0x1p-8 * std::fabs(want[i]) + 1e-6 * mag[size_t(i)] + 1e-30)
        << "element " << i;
}

TEST(Bgemm, MatchesTheExactProduct) {
  REQUIRE_BF16();
  struct Case {
    int64_t m, k, n;
    bool trans;
  };
  const Case cases[] = {{1, 1, 1, false},    {1, 64, 100, false},
                        {1, 129, 33, true},  {3, 7, 15, false},
                        {16, 64, 16, false}, {17, 130, 47, true},
                        {37, 255, 64, false}, {64, 768, 96, false},
                        {5, 0, 20, false}};
  uint64_t seed = 7;
  for (const Case &c : cases)
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
                   std::to_string(c.n) + (c.trans ? " transB" : "") + " on " +
                   std::to_string(threads) + " threads");
      Tensor a = randomTensor(DType::BF16, {c.m, c.k}, seed++, -2, 2);
      Shape bs = c.trans ? Shape{c.n, c.k} : Shape{c.k, c.n};
      Tensor b = randomTensor(DType::BF16, bs, seed++, -2, 2);
      Tensor c0 = randomTensor(DType::BF16, {c.n}, seed++, -2, 2);
      PackedBf16 packed;
      packed.pack(bits(b), c.k, c.n, c.trans ? c.k : c.n, c.trans);
      Tensor y(DType::BF16, {c.m, c.n});
      BgemmArgs g;
      g.m = c.m;
      g.a = bits(a);
      g.lda = c.k;
      g.b = &packed;
      g.c = static_cast<uint16_t *>(y.data());
      g.ldc = c.n;
      g.alpha = 0.5f;
      g.c0 = bits(c0); // a row vector: bias broadcast over the rows
      g.c0Row = 0;
      g.c0Col = 1;
      g.beta = 2.0f;
      bgemm(g, threads);
      std::vector<double> want, mag;
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j) {
          double s = 0, s1 = 0;
          for (int64_t p = 0; p < c.k; ++p) {
            double bv = c.trans ? b.at(j * c.k + p) : b.at(p * c.n + j);
            s += a.at(i * c.k + p) * bv;
            s1 += std::fabs(a.at(i * c.k + p) * bv);
          }
          want.push_back(0.5 * s + 2.0 * c0.at(j));
          mag.push_back(s1);
        }
      expectNearExact(y, want, mag);
    }
}

/// Runs `name` with input 1 bound as the engine's weight, as a loaded
/// engine does.
Tensor runBound(const std::string &name, const std::vector<const Tensor *> &in,
                const TensorDesc &out, const Attrs &attrs = {}) {
  std::vector<TensorDesc> descs;
  for (const Tensor *t : in)
    descs.push_back(t->desc);
  std::unique_ptr<PreparedKernel> k;
  Status st = lookupKernel(name)->prepare(descs, {out}, attrs, k);
  EXPECT_TRUE(st.isOk()) << st.message();
  k->bindConstantInput(1, in[1]->data());
  Tensor y(out.dtype, out.shape);
  std::vector<const void *> ins;
  for (const Tensor *t : in)
    ins.push_back(t->data());
  void *outs[] = {y.data()};
  ExecContext ctx;
  ctx.numThreads = 2;
  k->run(ins.data(), outs, ctx);
  return y;
}

TEST(Bgemm, KernelsAgreeWithTheWideningPath) {
  REQUIRE_BF16();
  Tensor a = randomTensor(DType::BF16, {2, 9, 96}, 1, -1, 1);
  Tensor w = randomTensor(DType::BF16, {96, 70}, 2, -1, 1);
  Tensor wt = randomTensor(DType::BF16, {70, 96}, 3, -1, 1);
  Tensor a2 = randomTensor(DType::BF16, {9, 96}, 4, -1, 1);
  Tensor bias = randomTensor(DType::BF16, {70}, 5, -1, 1);
  const Attrs gemm = gemmAttrs(0, 1, 0.75, -1.5);
  const TensorDesc mmOut{DType::BF16, {2, 9, 70}}, gOut{DType::BF16, {9, 70}};
  Tensor fast = runBound("MatMul", {&a, &w}, mmOut);
  Tensor fastG = runBound("Gemm", {&a2, &wt, &bias}, gOut, gemm);
  bgemmForceOff(true);
  Tensor slow = runBound("MatMul", {&a, &w}, mmOut);
  Tensor slowG = runBound("Gemm", {&a2, &wt, &bias}, gOut, gemm);
  bgemmForceOff(false);
  // Both accumulate in float and round once; only the summation order
  // differs, so the results are within one bf16 rounding of each other.
  expectClose(fast, slow.values(), 0x1p-7, 1e-6);
  expectClose(fastG, slowG.values(), 0x1p-7, 1e-6);
}

} // namespace
} // namespace tpc::cpu::test
