//===- HalfPrecisionTest.cpp - f16/bf16 GEMMs, norms, softmax, reductions -===//
//
// The kernels an engine compiled with --dtype fp16|bf16 runs. Each result
// is compared with a double reference computed from the decoded 16-bit
// inputs: a kernel that accumulates in float and rounds once lands within
// one unit in the last place of the output type; one that accumulates in
// the 16-bit type does not (the long sums below would stall at 256 or 2048).
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include <cmath>

namespace tpc::cpu::test {
namespace {

const DType kHalfTypes[] = {DType::F16, DType::BF16};

/// One unit in the last place at 1.0, relative.
double ulp(DType t) { return t == DType::BF16 ? 0x1p-7 : 0x1p-10; }

/// Expects every element within `ulps` units in the last place of its
/// reference value (plus `atol` for values near zero).
void expectUlps(const Tensor &got, const std::vector<double> &want,
                double ulps, double atol = 0) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < got.numel(); ++i) {
    double tol = ulps * ulp(got.desc.dtype) * std::fabs(want[i]) + atol;
    ASSERT_NEAR(got.at(i), want[i], tol) << "element " << i;
  }
}

TEST(HalfMatMul, MatchesOneRoundingOfTheExactProduct) {
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {{3, 4}, {4, 5}, {3, 5}},
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},        // folded into one GEMM
      {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}},     // batched
      {{2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}}, // batch broadcast both ways
      {{2, 3, 0}, {0, 5}, {2, 3, 5}},        // k = 0 gives zeros
      {{9, 2000}, {2000, 3}, {9, 3}},
      {{2, 300}, {300, 1500}, {2, 1500}},    // several B panels
  };
  uint64_t seed = 1;
  for (DType t : kHalfTypes)
    for (const Case &c : cases) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + shapeToString(c.a) +
                   " x " + shapeToString(c.b));
      // Positive operands: the sums do not cancel, so the exact product
      // rounded once is within half an ulp and float's error stays far
      // below the other half.
      Tensor a = randomTensor(t, c.a, seed++, 0.5, 2);
      Tensor b = randomTensor(t, c.b, seed++, 0.5, 2);
      Shape refShape;
      std::vector<double> want = refMatMul(a, b, refShape);
      ASSERT_EQ(refShape, c.out);
      expectUlps(runOne("MatMul", {&a, &b}, t, c.out), want, 1.0);
    }
}

TEST(HalfMatMul, AccumulatesInFloat) {
  // 4096 products of 1 * 1: a 16-bit accumulator stops at 256 (bf16) or
  // 2048 (f16); float gives 4096, exact in both.
  for (DType t : kHalfTypes) {
    Tensor a = makeTensor(t, {1, 4096}, std::vector<double>(4096, 1.0));
    Tensor b = makeTensor(t, {4096, 2}, std::vector<double>(8192, 1.0));
    expectUlps(runOne("MatMul", {&a, &b}, t, {1, 2}), {4096, 4096}, 0);
    const Attrs g = gemmAttrs(0, 1);
    Tensor bt = makeTensor(t, {2, 4096}, std::vector<double>(8192, 1.0));
    expectUlps(runOne("Gemm", {&a, &bt}, t, {1, 2}, g), {4096, 4096}, 0);
  }
}

TEST(HalfGemm, TransposesAlphaBetaAndBroadcastC) {
  uint64_t seed = 100;
  for (DType t : kHalfTypes)
    for (int transA : {0, 1})
      for (int transB : {0, 1})
        for (Shape cs : {Shape{}, Shape{37}, Shape{5, 1}, Shape{5, 37}}) {
          SCOPED_TRACE(std::string(dtypeName(t)) + " transA " +
                       std::to_string(transA) + " transB " +
                       std::to_string(transB) + " C " + shapeToString(cs));
          // With k = 9000 a panel holds 29 columns, so 37 take two.
          const int64_t m = 5, n = 37, k = cs.size() == 2 ? 9000 : 300;
          Tensor a = randomTensor(t, transA ? Shape{k, m} : Shape{m, k},
                                  seed++, 0.5, 1);
          Tensor b = randomTensor(t, transB ? Shape{n, k} : Shape{k, n},
                                  seed++, 0.5, 1);
          Tensor c = randomTensor(t, cs, seed++, 1, 2);
          const Attrs attrs = gemmAttrs(transA, transB, 0.25, 2.0);
          const std::vector<double> av = a.values(), bv = b.values();
          std::vector<double> want(m * n);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double s = 0;
              for (int64_t p = 0; p < k; ++p)
                s += av[transA ? p * m + i : i * k + p] *
                     bv[transB ? j * k + p : p * n + j];
              want[i * n + j] =
                  0.25 * s + 2.0 * c.at(broadcastIndex({i, j}, cs));
            }
          expectUlps(runOne("Gemm", {&a, &b, &c}, t, {m, n}, attrs), want,
                     1.0);
        }
}

/// Softmax of `n`-element rows in double.
std::vector<double> refSoftmaxRows(const Tensor &x, int64_t n, bool log) {
  std::vector<double> r(x.numel());
  for (int64_t o = 0; o < x.numel() / n; ++o) {
    double mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i)
      mx = std::max(mx, x.at(o * n + i));
    for (int64_t i = 0; i < n; ++i)
      sum += std::exp(x.at(o * n + i) - mx);
    for (int64_t i = 0; i < n; ++i) {
      double v = x.at(o * n + i) - mx;
      r[o * n + i] = log ? v - std::log(sum) : std::exp(v) / sum;
    }
  }
  return r;
}

TEST(HalfSoftmax, RowsComputedInFloat) {
  uint64_t seed = 200;
  for (DType t : kHalfTypes)
    for (bool log : {false, true}) {
      Tensor x = randomTensor(t, {3, 5000}, seed++, -8, 8);
      std::vector<double> want = refSoftmaxRows(x, 5000, log);
      Tensor y = runOne(log ? "LogSoftmax" : "Softmax", {&x}, t, {3, 5000},
                        softmaxAttrs());
      expectUlps(y, want, 1.0, 1e-7);
    }
}

TEST(HalfSoftmax, MaskedEntriesGiveZerosNotNaN) {
  // -inf (a mask that overflowed) and -65504 (a saturated one) next to
  // finite scores: masked entries get exactly 0, the rest sum to 1.
  for (DType t : kHalfTypes) {
    SCOPED_TRACE(dtypeName(t));
    Tensor x = makeTensor(t, {2, 4},
                          {-INFINITY, 0.5, 1.5, -INFINITY, //
                           -65504, 2.0, -65504, -65504});
    Tensor y = runOne("Softmax", {&x}, t, {2, 4}, softmaxAttrs());
    std::vector<double> want = {0, 1 / (1 + std::exp(1.0)),
                                1 / (1 + std::exp(-1.0)), 0, 0, 1, 0, 0};
    expectUlps(y, want, 1.0);
    Tensor ly = runOne("LogSoftmax", {&x}, t, {2, 4}, softmaxAttrs());
    EXPECT_FALSE(std::isnan(ly.at(1)));
    EXPECT_EQ(ly.at(0), -INFINITY);
  }
}

TEST(HalfNorm, LayerNormAndRmsNormInFloat) {
  uint64_t seed = 300;
  for (DType t : kHalfTypes)
    for (const char *name : {"LayerNormalization", "RMSNormalization"}) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + name);
      const bool rms = std::string(name) == "RMSNormalization";
      const int64_t rows = 4, n = 3000;
      // A large common offset: the mean must be taken before rounding.
      Tensor x = randomTensor(t, {rows, n}, seed++, 60, 70);
      Tensor scale = randomTensor(t, {n}, seed++, 0.5, 2);
      Tensor bias = randomTensor(t, {n}, seed++, -1, 1);
      Attrs attrs = normAttrs();
      std::vector<double> want(rows * n);
      for (int64_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < n; ++i)
          mean += x.at(r * n + i) / n;
        for (int64_t i = 0; i < n; ++i) {
          double d = x.at(r * n + i) - (rms ? 0 : mean);
          var += d * d / n;
        }
        for (int64_t i = 0; i < n; ++i)
          want[r * n + i] = (x.at(r * n + i) - (rms ? 0 : mean)) /
                                std::sqrt(var + 1e-5) * scale.at(i) +
                            (rms ? 0 : bias.at(i));
      }
      std::vector<const Tensor *> in = {&x, &scale};
      if (!rms)
        in.push_back(&bias);
      // Each output is computed in float from exact statistics: within one
      // ulp of the output, plus float's error relative to the bias.
      expectUlps(runOne(name, in, t, {rows, n}, attrs), want, 1.0, 1e-5);
    }
}

TEST(HalfReduce, AccumulatesInFloat) {
  for (DType t : kHalfTypes) {
    SCOPED_TRACE(dtypeName(t));
    // Along the last axis (one value per row) and along the first (rows
    // accumulated into an output row).
    Tensor ones = makeTensor(t, {2, 4096}, std::vector<double>(8192, 1.0));
    Attrs last;
    last.setInts("axes", {-1});
    last.setInt("keepdims", 0);
    last.setInt("noop_with_empty_axes", 0);
    expectUlps(runOne("ReduceSum", {&ones}, t, {2}, last), {4096, 4096}, 0);
    expectUlps(runOne("ReduceMean", {&ones}, t, {2}, last), {1, 1}, 0);
    Tensor tall = makeTensor(t, {4096, 2}, std::vector<double>(8192, 1.0));
    Attrs first;
    first.setInts("axes", {0});
    first.setInt("keepdims", 0);
    first.setInt("noop_with_empty_axes", 0);
    expectUlps(runOne("ReduceSum", {&tall}, t, {2}, first), {4096, 4096}, 0);
    Tensor x = makeTensor(t, {2, 3}, {1, -2, 3, 0.5, 8, -1});
    expectUlps(runOne("ReduceMax", {&x}, t, {2}, last), {3, 8}, 0);
    Tensor am = runOne("ArgMax", {&x}, DType::I64, {2}, [] {
      Attrs a;
      a.setInt("axis", 1);
      a.setInt("keepdims", 0);
      a.setInt("select_last_index", 0);
      return a;
    }());
    EXPECT_EQ(am.at(0), 2);
    EXPECT_EQ(am.at(1), 1);
  }
}

TEST(HalfMovement, ByteMoversTakeTwoByteFloats) {
  for (DType t : kHalfTypes) {
    SCOPED_TRACE(dtypeName(t));
    Tensor x = makeTensor(t, {2, 3}, {1, 2, 3, 4, 5, 6});
    Attrs perm;
    perm.setInts("perm", {1, 0});
    expectUlps(runOne("Transpose", {&x}, t, {3, 2}, perm), {1, 4, 2, 5, 3, 6},
               0);
    Attrs axis;
    axis.setInt("axis", 0);
    expectUlps(runOne("Concat", {&x, &x}, t, {4, 3}, axis),
               {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, 0);
    Tensor idx = makeTensor(DType::I64, {2}, {1, 0});
    expectUlps(runOne("Gather", {&x, &idx}, t, {2, 3}, axis),
               {4, 5, 6, 1, 2, 3}, 0);
    Tensor cond = makeTensor(DType::Bool, {3}, {1, 0, 1});
    Tensor other = makeTensor(t, {}, {-65504});
    const double o = other.at(0);
    expectUlps(runOne("Where", {&cond, &x, &other}, t, {2, 3}),
               {1, o, 3, 4, o, 6}, 0);
    Attrs shape;
    shape.setInts("shape", {2, 2, 3});
    Tensor row = makeTensor(t, {3}, {7, 8, 9});
    expectUlps(runOne("Expand", {&row}, t, {2, 2, 3}, shape),
               {7, 8, 9, 7, 8, 9, 7, 8, 9, 7, 8, 9}, 0);
  }
}

} // namespace
} // namespace tpc::cpu::test
