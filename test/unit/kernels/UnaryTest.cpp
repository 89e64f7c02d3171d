//===- UnaryTest.cpp - Elementwise unary kernels --------------------------===//
#include "KernelTestUtil.h"
#include "kernels/Unary.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace tpc::cpu::test {
namespace {

using Fn = std::function<double(double)>;

struct UnaryCase {
  const char *name;
  Fn fn;
  double lo = -3, hi = 3;
  Attrs attrs = {};
};

Attrs withFloat(const char *k, double v, const char *k2 = nullptr,
                double v2 = 0) {
  Attrs a;
  a.setFloat(k, v);
  if (k2)
    a.setFloat(k2, v2);
  return a;
}

Attrs withString(const char *k, const char *v) {
  Attrs a;
  a.setString(k, v);
  return a;
}

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double geluTanh(double x) {
  return 0.5 * x *
         (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

std::vector<UnaryCase> floatCases() {
  return {
      {"Sqrt", [](double x) { return std::sqrt(x); }, 0.01, 9},
      {"Reciprocal", [](double x) { return 1 / x; }, 0.1, 4},
      {"Neg", [](double x) { return -x; }},
      {"Abs", [](double x) { return std::fabs(x); }},
      {"Exp", [](double x) { return std::exp(x); }},
      {"Log", [](double x) { return std::log(x); }, 0.01, 9},
      {"Erf", [](double x) { return std::erf(x); }},
      {"Tanh", [](double x) { return std::tanh(x); }},
      {"Sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -30, 30},
      {"Relu", [](double x) { return x < 0 ? 0 : x; }},
      {"Cos", [](double x) { return std::cos(x); }},
      {"Sin", [](double x) { return std::sin(x); }},
      {"Tan", [](double x) { return std::tan(x); }, -1.5, 1.5},
      {"Asin", [](double x) { return std::asin(x); }, -1, 1},
      {"Acos", [](double x) { return std::acos(x); }, -1, 1},
      {"Atan", [](double x) { return std::atan(x); }, -9, 9},
      {"Sinh", [](double x) { return std::sinh(x); }, -5, 5},
      {"Cosh", [](double x) { return std::cosh(x); }, -5, 5},
      {"Asinh", [](double x) { return std::asinh(x); }, -9, 9},
      {"Acosh", [](double x) { return std::acosh(x); }, 1, 9},
      {"Atanh", [](double x) { return std::atanh(x); }, -0.99, 0.99},
      {"Round", [](double x) { return std::nearbyint(x); }, -9, 9},
      {"Floor", [](double x) { return std::floor(x); }},
      {"Ceil", [](double x) { return std::ceil(x); }},
      {"Sign", [](double x) { return double((x > 0) - (x < 0)); }},
      {"Softplus", [](double x) { return std::log(1 + std::exp(x)); }, -20, 20},
      {"HardSigmoid",
       [](double x) { return std::max(0.0, std::min(1.0, 0.2 * x + 0.5)); }, -3,
       3, withFloat("alpha", 0.2, "beta", 0.5)},
      {"HardSigmoid",
       [](double x) { return std::max(0.0, std::min(1.0, 0.5 * x + 0.1)); }, -3,
       3, withFloat("alpha", 0.5, "beta", 0.1)},
      {"LeakyRelu", [](double x) { return x < 0 ? 0.01 * x : x; }, -3, 3,
       withFloat("alpha", 0.01)},
      {"LeakyRelu", [](double x) { return x < 0 ? 0.3 * x : x; }, -3, 3,
       withFloat("alpha", 0.3)},
      {"Elu", [](double x) { return x < 0 ? std::exp(x) - 1 : x; }, -3, 3,
       withFloat("alpha", 1)},
      {"Elu", [](double x) { return x < 0 ? 2 * (std::exp(x) - 1) : x; }, -3, 3,
       withFloat("alpha", 2)},
      {"Gelu", geluTanh, -3, 3, withString("approximate", "tanh")},
      {"Gelu", gelu, -3, 3, withString("approximate", "none")},
  };
}

/// fn of every element of x.
std::vector<double> mapValues(const Tensor &x, const Fn &fn) {
  std::vector<double> out;
  for (double v : x.values())
    out.push_back(fn(v));
  return out;
}

/// Runs every float case on seeded random tensors of `t`, one of each
/// shape, and expects its reference (rounded once to `t` where `rounded`)
/// within rtol and atol.
void expectFloatCases(DType t, std::initializer_list<Shape> shapes,
                      bool rounded, double rtol, double atol, uint64_t &seed) {
  for (const UnaryCase &c : floatCases())
    for (const Shape &s : shapes) {
      SCOPED_TRACE(std::string(c.name) + " " + dtypeName(t) + " " +
                   shapeToString(s));
      Tensor x = randomTensor(t, s, seed++, c.lo, c.hi);
      std::vector<double> expect = mapValues(x, c.fn);
      if (rounded)
        for (double &v : expect)
          v = storedAs(t, v);
      expectClose(runOne(c.name, {&x}, t, s, c.attrs), expect, rtol, atol);
    }
}

/// The references of the kernels that take integers (exact in double).
const std::map<std::string, Fn> kIntegerRefs = {
    {"Neg", [](double x) { return -x; }},
    {"Abs", [](double x) { return std::fabs(x); }},
    {"Relu", [](double x) { return x < 0 ? 0 : x; }},
    {"Sign", [](double x) { return double((x > 0) - (x < 0)); }},
};

/// Runs `name` on a seeded random [4, 6] tensor of `t` in [lo, hi] and
/// expects its integer reference exactly.
void expectIntegerOp(const char *name, DType t, uint64_t seed, double lo,
                     double hi) {
  SCOPED_TRACE(std::string(name) + " " + dtypeName(t));
  Tensor x = randomTensor(t, {4, 6}, seed, lo, hi);
  expectClose(runOne(name, {&x}, t, {4, 6}),
              mapValues(x, kIntegerRefs.at(name)), 0, 0);
}

TEST(Unary, EveryListedKernelHasAReference) {
  // The kernels come from kernels/Unary.h's list; each float one needs a
  // reference above, and the integer and bool ones have tests below.
  std::set<std::string> covered;
  for (const UnaryCase &c : floatCases())
    covered.insert(c.name);
  for (const UnaryKernelInfo &k : kUnaryKernels) {
    if (k.domain == UnaryDomain::IsFloat || k.domain == UnaryDomain::Bool)
      continue;
    EXPECT_TRUE(covered.count(k.name)) << k.name << " has no reference";
    EXPECT_NE(lookupKernel(k.name), nullptr) << k.name;
  }
}

TEST(Unary, AttributesComeFromThePlan) {
  // Defaults are the compiler's to write (ODS); a plan without one of the
  // attributes a kernel reads is refused, naming it.
  const TensorDesc f2{DType::F32, {2}};
  expectPrepareErrors({
      {"Elu", {f2}, {f2}, "attribute alpha is required"},
      {"HardSigmoid", {f2}, {f2}, "attribute beta is required",
       withFloat("alpha", 1)},
      {"Gelu", {f2}, {f2}, "attribute approximate is required"},
  });
}

TEST(Unary, FloatOpsMatchReference) {
  uint64_t seed = 1;
  for (DType t : {DType::F32, DType::F64}) {
    double tol = t == DType::F32 ? 2e-6 : 1e-12;
    expectFloatCases(t, {{2, 3, 5}, {}, {0, 4}, {37}}, false, tol, tol, seed);
  }
}

TEST(Unary, RoundTiesToEven) {
  Tensor x = makeTensor(DType::F32, {8},
                        {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4999998, -0.0});
  Tensor y = runOne("Round", {&x}, DType::F32, {8});
  expectClose(y, {-2, -2, -0.0, 0, 2, 2, 2, -0.0}, 0, 0);
  EXPECT_TRUE(std::signbit(y.at(2))) << "-0.5 rounds to -0";
}

TEST(Unary, StableAtExtremes) {
  Tensor x = makeTensor(DType::F32, {4}, {-200, -90, 90, 200});
  expectClose(runOne("Sigmoid", {&x}, DType::F32, {4}),
              {0, 1 / (1 + std::exp(90.0)), 1, 1}, 1e-6, 1e-30);
  expectClose(runOne("Softplus", {&x}, DType::F32, {4}),
              {0, std::log1p(std::exp(-90.0)), 90, 200}, 1e-6, 1e-30);
}

TEST(Unary, IntegerOps) {
  uint64_t seed = 50;
  for (DType t : {DType::I64, DType::I32})
    for (const char *name : {"Neg", "Abs", "Relu", "Sign"})
      expectIntegerOp(name, t, seed++, -100, 100);
  EXPECT_PREPARE_ERROR(
      prepareOnly("Exp", {{DType::I64, {2}}}, {{DType::I64, {2}}}),
      "unsupported dtype");
}

TEST(Unary, IsNaNAndNot) {
  Tensor x = makeTensor(DType::F32, {5}, {1, NAN, -INFINITY, 0, NAN});
  expectClose(runOne("IsNaN", {&x}, DType::Bool, {5}), {0, 1, 0, 0, 1}, 0, 0);
  Tensor d = makeTensor(DType::F64, {2}, {NAN, 3});
  expectClose(runOne("IsNaN", {&d}, DType::Bool, {2}), {1, 0}, 0, 0);
  Tensor b = randomTensor(DType::Bool, {3, 7}, 9);
  expectClose(runOne("Not", {&b}, DType::Bool, {3, 7}),
              mapValues(b, [](double v) { return v ? 0 : 1; }), 0, 0);
  const TensorDesc f2{DType::F32, {2}};
  expectPrepareErrors({{"Not", {f2}, {f2}, "unsupported dtype"},
                       {"IsNaN", {f2}, {f2}, "expected bool"}});
}

TEST(Unary, InvalidInputs) {
  const TensorDesc f2{DType::F32, {2}};
  expectPrepareErrors({
      {"Gelu", {f2}, {f2}, "approximate", withString("approximate", "fast")},
      {"Tanh", {f2}, {{DType::F32, {3}}}, "does not match"},
      {"Sqrt", {f2}, {{DType::F64, {2}}}, "expected f32"},
      {"Relu", {}, {f2}, "expected 1 inputs"},
  });
}

TEST(Unary, Float16TypesComputeInFloat) {
  // Each result is the float result rounded once; the reference is the
  // exact result rounded once, so they may differ by one unit in the last
  // place where float's own error meets a tie.
  uint64_t seed = 900;
  for (DType t : {DType::F16, DType::BF16}) {
    double ulp = t == DType::F16 ? 1.0 / 1024 : 1.0 / 128;
    // 600 elements: more than one of the kernel's conversion blocks.
    expectFloatCases(t, {{2, 3, 5}, {}, {0, 4}, {600}}, true, ulp, 1e-7, seed);
  }
  for (DType t : {DType::F16, DType::BF16}) {
    Tensor x = makeTensor(t, {5}, {1, NAN, -INFINITY, 0, -NAN});
    expectClose(runOne("IsNaN", {&x}, DType::Bool, {5}), {0, 1, 0, 0, 1}, 0,
                0);
    expectClose(runOne("Neg", {&x}, t, {5}), {-1, NAN, INFINITY, 0, NAN}, 0,
                0);
  }
}

TEST(Unary, EightBitIntegers) {
  uint64_t seed = 950;
  for (DType t : {DType::I8, DType::U8})
    for (const char *name : {"Abs", "Relu", "Sign", "Neg"}) {
      if (t == DType::U8 && std::string(name) == "Neg")
        continue;
      expectIntegerOp(name, t, seed++, t == DType::I8 ? -127 : 0,
                      t == DType::I8 ? 127 : 255);
    }
  // -(-128) and |-128| wrap to -128, as for the wider integers.
  Tensor m = makeTensor(DType::I8, {2}, {-128, 5});
  expectClose(runOne("Neg", {&m}, DType::I8, {2}), {-128, -5}, 0, 0);
  expectClose(runOne("Abs", {&m}, DType::I8, {2}), {-128, 5}, 0, 0);
  const TensorDesc u8{DType::U8, {2}}, i8{DType::I8, {2}};
  expectPrepareErrors({{"Neg", {u8}, {u8}, "unsupported dtype"},
                       {"Exp", {i8}, {i8}, "unsupported dtype"}});
}

} // namespace
} // namespace tpc::cpu::test
