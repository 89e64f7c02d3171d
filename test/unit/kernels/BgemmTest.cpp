//===- BgemmTest.cpp - bf16 products on AMX and AVX512-BF16 ---------------===//
//
// Each bf16 kernel this CPU runs (forced in turn; the others skip, saying
// so) against a double-precision reference of the same bf16 operands, at
// shapes that exercise the tile edges (rows past 16 and 32, odd panel
// counts, K not a multiple of 2 or 32, K = 0), the single-row GEMV, alpha /
// beta * C0 (broadcast and strided), the bias + activation epilogue and
// threads; then the bf16 MatMul, Gemm and MatMulBias kernels with a bound
// weight against their widening path.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/cpu/Bgemm.h"
#include "kernels/cpu/Registry.h"

#include <cmath>

namespace tpc::cpu::test {
namespace {

const uint16_t *bits(const Tensor &t) {
  return static_cast<const uint16_t *>(t.data());
}

/// Each result within one bf16 rounding (2^-8 relative) of the exact
/// value, plus float accumulation error on the sum of magnitudes.
void expectNearExact(const Tensor &got, const std::vector<double> &want,
                     const std::vector<double> &mag) {
  ASSERT_EQ(got.numel(), int64_t(want.size()));
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.at(i), want[i],
                0x1p-8 * std::fabs(want[i]) + 1e-6 * mag[size_t(i)] + 1e-30)
        << "element " << i;
}

double geluExact(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

class BgemmKernelTest : public ::testing::TestWithParam<BgemmKernel> {
protected:
  void SetUp() override {
    saved_ = bgemmKernel();
    if (!bgemmUseKernel(GetParam()))
      GTEST_SKIP() << "this CPU cannot run the " << bgemmKernelName(GetParam())
                   << " kernel";
  }
  void TearDown() override { (void)bgemmUseKernel(saved_); }

private:
  BgemmKernel saved_ = BgemmKernel::Widening;
};

struct Case {
  int64_t m, k, n;
  bool trans;
};

/// bgemm of case `c` with alpha 0.5 and the given C0 / bias / activation,
/// against the double reference.
void checkProduct(const Case &c, int threads, bool matrixC0, bool bias,
                  SgemmActivation act, uint64_t &seed) {
  SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
               std::to_string(c.n) + (c.trans ? " transB" : "") + " on " +
               std::to_string(threads) + " threads" +
               (matrixC0 ? ", C0 a transposed matrix" : ", C0 a row") +
               (bias ? ", bias" : "") + ", act " + std::to_string(int(act)));
  Tensor a = randomTensor(DType::BF16, {c.m, c.k}, seed++, -2, 2);
  Shape bs = c.trans ? Shape{c.n, c.k} : Shape{c.k, c.n};
  Tensor b = randomTensor(DType::BF16, bs, seed++, -2, 2);
  // A matrix C0 is read transposed ([n, m], strides 1 and m), a row one
  // broadcast over the rows (strides 0 and 1).
  Tensor c0 = matrixC0 ? randomTensor(DType::BF16, {c.n, c.m}, seed++, -2, 2)
                       : randomTensor(DType::BF16, {c.n}, seed++, -2, 2);
  Tensor biasT = randomTensor(DType::BF16, {c.n}, seed++, -2, 2);
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
  g.c0 = bits(c0);
  g.c0Row = matrixC0 ? 1 : 0;
  g.c0Col = matrixC0 ? c.m : 1;
  g.beta = 2.0f;
  g.bias = bias ? bits(biasT) : nullptr;
  g.act = act;
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
      double v = 0.5 * s + 2.0 * c0.at(matrixC0 ? j * c.m + i : j);
      if (bias)
        v += biasT.at(j);
      if (act == SgemmActivation::Relu)
        v = std::max(v, 0.0);
      else if (act == SgemmActivation::Gelu)
        v = geluExact(v);
      want.push_back(v);
      mag.push_back(s1 + 8);
    }
  expectNearExact(y, want, mag);
}

TEST_P(BgemmKernelTest, MatchesTheExactProduct) {
  const Case cases[] = {{1, 1, 1, false},     {1, 64, 100, false},
                        {1, 129, 33, true},   {2, 32, 16, false},
                        {3, 7, 15, false},    {16, 64, 16, false},
                        {17, 130, 47, true},  {32, 96, 32, false},
                        {37, 255, 64, false}, {48, 64, 48, true},
                        {64, 768, 96, false}, {70, 33, 80, false},
                        {5, 0, 20, false},
                        // More rows than one L2 block of A (AMX).
                        {690, 1024, 17, false}};
  uint64_t seed = 7;
  for (const Case &c : cases)
    for (int threads : {1, 2})
      checkProduct(c, threads, false, false, SgemmActivation::None, seed);
}

TEST_P(BgemmKernelTest, EpilogueAndStridedC0) {
  uint64_t seed = 100;
  for (SgemmActivation act : {SgemmActivation::None, SgemmActivation::Relu,
                              SgemmActivation::Gelu})
    for (const Case &c : {Case{1, 40, 50, false}, Case{35, 64, 40, false},
                          Case{19, 45, 33, true}}) {
      checkProduct(c, 2, false, true, act, seed);
      checkProduct(c, 1, true, false, act, seed);
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

TEST_P(BgemmKernelTest, KernelsAgreeWithTheWideningPath) {
  Tensor a = randomTensor(DType::BF16, {2, 9, 96}, 1, -1, 1);
  Tensor w = randomTensor(DType::BF16, {96, 70}, 2, -1, 1);
  Tensor wt = randomTensor(DType::BF16, {70, 96}, 3, -1, 1);
  Tensor a2 = randomTensor(DType::BF16, {9, 96}, 4, -1, 1);
  Tensor bias = randomTensor(DType::BF16, {70}, 5, -1, 1);
  const Attrs gemm = gemmAttrs(0, 1, 0.75, -1.5);
  Attrs gelu;
  gelu.setString("activation", "gelu");
  const TensorDesc mmOut{DType::BF16, {2, 9, 70}}, gOut{DType::BF16, {9, 70}};
  Tensor fast = runBound("MatMul", {&a, &w}, mmOut);
  Tensor fastG = runBound("Gemm", {&a2, &wt, &bias}, gOut, gemm);
  Tensor fastB = runBound("MatMulBias", {&a, &w, &bias}, mmOut, gelu);
  const BgemmKernel kernel = bgemmKernel();
  ASSERT_TRUE(bgemmUseKernel(BgemmKernel::Widening));
  Tensor slow = runBound("MatMul", {&a, &w}, mmOut);
  Tensor slowG = runBound("Gemm", {&a2, &wt, &bias}, gOut, gemm);
  Tensor slowB = runBound("MatMulBias", {&a, &w, &bias}, mmOut, gelu);
  ASSERT_TRUE(bgemmUseKernel(kernel));
  // Both accumulate in float and round once; only the summation order
  // differs, so the results are within one bf16 rounding of each other.
  // The widening MatMulBias rounds the product before the bias: two.
  expectClose(fast, slow.values(), 0x1p-7, 1e-6);
  expectClose(fastG, slowG.values(), 0x1p-7, 1e-6);
  expectClose(fastB, slowB.values(), 0x1p-6, 1e-2);
}

INSTANTIATE_TEST_SUITE_P(Kernels, BgemmKernelTest,
                         ::testing::Values(BgemmKernel::AmxBf16,
                                           BgemmKernel::Avx512Bf16),
                         [](const auto &info) {
                           std::string n = bgemmKernelName(info.param);
                           for (char &ch : n)
                             if (ch == '-')
                               ch = '_';
                           return n;
                         });

TEST(Bgemm, KernelChoice) {
  const std::vector<BgemmKernel> all = bgemmAvailableKernels();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back(), BgemmKernel::Widening);
  EXPECT_EQ(bgemmKernel(), all.front());
  EXPECT_EQ(bgemmAvailable(), all.front() != BgemmKernel::Widening);
}

} // namespace
} // namespace tpc::cpu::test
