//===- VectorMathTest.cpp - Vector exp/tanh/erf against double math -------===//
#include "kernels/cpu/VectorMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace tpc::cpu;

namespace {

/// Every float in [-lo, hi] on a fine grid, plus the edges that matter.
std::vector<float> samples(double lo, double hi) {
  std::vector<float> v;
  for (double x = lo; x <= hi; x += (hi - lo) / 20011.0)
    v.push_back(float(x));
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-6f, -3e-4f, 5e-4f, 0.5f,
                  -0.5f, 7.9f, -7.91f, 9.0f, 20.0f, -20.0f})
    v.push_back(x);
  // An odd count exercises the scalar tail.
  v.push_back(0.125f);
  return v;
}

void check(const char *name,
           const std::function<void(const float *, float *, int64_t)> &fn,
           const std::function<double(double)> &ref, double lo, double hi,
           double absTol, double relTol) {
  SCOPED_TRACE(name);
  std::vector<float> x = samples(lo, hi), y(x.size());
  fn(x.data(), y.data(), int64_t(x.size()));
  double worstAbs = 0, worstRel = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = ref(double(x[i]));
    const double err = std::fabs(double(y[i]) - want);
    worstAbs = std::max(worstAbs, err);
    if (std::fabs(want) > 1e-30)
      worstRel = std::max(worstRel, err / std::fabs(want));
    ASSERT_LE(err, absTol + relTol * std::fabs(want))
        << name << "(" << x[i] << ") = " << y[i] << ", want " << want;
  }
  // In place gives the same.
  std::vector<float> z = x;
  fn(z.data(), z.data(), int64_t(z.size()));
  for (size_t i = 0; i < z.size(); ++i)
    ASSERT_EQ(z[i], y[i]);
  std::printf("%s: max abs err %.3g, max rel err %.3g\n", name, worstAbs,
              worstRel);
}

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
/// 0.5 x (1 + tanh(z)) written as x sigmoid(2 z), which keeps its digits
/// where tanh(z) rounds to -1 in double.
double geluTanh(double x) {
  const double z = std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
  return x / (1 + std::exp(-2 * z));
}

/// Every test runs on each instruction set the vector math has code for
/// (skipped where the CPU lacks it), not only the one it would choose.
class VectorMathOn : public ::testing::TestWithParam<VectorIsa> {
protected:
  void SetUp() override {
    saved_ = vectorMathIsa();
    if (!setVectorMathIsa(GetParam()))
      GTEST_SKIP() << "this CPU has no " << vectorIsaName(GetParam());
  }
  void TearDown() override { ASSERT_TRUE(setVectorMathIsa(saved_)); }

private:
  VectorIsa saved_ = VectorIsa::Scalar;
};

} // namespace

INSTANTIATE_TEST_SUITE_P(Isa, VectorMathOn,
                         ::testing::Values(VectorIsa::Scalar, VectorIsa::Avx2,
                                           VectorIsa::Avx512),
                         [](const auto &info) {
                           std::string name = vectorIsaName(info.param);
                           return name.substr(0, name.find('-'));
                         });

TEST(VectorMath, ChoosesTheWidestSupported) {
  VectorIsa widest = VectorIsa::Scalar;
  for (VectorIsa isa : {VectorIsa::Avx2, VectorIsa::Avx512})
    if (vectorIsaSupported(isa))
      widest = isa;
  EXPECT_EQ(vectorMathIsa(), widest) << vectorIsaName(vectorMathIsa());
  EXPECT_TRUE(vectorIsaSupported(VectorIsa::Scalar));
}

TEST_P(VectorMathOn, EveryLengthMatchesTheWholeArray) {
  // Full vectors and the padded tail compute the same values.
  std::vector<float> x = samples(-8, 8);
  std::vector<float> whole(x.size());
  vecGelu(x.data(), whole.data(), int64_t(x.size()));
  for (int64_t n = 0; n <= 40; ++n) {
    std::vector<float> part(size_t(n) + 1, -7.0f);
    vecGelu(x.data(), part.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(part[size_t(i)], whole[size_t(i)]) << "n " << n << " i " << i;
    ASSERT_EQ(part[size_t(n)], -7.0f) << "wrote past " << n;
  }
}

TEST_P(VectorMathOn, Exp) {
  check("exp", vecExp, [](double x) { return std::exp(x); }, -87, 88, 0,
        3e-7);
  // Past the float range: 0 below, finite above, never NaN.
  float x[3] = {-1000.0f, -std::numeric_limits<float>::infinity(), 100.0f};
  float y[3];
  vecExp(x, y, 3);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_FALSE(std::isnan(y[2]));
}

TEST_P(VectorMathOn, Tanh) {
  check("tanh", vecTanh, [](double x) { return std::tanh(x); }, -12, 12, 2e-7,
        1e-6);
}

TEST_P(VectorMathOn, Erf) {
  check("erf", vecErf, [](double x) { return std::erf(x); }, -6, 6, 4e-7,
        1e-6);
}

TEST_P(VectorMathOn, Sigmoid) {
  check("sigmoid", vecSigmoid, [](double x) { return 1 / (1 + std::exp(-x)); },
        -80, 80, 0, 3e-7);
}

TEST_P(VectorMathOn, Gelu) {
  // erf's absolute error, scaled by |x| / 2.
  check("gelu", vecGelu, gelu, -6, 6, 1.2e-6, 1e-6);
  // Far out on the negative side exp(2 z) amplifies float rounding of z.
  check("gelu_tanh", vecGeluTanh, geluTanh, -12, 12, 1e-30, 1e-5);
}

TEST_P(VectorMathOn, ExpShiftSum) {
  std::vector<float> x = samples(-30, 5), y(x.size());
  const float shift = 5.0f;
  float sum = vecExpShiftSum(x.data(), y.data(), int64_t(x.size()), shift);
  double want = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    // The shift is subtracted in float, as a softmax does.
    const double e = std::exp(double(x[i] - shift));
    want += e;
    ASSERT_NEAR(y[i], e, 3e-7 * e);
  }
  EXPECT_NEAR(sum, want, 1e-5 * want);
}
