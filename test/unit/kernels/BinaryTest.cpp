//===- BinaryTest.cpp - Broadcasting elementwise kernels ------------------===//
#include "KernelTestUtil.h"

#include <cmath>
#include <functional>
#include <limits>

namespace tpc::cpu::test {
namespace {

using Fn = std::function<double(double, double)>;

/// Output shape of a numpy broadcast, computed here independently.
Shape broadcast(const std::vector<Shape> &shapes) {
  size_t rank = 0;
  for (const Shape &s : shapes)
    rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape &s : shapes)
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] != 1)
        out[rank - s.size() + i] = s[i];
  return out;
}

std::vector<double> refBinary(const Tensor &a, const Tensor &b,
                              const Shape &out, const Fn &fn) {
  std::vector<double> r(numElements(out));
  for (int64_t i = 0; i < numElements(out); ++i) {
    std::vector<int64_t> idx = unravel(i, out);
    r[i] = fn(a.at(broadcastIndex(idx, a.desc.shape)),
              b.at(broadcastIndex(idx, b.desc.shape)));
  }
  return r;
}

const std::vector<std::pair<Shape, Shape>> kShapePairs = {
    {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}},       {{2, 3, 4}, {}},
    {{}, {2, 3}},           {{2, 1, 4}, {1, 3, 1}}, {{3, 1}, {1, 5}},
    {{1}, {2, 3}},          {{2, 3, 4}, {3, 1}},    {{4, 1, 1, 5}, {1, 6, 1}},
    {{5, 7}, {5, 1}},       {{0, 3}, {3}},          {{1, 1}, {1}},
};

using Cases = std::vector<std::pair<const char *, Fn>>;

/// The comparison kernels and their references.
const Cases kComparisons = {
    {"Equal", [](double a, double b) { return double(a == b); }},
    {"Less", [](double a, double b) { return double(a < b); }},
    {"Greater", [](double a, double b) { return double(a > b); }},
    {"LessOrEqual", [](double a, double b) { return double(a <= b); }},
    {"GreaterOrEqual", [](double a, double b) { return double(a >= b); }},
};

/// Integer division and remainders, 0 for a zero divisor: C's truncating
/// division and remainder, and Python's floored remainder (Mod fmod=0).
double cDiv(double a, double b) { return b == 0 ? 0 : std::trunc(a / b); }
double cMod(double a, double b) { return b == 0 ? 0 : std::fmod(a, b); }
double pyMod(double a, double b) {
  return b == 0 ? 0 : a - std::floor(a / b) * b;
}

/// Expects each comparison of `cmp` on a and b to give its reference.
void expectComparisons(const Cases &cmp, const Tensor &a, const Tensor &b,
                       const Shape &os) {
  for (const auto &[name, fn] : cmp) {
    SCOPED_TRACE(name);
    expectClose(runOne(name, {&a, &b}, DType::Bool, os),
                refBinary(a, b, os, fn), 0, 0);
  }
}

struct ArithCase {
  const char *name;
  Fn fn;
  double lo, hi; // value range that keeps the reference well defined
};

TEST(Binary, FloatArithmeticBroadcasts) {
  const std::vector<ArithCase> cases = {
      {"Add", [](double a, double b) { return a + b; }, -2, 2},
      {"Sub", [](double a, double b) { return a - b; }, -2, 2},
      {"Mul", [](double a, double b) { return a * b; }, -2, 2},
      {"Div", [](double a, double b) { return a / b; }, 0.25, 2},
      {"Pow", [](double a, double b) { return std::pow(a, b); }, 0.25, 2},
  };
  uint64_t seed = 1;
  for (DType t : {DType::F32, DType::F64})
    for (const ArithCase &c : cases)
      for (const auto &[sa, sb] : kShapePairs) {
        SCOPED_TRACE(std::string(c.name) + " " + dtypeName(t) + " " +
                     shapeToString(sa) + " vs " + shapeToString(sb));
        Tensor a = randomTensor(t, sa, seed++, c.lo, c.hi);
        Tensor b = randomTensor(t, sb, seed++, c.lo, c.hi);
        Shape os = broadcast({sa, sb});
        Tensor y = runOne(c.name, {&a, &b}, t, os);
        expectClose(y, refBinary(a, b, os, c.fn), 1e-6, 1e-6);
      }
}

TEST(Binary, FloatMod) {
  Tensor a = randomTensor(DType::F32, {3, 4}, 7, -5, 5);
  Tensor b = randomTensor(DType::F32, {4}, 8, -2, 2);
  Attrs attrs;
  attrs.setInt("fmod", 1);
  Tensor y = runOne("Mod", {&a, &b}, DType::F32, {3, 4}, attrs);
  expectClose(y,
              refBinary(a, b, {3, 4},
                        [](double x, double m) { return std::fmod(x, m); }),
              1e-6, 1e-6);
  // fmod=0 (Mod-28): the sign of B, x - floor(x / m) * m.
  Tensor z = runOne("Mod", {&a, &b}, DType::F32, {3, 4}, modAttrs(0));
  expectClose(z,
              refBinary(a, b, {3, 4},
                        [](double x, double m) {
                          return x - std::floor(x / m) * m;
                        }),
              1e-5, 1e-5);
  attrs.setInt("fmod", 2);
  EXPECT_PREPARE_ERROR(
      prepareOnly("Mod", {a.desc, b.desc}, {{DType::F32, {3, 4}}}, attrs),
      "fmod");
}

TEST(Binary, FloatModSpecialCases) {
  // Mod-28's cases: a zero takes B's sign, an infinite A or a zero B gives
  // NaN, an infinite B gives A (same sign) or B (other sign).
  const double inf = std::numeric_limits<double>::infinity();
  Tensor a = makeTensor(DType::F32, {8}, {0.0, -0.0, inf, 3, 3, -3, 3, 6});
  Tensor b = makeTensor(DType::F32, {8}, {-2, 2, 2, 0, inf, inf, -inf, -3});
  Tensor y = runOne("Mod", {&a, &b}, DType::F32, {8}, modAttrs(0));
  float r[8];
  for (int i = 0; i < 8; ++i)
    r[i] = y.get<float>(i);
  EXPECT_TRUE(r[0] == 0 && std::signbit(r[0]));
  EXPECT_TRUE(r[1] == 0 && !std::signbit(r[1]));
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_TRUE(std::isnan(r[3]));
  EXPECT_EQ(r[4], 3.0f);
  EXPECT_EQ(r[5], float(inf));
  EXPECT_EQ(r[6], float(-inf));
  EXPECT_TRUE(r[7] == 0 && std::signbit(r[7]));
}

TEST(Binary, IntegerArithmetic) {
  uint64_t seed = 100;
  for (DType t : {DType::I64, DType::I32}) {
    for (const auto &[sa, sb] : kShapePairs) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + shapeToString(sa) +
                   " vs " + shapeToString(sb));
      Tensor a = randomTensor(t, sa, seed++, -20, 20);
      Tensor b = randomTensor(t, sb, seed++, -6, 6);
      Shape os = broadcast({sa, sb});
      auto check = [&](const char *name, Fn fn, Attrs attrs = {}) {
        SCOPED_TRACE(name);
        Tensor y = runOne(name, {&a, &b}, t, os, attrs);
        expectClose(y, refBinary(a, b, os, fn), 0, 0);
      };
      check("Add", [](double x, double y) { return x + y; });
      check("Sub", [](double x, double y) { return x - y; });
      check("Mul", [](double x, double y) { return x * y; });
      check("Div", cDiv);
      check("Mod", pyMod, modAttrs(0));
      check("Mod", cMod, modAttrs(1));
    }
  }
}

TEST(Binary, IntegerEdgeCasesDoNotTrap) {
  // Division by zero gives 0 and MIN / -1 wraps instead of trapping.
  Tensor a = makeTensor(DType::I32, {4}, {7, -7, -2147483648.0, 5});
  Tensor b = makeTensor(DType::I32, {4}, {0, 2, -1, -3});
  Tensor y = runOne("Div", {&a, &b}, DType::I32, {4});
  expectClose(y, {0, -3, -2147483648.0, -1}, 0, 0);
  Tensor m = runOne("Mod", {&a, &b}, DType::I32, {4}, modAttrs(0));
  expectClose(m, {0, 1, 0, -1}, 0, 0);
}

TEST(Binary, BitwiseOfEveryIntegerType) {
  // Against a reference on the two's complement bits, computed in int64
  // and wrapped to the type's width.
  const std::pair<DType, int> types[] = {
      {DType::I64, 64}, {DType::I32, 32}, {DType::I16, 16}, {DType::I8, 8},
      {DType::U64, 64}, {DType::U32, 32}, {DType::U16, 16}, {DType::U8, 8}};
  uint64_t seed = 300;
  for (auto [t, bits] : types) {
    bool isSigned = t == DType::I64 || t == DType::I32 || t == DType::I16 ||
                    t == DType::I8;
    auto wrap = [bits = bits, isSigned](int64_t v) {
      if (bits == 64)
        return isSigned ? double(v) : double(uint64_t(v));
      uint64_t m = (uint64_t(1) << bits) - 1, u = uint64_t(v) & m;
      if (isSigned && (u >> (bits - 1)))
        return double(int64_t(u) - int64_t(uint64_t(1) << bits));
      return double(u);
    };
    for (const auto &[sa, sb] : kShapePairs) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + shapeToString(sa) +
                   " vs " + shapeToString(sb));
      Tensor a = randomTensor(t, sa, seed++, isSigned ? -100 : 0, 120);
      Tensor b = randomTensor(t, sb, seed++, isSigned ? -100 : 0, 120);
      Shape os = broadcast({sa, sb});
      auto check = [&](const char *name, std::function<int64_t(int64_t, int64_t)> f) {
        SCOPED_TRACE(name);
        Tensor y = runOne(name, {&a, &b}, t, os);
        expectClose(y, refBinary(a, b, os, [&](double x, double z) {
                      return wrap(f(int64_t(x), int64_t(z)));
                    }),
                    0, 0);
      };
      check("BitwiseAnd", [](int64_t x, int64_t y) { return x & y; });
      check("BitwiseOr", [](int64_t x, int64_t y) { return x | y; });
      check("BitwiseXor", [](int64_t x, int64_t y) { return x ^ y; });
    }
  }
  EXPECT_PREPARE_ERROR(prepareOnly("BitwiseAnd", {{DType::F32, {2}}, {DType::F32, {2}}},
                                   {{DType::F32, {2}}}),
                       "input 0");
}

TEST(Binary, BitShift) {
  Attrs left, right, bad;
  left.setString("direction", "LEFT");
  right.setString("direction", "RIGHT");
  bad.setString("direction", "UP");
  Tensor a = makeTensor(DType::U8, {5}, {1, 255, 16, 3, 200});
  Tensor s = makeTensor(DType::U8, {5}, {1, 1, 4, 8, 9});
  // Amounts of the width or more give 0 (the bits shifted out).
  expectClose(runOne("BitShift", {&a, &s}, DType::U8, {5}, left),
              {2, 254, 0, 0, 0}, 0, 0);
  expectClose(runOne("BitShift", {&a, &s}, DType::U8, {5}, right),
              {0, 127, 1, 0, 0}, 0, 0);
  // Signed right shifts are arithmetic; negative or too large amounts give
  // the sign alone.
  Tensor b = makeTensor(DType::I32, {5}, {-16, -16, 16, -1, 5});
  Tensor n = makeTensor(DType::I32, {5}, {2, 40, 40, -1, -3});
  expectClose(runOne("BitShift", {&b, &n}, DType::I32, {5}, right),
              {-4, -1, 0, -1, 0}, 0, 0);
  expectClose(runOne("BitShift", {&b, &n}, DType::I32, {5}, left),
              {-64, 0, 0, 0, 0}, 0, 0);
  Tensor w = makeTensor(DType::U64, {2}, {1, 3});
  Tensor k = makeTensor(DType::U64, {2}, {63, 64});
  Tensor y = runOne("BitShift", {&w, &k}, DType::U64, {2}, left);
  EXPECT_EQ(y.get<uint64_t>(0), uint64_t(1) << 63);
  EXPECT_EQ(y.get<uint64_t>(1), 0u);
  EXPECT_PREPARE_ERROR(prepareOnly("BitShift", {{DType::U8, {2}}, {DType::U8, {2}}},
                                   {{DType::U8, {2}}}, bad),
                       "direction must be");
}

TEST(Binary, PowMixedTypes) {
  Tensor base = randomTensor(DType::F32, {2, 5}, 11, 0.5, 2);
  Tensor e = makeTensor(DType::I64, {5}, {0, 1, 2, 3, -2});
  Tensor y = runOne("Pow", {&base, &e}, DType::F32, {2, 5});
  expectClose(y,
              refBinary(base, e, {2, 5},
                        [](double x, double p) { return std::pow(x, p); }),
              1e-6, 0);

  Tensor ib = makeTensor(DType::I64, {6}, {2, -3, 5, 1, -1, 4});
  Tensor ie = makeTensor(DType::I64, {6}, {10, 3, 0, -4, -3, -1});
  Tensor iy = runOne("Pow", {&ib, &ie}, DType::I64, {6});
  expectClose(iy, {1024, -27, 1, 1, -1, 0}, 0, 0);

  Tensor fe = makeTensor(DType::F64, {6}, {2, 2, 0.5, 1, 2, 0});
  Tensor fy = runOne("Pow", {&ib, &fe}, DType::I64, {6});
  expectClose(fy, {4, 9, 2, 1, 1, 1}, 0, 0);
}

TEST(Binary, ComparisonsProduceBool) {
  uint64_t seed = 200;
  for (DType t : {DType::F32, DType::F64, DType::I64, DType::I32})
    for (const auto &[name, fn] : kComparisons)
      for (const auto &[sa, sb] : kShapePairs) {
        SCOPED_TRACE(std::string(name) + " " + dtypeName(t));
        // Small integers make ties common.
        Tensor a = randomTensor(t, sa, seed++, -3, 3);
        Tensor b = randomTensor(t, sb, seed++, -3, 3);
        for (Tensor *x : {&a, &b})
          for (int64_t i = 0; i < x->numel(); ++i)
            x->set(i, std::round(x->at(i)));
        Shape os = broadcast({sa, sb});
        Tensor y = runOne(name, {&a, &b}, DType::Bool, os);
        expectClose(y, refBinary(a, b, os, fn), 0, 0);
      }
}

TEST(Binary, LogicalAndBoolEqual) {
  const Cases cases = {
      {"And", [](double a, double b) { return double(a && b); }},
      {"Or", [](double a, double b) { return double(a || b); }},
      {"Xor", [](double a, double b) { return double((a != 0) != (b != 0)); }},
      {"Equal", [](double a, double b) { return double(a == b); }},
  };
  uint64_t seed = 300;
  for (const auto &[name, fn] : cases)
    for (const auto &[sa, sb] : kShapePairs) {
      Tensor a = randomTensor(DType::Bool, sa, seed++);
      Tensor b = randomTensor(DType::Bool, sb, seed++);
      Shape os = broadcast({sa, sb});
      Tensor y = runOne(name, {&a, &b}, DType::Bool, os);
      expectClose(y, refBinary(a, b, os, fn), 0, 0);
    }
}

TEST(Binary, PRelu) {
  Tensor x = randomTensor(DType::F32, {2, 3, 4, 5}, 400);
  for (Shape slopeShape :
       {Shape{3, 1, 1}, Shape{5}, Shape{}, Shape{1, 3, 4, 5}}) {
    SCOPED_TRACE(shapeToString(slopeShape));
    Tensor s = randomTensor(DType::F32, slopeShape, 401, 0.05, 0.5);
    Tensor y = runOne("PRelu", {&x, &s}, DType::F32, {2, 3, 4, 5});
    expectClose(y, refBinary(x, s, {2, 3, 4, 5}, [](double v, double k) {
                  return v < 0 ? v * k : v;
                }));
  }
  // The slope may not grow X.
  EXPECT_PREPARE_ERROR(prepareOnly("PRelu",
                                   {{DType::F32, {3}}, {DType::F32, {2, 3}}},
                                   {{DType::F32, {2, 3}}}),
                       "does not broadcast");
}

TEST(Binary, VariadicMaxMinSumMean) {
  const std::vector<std::tuple<const char *, Fn, bool>> cases = {
      {"Max", [](double a, double b) { return std::max(a, b); }, false},
      {"Min", [](double a, double b) { return std::min(a, b); }, false},
      {"Sum", [](double a, double b) { return a + b; }, false},
      {"Mean", [](double a, double b) { return a + b; }, true},
  };
  const std::vector<std::vector<Shape>> shapeSets = {
      {{3, 4}}, {{3, 4}, {4}}, {{2, 1, 4}, {3, 1}, {}}, {{5}, {5}, {5}, {1}}};
  uint64_t seed = 500;
  for (DType t : {DType::F32, DType::F64, DType::I64})
    for (const auto &[name, fn, isMean] : cases)
      for (const std::vector<Shape> &shapes : shapeSets) {
        if (isMean && t == DType::I64)
          continue;
        SCOPED_TRACE(std::string(name) + " " + dtypeName(t) + " with " +
                     std::to_string(shapes.size()) + " inputs");
        std::vector<Tensor> ins;
        for (const Shape &s : shapes)
          ins.push_back(randomTensor(t, s, seed++, -10, 10));
        std::vector<const Tensor *> ptrs;
        for (const Tensor &x : ins)
          ptrs.push_back(&x);
        Shape os = broadcast(shapes);
        std::vector<double> expect(numElements(os));
        for (int64_t i = 0; i < numElements(os); ++i) {
          std::vector<int64_t> idx = unravel(i, os);
          double acc = ins[0].at(broadcastIndex(idx, shapes[0]));
          for (size_t k = 1; k < ins.size(); ++k)
            acc = fn(acc, ins[k].at(broadcastIndex(idx, shapes[k])));
          expect[i] = isMean ? acc / static_cast<double>(ins.size()) : acc;
        }
        Tensor y = runOne(name, ptrs, t, os);
        expectClose(y, expect, 1e-6, 1e-6);
      }
}

TEST(Binary, MaxMinPropagateNaN) {
  Tensor a = makeTensor(DType::F32, {3}, {NAN, 1, 2});
  Tensor b = makeTensor(DType::F32, {3}, {0, NAN, -1});
  expectClose(runOne("Max", {&a, &b}, DType::F32, {3}), {NAN, NAN, 2});
  expectClose(runOne("Min", {&a, &b}, DType::F32, {3}), {NAN, NAN, -1});
}

TEST(Binary, Where) {
  uint64_t seed = 600;
  const std::vector<std::vector<Shape>> shapeSets = {
      {{2, 3}, {2, 3}, {2, 3}},
      {{3, 1}, {1, 4}, {}},
      {{4}, {2, 3, 4}, {3, 1}},
      {{}, {5}, {5}},
  };
  for (DType t : {DType::F32, DType::I64, DType::F16, DType::Bool})
    for (const std::vector<Shape> &s : shapeSets) {
      SCOPED_TRACE(dtypeName(t));
      Tensor c = randomTensor(DType::Bool, s[0], seed++);
      Tensor x = randomTensor(t, s[1], seed++, -5, 5);
      Tensor y = randomTensor(t, s[2], seed++, -5, 5);
      Shape os = broadcast(s);
      std::vector<double> expect(numElements(os));
      for (int64_t i = 0; i < numElements(os); ++i) {
        std::vector<int64_t> idx = unravel(i, os);
        expect[i] = c.at(broadcastIndex(idx, s[0]))
                        ? x.at(broadcastIndex(idx, s[1]))
                        : y.at(broadcastIndex(idx, s[2]));
      }
      expectClose(runOne("Where", {&c, &x, &y}, t, os), expect, 0, 0);
    }
  EXPECT_PREPARE_ERROR(
      prepareOnly("Where",
                  {{DType::F32, {2}}, {DType::F32, {2}}, {DType::F32, {2}}},
                  {{DType::F32, {2}}}),
      "condition");
}

TEST(Binary, InvalidInputs) {
  const TensorDesc f23{DType::F32, {2, 3}}, f4{DType::F32, {4}};
  EXPECT_PREPARE_ERROR(prepareOnly("Add", {f23, f4}, {{DType::F32, {2, 3}}}),
                       "not broadcastable");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Add", {f23, {DType::I64, {2, 3}}}, {{DType::F32, {2, 3}}}),
      "dtype mismatch");
  EXPECT_PREPARE_ERROR(prepareOnly("Mul", {f23, f23}, {{DType::F32, {3, 2}}}),
                       "does not match");
  EXPECT_PREPARE_ERROR(prepareOnly("Less", {f23, f23}, {{DType::F32, {2, 3}}}),
                       "expected bool");
  EXPECT_PREPARE_ERROR(prepareOnly("And", {f23, f23}, {{DType::Bool, {2, 3}}}),
                       "unsupported dtype");
  EXPECT_PREPARE_ERROR(prepareOnly("Sub", {f23}, {{DType::F32, {2, 3}}}),
                       "expected 2 inputs");
  EXPECT_PREPARE_ERROR(prepareOnly("Add",
                                   {{DType::Bool, {2}}, {DType::Bool, {2}}},
                                   {{DType::Bool, {2}}}),
                       "unsupported dtype");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Mean", {{DType::I64, {2}}}, {{DType::I64, {2}}}),
      "unsupported dtype");
  EXPECT_PREPARE_ERROR(prepareOnly("Sum", {}, {{DType::F32, {2}}}),
                       "at least 1");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Add", {{DType::F32, {-2}}, f4}, {{DType::F32, {4}}}),
      "negative dim");
}

/// Expects kernel `name` on a and b (Mod with fmod=0) to give fn's result
/// stored as `t`.
void expectStoredResult(const char *name, const Fn &fn, const Tensor &a,
                        const Tensor &b, DType t, const Shape &os) {
  SCOPED_TRACE(name);
  std::vector<double> expect = refBinary(a, b, os, fn);
  for (double &v : expect)
    v = storedAs(t, v);
  expectClose(runOne(name, {&a, &b}, t, os,
                     std::string(name) == "Mod" ? modAttrs(0) : Attrs()),
              expect, 0, 0);
}

TEST(Binary, NarrowIntegersWrap) {
  const Cases arith = {
      {"Add", [](double x, double y) { return x + y; }},
      {"Sub", [](double x, double y) { return x - y; }},
      {"Mul", [](double x, double y) { return x * y; }},
      {"Div", cDiv},
      {"Mod", pyMod},
      {"Max", [](double x, double y) { return std::max(x, y); }},
      {"Min", [](double x, double y) { return std::min(x, y); }},
  };
  uint64_t seed = 700;
  // The largest magnitude of each type (products of it and 9 are exact in
  // double, so the reference wraps them exactly).
  const std::pair<DType, double> types[] = {
      {DType::I8, 120},     {DType::U8, 250},       {DType::I16, 32000},
      {DType::U16, 65000},  {DType::U32, 4.2e9}};
  for (auto [t, hi] : types)
    for (const auto &[sa, sb] : kShapePairs) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + shapeToString(sa) +
                   " vs " + shapeToString(sb));
      bool isSigned = t == DType::I8 || t == DType::I16;
      double lo = isSigned ? -hi : 0;
      // Wide ranges so that Add, Sub and Mul overflow and wrap.
      Tensor a = randomTensor(t, sa, seed++, lo, hi);
      Tensor b = randomTensor(t, sb, seed++, isSigned ? -9 : 0, 9);
      Shape os = broadcast({sa, sb});
      for (const auto &[name, fn] : arith)
        expectStoredResult(name, fn, a, b, t, os);
      expectClose(runOne("Mod", {&a, &b}, t, os, modAttrs(1)),
                  refBinary(a, b, os, cMod), 0, 0);
      expectComparisons(kComparisons, a, b, os);
    }
  // MIN / -1 wraps, MIN % -1 and x / 0 give 0, as for the wider integers.
  Tensor a = makeTensor(DType::I8, {4}, {-128, 7, -7, 100});
  Tensor b = makeTensor(DType::I8, {4}, {-1, 0, 2, -3});
  expectClose(runOne("Div", {&a, &b}, DType::I8, {4}), {-128, 0, -3, -33}, 0,
              0);
  expectClose(runOne("Mod", {&a, &b}, DType::I8, {4}, modAttrs(0)),
              {0, 0, 1, -2}, 0, 0);
  Tensor u = makeTensor(DType::U8, {3}, {200, 3, 255});
  Tensor v = makeTensor(DType::U8, {3}, {0, 255, 255});
  expectClose(runOne("Div", {&u, &v}, DType::U8, {3}), {0, 0, 1}, 0, 0);
  expectClose(runOne("Sub", {&u, &v}, DType::U8, {3}), {200, 4, 0}, 0, 0);
  // 16-bit products promote to int in C++: 65535 * 65535 must wrap, not
  // overflow int.
  Tensor w = makeTensor(DType::U16, {2}, {65535, 40000});
  expectClose(runOne("Mul", {&w, &w}, DType::U16, {2}), {1, 4096}, 0, 0);
  Tensor big = makeTensor(DType::U64, {2}, {4294967296.0, 1e15});
  Tensor two = makeTensor(DType::U64, {2}, {3, 7});
  expectClose(runOne("Mul", {&big, &two}, DType::U64, {2}),
              {12884901888.0, 7e15}, 0, 0);
  expectClose(runOne("Mod", {&big, &two}, DType::U64, {2}, modAttrs(0)),
              {1, 6}, 0, 0);
}

TEST(Binary, Float16TypesRoundOnce) {
  // Sums, differences, products and quotients of 16-bit floats computed in
  // float and rounded once equal the exact result rounded once.
  const Cases exact = {
      {"Add", [](double x, double y) { return x + y; }},
      {"Sub", [](double x, double y) { return x - y; }},
      {"Mul", [](double x, double y) { return x * y; }},
      {"Div", [](double x, double y) { return x / y; }},
      {"Max", [](double x, double y) { return std::max(x, y); }},
      {"Min", [](double x, double y) { return std::min(x, y); }},
      {"PRelu", [](double x, double k) { return x < 0 ? x * k : x; }},
  };
  const Cases cmp = {
      {"Equal", [](double a, double b) { return double(a == b); }},
      {"Less", [](double a, double b) { return double(a < b); }},
      {"GreaterOrEqual", [](double a, double b) { return double(a >= b); }},
  };
  uint64_t seed = 800;
  for (DType t : {DType::F16, DType::BF16})
    for (const auto &[sa, sb] : kShapePairs) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + shapeToString(sa) +
                   " vs " + shapeToString(sb));
      Tensor a = randomTensor(t, sa, seed++, -3, 3);
      Tensor b = randomTensor(t, sb, seed++, 0.25, 3);
      Shape os = broadcast({sa, sb});
      for (const auto &[name, fn] : exact) {
        if (std::string(name) == "PRelu" && os != sa)
          continue; // the slope may not grow X
        expectStoredResult(name, fn, a, b, t, os);
      }
      expectClose(runOne("Mod", {&a, &b}, t, os, modAttrs(1)),
                  refBinary(a, b, os,
                            [](double x, double m) { return std::fmod(x, m); }),
                  0, 0);
      // pow is not correctly rounded: allow one unit in the last place.
      double ulp = t == DType::F16 ? 1.0 / 1024 : 1.0 / 128;
      std::vector<double> pw = refBinary(
          a, b, os, [](double x, double p) { return std::pow(std::fabs(x), p); });
      Tensor absA = a;
      for (int64_t i = 0; i < absA.numel(); ++i)
        absA.set(i, std::fabs(absA.at(i)));
      expectClose(runOne("Pow", {&absA, &b}, t, os), pw, ulp, 1e-6);
      expectComparisons(cmp, a, b, os);
    }
  // NaN propagates through Max and Min; overflow rounds to infinity.
  Tensor a = makeTensor(DType::F16, {3}, {NAN, 1, 60000});
  Tensor b = makeTensor(DType::F16, {3}, {0, NAN, 60000});
  expectClose(runOne("Max", {&a, &b}, DType::F16, {3}), {NAN, NAN, 60000});
  expectClose(runOne("Min", {&a, &b}, DType::F16, {3}), {NAN, NAN, 60000});
  expectClose(runOne("Add", {&a, &b}, DType::F16, {3}), {NAN, NAN, INFINITY});
  // Mod's fmod=0 (the sign of B) in half precision, computed in float.
  Tensor x = makeTensor(DType::F16, {3}, {5.5, -5.5, 0});
  Tensor m = makeTensor(DType::F16, {3}, {-2, 2, -3});
  expectClose(runOne("Mod", {&x, &m}, DType::F16, {3}, modAttrs(0)),
              {-0.5, 0.5, 0});
}

TEST(Binary, PowSmallTypesMixed) {
  Tensor base = makeTensor(DType::I8, {4}, {2, -3, 5, 2});
  Tensor e = makeTensor(DType::F16, {4}, {3, 3, 0.5, 7});
  // 2^7 = 128 saturates to 127 through the float path, as for wider ints.
  expectClose(runOne("Pow", {&base, &e}, DType::I8, {4}), {8, -27, 2, 127}, 0,
              0);
  Tensor x = makeTensor(DType::F32, {3}, {1.5, -2, 3});
  Tensor u = makeTensor(DType::U8, {3}, {2, 3, 0});
  expectClose(runOne("Pow", {&x, &u}, DType::F32, {3}), {2.25, -8, 1}, 0, 0);
}

TEST(Binary, VariadicSmallTypes) {
  Tensor a = makeTensor(DType::I8, {3}, {100, -5, 7});
  Tensor b = makeTensor(DType::I8, {3}, {100, 9, -7});
  Tensor c = makeTensor(DType::I8, {1}, {1});
  expectClose(runOne("Sum", {&a, &b, &c}, DType::I8, {3}), {-55, 5, 1}, 0, 0);
  expectClose(runOne("Max", {&a, &b, &c}, DType::I8, {3}), {100, 9, 7}, 0, 0);
  Tensor u = makeTensor(DType::U8, {2}, {3, 250});
  Tensor w = makeTensor(DType::U8, {2}, {4, 1});
  expectClose(runOne("Min", {&u, &w}, DType::U8, {2}), {3, 1}, 0, 0);
  for (DType t : {DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtypeName(t));
    Tensor x = makeTensor(t, {3}, {1, 2.5, -4});
    Tensor y = makeTensor(t, {3}, {2, 0.5, 1});
    Tensor z = makeTensor(t, {1}, {0.5});
    expectClose(runOne("Mean", {&x, &y, &z}, t, {3}),
                {storedAs(t, 3.5 / 3), storedAs(t, 3.5 / 3),
                 storedAs(t, -2.5 / 3)}, 0, 0);
    expectClose(runOne("Sum", {&x, &y, &z}, t, {3}), {3.5, 3.5, -2.5}, 0, 0);
  }
  EXPECT_PREPARE_ERROR(
      prepareOnly("Mean", {{DType::I8, {2}}}, {{DType::I8, {2}}}),
      "unsupported dtype");
}

} // namespace
} // namespace tpc::cpu::test
