//===- SgemmTest.cpp - tpc's fp32 GEMM against a double reference ---------===//
#include "kernels/cpu/Parallel.h"
#include "kernels/cpu/Sgemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace tpc::cpu;

namespace {

std::vector<float> randomFloats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(gen);
  return v;
}

/// How C is seeded before the product.
enum class Seed { None, Matrix, PerRow, PerColumn };

struct Case {
  int64_t m, n, k;
  bool transA, transB, packed, accumulate;
  float alpha;
  int threads;
  Seed seed = Seed::None;
  float beta = 1.0f;
  bool bias = false;
  SgemmActivation act = SgemmActivation::None;
};

double activate(SgemmActivation act, double x) {
  switch (act) {
  case SgemmActivation::None:
    return x;
  case SgemmActivation::Relu:
    return x < 0 ? 0 : x;
  case SgemmActivation::Gelu:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case SgemmActivation::GeluTanh:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return x;
}

std::string describe(const Case &c) {
  return "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
         " k=" + std::to_string(c.k) + (c.transA ? " tA" : "") +
         (c.transB ? " tB" : "") + (c.packed ? " packed" : "") +
         (c.accumulate ? " acc" : "") + " alpha=" + std::to_string(c.alpha) +
         " threads=" + std::to_string(c.threads) +
         " seed=" + std::to_string(int(c.seed)) +
         " beta=" + std::to_string(c.beta) + (c.bias ? " bias" : "") +
         " act=" + std::to_string(int(c.act));
}

void check(const Case &c) {
  SCOPED_TRACE(describe(c));
  // Padded leading dimensions, so that strides are really used.
  const int64_t lda = (c.transA ? c.m : c.k) + 3;
  const int64_t ldb = (c.transB ? c.k : c.n) + 5;
  const int64_t ldc = c.n + 2;
  std::vector<float> a = randomFloats(size_t((c.transA ? c.k : c.m) * lda), 1);
  std::vector<float> b = randomFloats(size_t((c.transB ? c.n : c.k) * ldb), 2);
  std::vector<float> y = randomFloats(size_t(c.m * ldc), 3);
  const std::vector<float> y0 = y;
  // The seed as a padded [m, n] matrix; per row or column reads it with a
  // zero stride.
  const int64_t lds = c.n + 1;
  const std::vector<float> seed = randomFloats(size_t(c.m * lds), 4);
  const std::vector<float> bias = randomFloats(size_t(c.n), 5);
  const int64_t seedRow = c.seed == Seed::PerColumn ? 0 : lds;
  const int64_t seedCol = c.seed == Seed::PerRow ? 0 : 1;
  SgemmArgs g;
  g.m = c.m;
  g.n = c.n;
  g.k = c.k;
  g.a = a.data();
  g.lda = lda;
  g.transA = c.transA;
  PackedMatrix packed;
  if (c.packed) {
    packed.pack(b.data(), c.k, c.n, ldb, c.transB);
    g.packedB = &packed;
  } else {
    g.b = b.data();
    g.ldb = ldb;
    g.transB = c.transB;
  }
  g.c = y.data();
  g.ldc = ldc;
  g.alpha = c.alpha;
  g.accumulate = c.accumulate;
  if (c.seed != Seed::None) {
    g.seed = seed.data();
    g.seedRowStride = seedRow;
    g.seedColStride = seedCol;
    g.beta = c.beta;
  }
  if (c.bias)
    g.bias = bias.data();
  g.act = c.act;
  sgemm(g, c.threads);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = y[size_t(i * ldc + j)];
      const float old = y0[size_t(i * ldc + j)];
      if (j >= c.n) {
        ASSERT_EQ(got, old) << "wrote past n at (" << i << ", " << j << ")";
        continue;
      }
      double want = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        double av = c.transA ? a[size_t(p * lda + i)] : a[size_t(i * lda + p)];
        double bv = c.transB ? b[size_t(j * ldb + p)] : b[size_t(p * ldb + j)];
        want += av * bv;
      }
      const double start =
          c.seed != Seed::None
              ? c.beta * double(seed[size_t(i * seedRow + j * seedCol)])
              : (c.accumulate ? old : 0.0);
      want = c.alpha * want + start + (c.bias ? bias[size_t(j)] : 0.0);
      want = activate(c.act, want);
      // fp32 accumulation over k terms of magnitude <= 1.
      const double tol = 1e-6 * (8.0 + double(c.k));
      ASSERT_NEAR(got, want, tol) << "at (" << i << ", " << j << ")";
    }
  }
}

} // namespace

/// Every micro-kernel this CPU runs (AVX-512, AVX2, generic), each forced in
/// turn, against the double reference: the paths a machine does not have
/// are skipped, and say so.
class SgemmKernel : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    saved_ = sgemmKernelName();
    if (!sgemmUseKernel(GetParam()))
      GTEST_SKIP() << "this CPU cannot run the " << GetParam()
                   << " micro-kernel";
  }
  void TearDown() override { (void)sgemmUseKernel(saved_); }

private:
  const char *saved_ = nullptr;
};

TEST_P(SgemmKernel, MatchesDoubleReference) {
  // Edges in every dimension: m a multiple of a tile height (6, 14) or
  // not, past the M block (150); n a multiple of one or two panels or
  // neither (an odd panel left at the end); k not a multiple of the K
  // block, and one row.
  const int64_t ms[] = {1, 5, 6, 13, 14, 16, 28, 33, 150};
  const int64_t ns[] = {1, 16, 32, 37, 48, 100};
  const int64_t ks[] = {1, 7, 300};
  for (int64_t m : ms)
    for (int64_t n : ns)
      for (int64_t k : ks)
        for (int variant = 0; variant < 4; ++variant) {
          Case c{m, n, k, bool(variant & 1), bool(variant & 2), false, false,
                 1.0f, 1};
          check(c);
          c.packed = true;
          check(c);
        }
}

TEST_P(SgemmKernel, AlphaAccumulateAndThreads) {
  for (int threads : {1, 2, 3})
    for (bool packed : {false, true})
      for (bool acc : {false, true}) {
        check({1, 130, 70, false, true, packed, acc, 0.5f, threads});
        check({77, 200, 513, true, false, packed, acc, -2.0f, threads});
        // Several K blocks, the last one shorter.
        check({9, 40, 1700, false, false, packed, acc, 1.0f, threads});
        // Several M blocks of every tile height.
        check({300, 48, 65, false, false, packed, acc, 1.0f, threads});
      }
}

TEST_P(SgemmKernel, SeedBiasAndActivation) {
  // Each seed form (ignoring accumulate), a bias, each activation; one
  // row (the GEMV path), several K and M blocks, and threads.
  const SgemmActivation acts[] = {SgemmActivation::None, SgemmActivation::Relu,
                                  SgemmActivation::Gelu,
                                  SgemmActivation::GeluTanh};
  for (int threads : {1, 2})
    for (bool packed : {false, true})
      for (Seed seed :
           {Seed::None, Seed::Matrix, Seed::PerRow, Seed::PerColumn})
        for (SgemmActivation act : acts)
          for (bool bias : {false, true}) {
            Case shapes[] = {{1, 130, 70, false, true, packed, true, 0.5f, threads},
                             {37, 100, 900, false, false, packed, true, 1.0f,
                              threads},
                             {300, 48, 65, true, false, packed, false, -1.0f,
                              threads}};
            for (Case c : shapes) {
              c.seed = seed;
              c.beta = seed == Seed::None ? 1.0f : -0.75f;
              c.bias = bias;
              c.act = act;
              check(c);
            }
          }
}

INSTANTIATE_TEST_SUITE_P(Kernels, SgemmKernel,
                         ::testing::Values("avx512f", "avx2-fma", "generic"),
                         [](const auto &info) {
                           std::string n = info.param;
                           for (char &ch : n)
                             if (ch == '-')
                               ch = '_';
                           return n;
                         });

TEST(Sgemm, FastestKernelIsTheDefault) {
  std::vector<const char *> all = sgemmAvailableKernels();
  ASSERT_FALSE(all.empty());
  EXPECT_STREQ(all.back(), "generic");
  EXPECT_STREQ(sgemmKernelName(), all.front());
  EXPECT_FALSE(sgemmUseKernel("no-such-kernel"));
  EXPECT_STREQ(sgemmKernelName(), all.front());
}

TEST(Sgemm, ZeroK) {
  std::vector<float> y(6, 7.0f);
  SgemmArgs g;
  g.m = 2;
  g.n = 3;
  g.k = 0;
  g.c = y.data();
  g.ldc = 3;
  sgemm(g, 1);
  for (float v : y)
    EXPECT_EQ(v, 0.0f);
  std::fill(y.begin(), y.end(), 7.0f);
  g.accumulate = true;
  sgemm(g, 2);
  for (float v : y)
    EXPECT_EQ(v, 7.0f);
  // An empty sum is the seed, then the epilogue.
  const float seed[3] = {1.0f, -2.0f, 3.0f}, bias[3] = {0.5f, 0.5f, -4.0f};
  g.seed = seed;
  g.seedColStride = 1;
  g.beta = 2.0f;
  g.bias = bias;
  g.act = SgemmActivation::Relu;
  sgemm(g, 1);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(y[size_t(i * 3)], 2.5f);
    EXPECT_EQ(y[size_t(i * 3 + 1)], 0.0f);
    EXPECT_EQ(y[size_t(i * 3 + 2)], 2.0f);
  }
}

TEST(Parallel, EveryPartRunsOnce) {
  for (int threads : {1, 2, 4, 2}) {
    std::vector<int> hits(size_t(threads), 0);
    parallelRun(threads, [&](int t, int parts) {
      EXPECT_EQ(parts, threads);
      ++hits[size_t(t)];
    });
    for (int h : hits)
      EXPECT_EQ(h, 1);
  }
  int64_t b, e;
  splitRange(10, 2, 3, 4, b, e);
  EXPECT_EQ(b, 8);
  EXPECT_EQ(e, 10);
}
