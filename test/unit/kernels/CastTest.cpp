//===- CastTest.cpp - Element type conversion -----------------------------===//
#include "KernelTestUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace tpc::cpu::test {
namespace {

const DType kAll[] = {DType::F32,  DType::F64, DType::F16,
                      DType::BF16, DType::I64, DType::I32,
                      DType::I8,   DType::U8,  DType::Bool};

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 ||
         t == DType::BF16;
}

Attrs castTo(DType t) {
  Attrs a;
  a.setInt("to", static_cast<int64_t>(t));
  return a;
}

Tensor cast(const Tensor &x, DType to) {
  return runOne("Cast", {&x}, to, x.desc.shape, castTo(to));
}

/// The value a cast from `from` should produce, as a double.
double refCast(double v, DType from, DType to) {
  switch (to) {
  case DType::F32:
    return static_cast<float>(v);
  case DType::F64:
    return v;
  case DType::F16:
    return refDecodeHalf(refEncodeHalf(v));
  case DType::BF16:
    return refDecodeBFloat16(refEncodeBFloat16(v));
  case DType::Bool:
    return v != 0;
  default:
    break;
  }
  double lo = to == DType::I8    ? -128
              : to == DType::U8  ? 0
              : to == DType::I32 ? -2147483648.0
                                 : -9223372036854775808.0;
  double hi = to == DType::I8    ? 127
              : to == DType::U8  ? 255
              : to == DType::I32 ? 2147483647.0
                                 : 9223372036854775807.0;
  if (isFloat(from)) {
    if (std::isnan(v))
      return 0;
    return std::min(hi, std::max(lo, std::trunc(v)));
  }
  // Integer sources wrap modulo 2^bits.
  int64_t i = static_cast<int64_t>(v);
  switch (to) {
  case DType::I8:
    return static_cast<int8_t>(i);
  case DType::U8:
    return static_cast<uint8_t>(i);
  case DType::I32:
    return static_cast<int32_t>(i);
  default:
    return static_cast<double>(i);
  }
}

TEST(Cast, AllPairs) {
  uint64_t seed = 1;
  for (DType from : kAll)
    for (DType to : kAll) {
      SCOPED_TRACE(std::string(dtypeName(from)) + " -> " + dtypeName(to));
      double lo = from == DType::U8 ? 0 : -100,
             hi = from == DType::U8 ? 250 : 100;
      Tensor x = randomTensor(from, {3, 17}, seed++, lo, hi);
      x.set(0, 0); // include a zero
      std::vector<double> expect;
      for (double v : x.values())
        expect.push_back(refCast(v, from, to));
      expectClose(cast(x, to), expect, 0, 0);
    }
}

TEST(Cast, FloatToIntSaturates) {
  Tensor x =
      makeTensor(DType::F32, {6}, {1e10f, -1e10f, NAN, 300.7f, -5.5f, 2.9f});
  expectClose(cast(x, DType::I32), {2147483647.0, -2147483648.0, 0, 300, -5, 2},
              0, 0);
  expectClose(cast(x, DType::U8), {255, 0, 0, 255, 0, 2}, 0, 0);
  expectClose(cast(x, DType::I8), {127, -128, 0, 127, -5, 2}, 0, 0);
  Tensor d = makeTensor(DType::F64, {3}, {1e19, -1e19, -0.9});
  Tensor y = cast(d, DType::I64);
  EXPECT_EQ(y.get<int64_t>(0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(y.get<int64_t>(1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(y.get<int64_t>(2), 0);
  Tensor b = cast(makeTensor(DType::F32, {3}, {NAN, -0.0, 0.1}), DType::Bool);
  expectClose(b, {1, 0, 1}, 0, 0);
}

TEST(Cast, HalfRoundingCorners) {
  const double ulp1 = std::ldexp(1.0, -10);
  const std::vector<double> vals = {
      1 + ulp1 / 2,     // tie -> even (1.0)
      1 + 3 * ulp1 / 2, // tie -> even (1 + 2ulp)
      65504,
      65519.99,
      65520,                   // largest, just below overflow, overflow
      std::ldexp(1.0, -24),    // smallest subnormal
      std::ldexp(1.0, -25),    // tie with zero -> 0
      std::ldexp(1.5, -25),    // rounds up to smallest subnormal
      std::ldexp(1023.5, -24), // subnormal tie -> 1024 * 2^-24 (normal)
      -0.0,
      -2.5,
      INFINITY,
      -INFINITY};
  for (DType from : {DType::F32, DType::F64}) {
    Tensor x = makeTensor(from, {static_cast<int64_t>(vals.size())}, vals);
    Tensor h = cast(x, DType::F16);
    for (int64_t i = 0; i < x.numel(); ++i)
      EXPECT_EQ(h.get<uint16_t>(i), refEncodeHalf(x.at(i)))
          << dtypeName(from) << " value " << x.at(i);
  }
  // Rounding the double straight to half differs from rounding it to float
  // first: this value is just above a half tie, but float rounds it onto
  // the tie, which would then go to even.
  const double justAbove = 1 + ulp1 / 2 + std::ldexp(1.0, -40);
  Tensor d = makeTensor(DType::F64, {1}, {justAbove});
  EXPECT_EQ(cast(d, DType::F16).get<uint16_t>(0), 0x3C01);
  const double bfJustAbove = 1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  Tensor e = makeTensor(DType::F64, {1}, {bfJustAbove});
  EXPECT_EQ(cast(e, DType::BF16).get<uint16_t>(0), 0x3F81);
  // NaN stays NaN.
  Tensor n = makeTensor(DType::F32, {1}, {NAN});
  EXPECT_TRUE(std::isnan(cast(n, DType::F16).at(0)));
  EXPECT_TRUE(std::isnan(cast(n, DType::BF16).at(0)));
}

TEST(Cast, SixteenBitFormatsExhaustive) {
  // Every 16-bit pattern decodes exactly to f32.
  for (DType t : {DType::F16, DType::BF16}) {
    Tensor x(t, {65536});
    for (int64_t i = 0; i < 65536; ++i)
      x.put<uint16_t>(i, static_cast<uint16_t>(i));
    Tensor y = cast(x, DType::F32);
    for (int64_t i = 0; i < 65536; ++i) {
      double e = x.at(i), a = y.at(i);
      if (std::isnan(e))
        EXPECT_TRUE(std::isnan(a)) << i;
      else
        ASSERT_EQ(a, e) << dtypeName(t) << " pattern " << i;
    }
  }
  // Random float bit patterns (all exponents, subnormals included) encode
  // like the nearest-search reference.
  std::mt19937 rng(42);
  Tensor f(DType::F32, {20000});
  for (int64_t i = 0; i < f.numel(); ++i)
    f.put<uint32_t>(i, static_cast<uint32_t>(rng()));
  Tensor h = cast(f, DType::F16), b = cast(f, DType::BF16);
  int bad = 0;
  for (int64_t i = 0; i < f.numel() && bad < 5; ++i) {
    double v = f.at(i);
    if (std::isnan(v))
      continue;
    if (h.get<uint16_t>(i) != refEncodeHalf(v) ||
        b.get<uint16_t>(i) != refEncodeBFloat16(v)) {
      ++bad;
      ADD_FAILURE() << "value " << v;
    }
  }
}

TEST(Cast, SixteenAndThirtyTwoBitIntegers) {
  // Floats saturate at the target's bounds and truncate toward zero;
  // integers wrap.
  Tensor f = makeTensor(DType::F32, {5}, {-1e6f, -2.7f, 3.9f, 7e4f, 1e10f});
  expectClose(runOne("Cast", {&f}, DType::I16, {5}, castTo(DType::I16)),
              {-32768, -2, 3, 32767, 32767}, 0, 0);
  expectClose(runOne("Cast", {&f}, DType::U16, {5}, castTo(DType::U16)),
              {0, 0, 3, 65535, 65535}, 0, 0);
  expectClose(runOne("Cast", {&f}, DType::U32, {5}, castTo(DType::U32)),
              {0, 0, 3, 70000, 4294967295.0}, 0, 0);
  Tensor i = makeTensor(DType::I64, {3}, {-1, 65536 + 5, 4294967296.0 + 9});
  expectClose(runOne("Cast", {&i}, DType::U16, {3}, castTo(DType::U16)),
              {65535, 5, 9}, 0, 0);
  expectClose(runOne("Cast", {&i}, DType::U32, {3}, castTo(DType::U32)),
              {4294967295.0, 65541, 9}, 0, 0);
  Tensor u = makeTensor(DType::U32, {2}, {4294967295.0, 7});
  expectClose(runOne("Cast", {&u}, DType::F64, {2}, castTo(DType::F64)),
              {4294967295.0, 7}, 0, 0);
}

/// One float8 format, described independently of the kernel: exponent
/// and mantissa widths, bias, and whether the format is FNUZ (NaN 0x80, no
/// infinity, no -0) or IEEE-like (E5M2: the all-ones exponent is special).
struct Float8Ref {
  DType dtype;
  int ebits, mbits, bias;
  bool fnuz, ieee;
  double maxFinite;

  /// The value of code c, NaN for NaN codes.
  double decode(uint8_t c) const {
    int sign = c >> 7, field = (c >> mbits) & ((1 << ebits) - 1);
    int mant = c & ((1 << mbits) - 1);
    double nan = std::numeric_limits<double>::quiet_NaN();
    if (fnuz && c == 0x80)
      return nan;
    if (!fnuz && !ieee && (c & 0x7F) == 0x7F)
      return nan;
    if (ieee && field == (1 << ebits) - 1)
      return mant ? nan : (sign ? -INFINITY : INFINITY);
    double v = field == 0 ? std::ldexp(mant, 1 - bias - mbits)
                          : std::ldexp((1 << mbits) + mant, field - bias - mbits);
    return sign ? -v : v;
  }
  /// Round to nearest, ties to the even code, by searching every code.
  double nearest(double v) const {
    double best = 0, bestErr = INFINITY;
    int bestCode = 0;
    for (int c = 0; c < 256; ++c) {
      double d = decode(uint8_t(c));
      if (std::isnan(d) || std::isinf(d))
        continue;
      double err = std::fabs(d - v);
      if (err < bestErr || (err == bestErr && (c & 1) == 0 && (bestCode & 1))) {
        best = d, bestErr = err, bestCode = c;
      }
    }
    return best;
  }
};

const Float8Ref kFloat8[] = {
    {DType::F8E4M3FN, 4, 3, 7, false, false, 448},
    {DType::F8E4M3FNUZ, 4, 3, 8, true, false, 240},
    {DType::F8E5M2, 5, 2, 15, false, true, 57344},
    {DType::F8E5M2FNUZ, 5, 2, 16, true, false, 57344}};

Attrs castTo(DType t, bool saturate) {
  Attrs a = castTo(t);
  a.setInt("saturate", saturate ? 1 : 0);
  return a;
}

TEST(Cast, Float8DecodesEveryCode) {
  for (const Float8Ref &f : kFloat8) {
    Tensor x(f.dtype, {256});
    for (int c = 0; c < 256; ++c)
      x.put<uint8_t>(c, uint8_t(c));
    Tensor y = cast(x, DType::F32);
    for (int c = 0; c < 256; ++c) {
      double want = f.decode(uint8_t(c)), got = y.at(c);
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << dtypeName(f.dtype) << " code " << c;
      else
        EXPECT_EQ(got, want) << dtypeName(f.dtype) << " code " << c;
    }
  }
}

TEST(Cast, Float8RoundsToNearestEven) {
  // Every finite value, the midpoints between neighbours (ties), points a
  // quarter of the way, and random floats: all must land on the nearest
  // code, ties on the even one.
  std::mt19937 rng(7);
  for (const Float8Ref &f : kFloat8) {
    std::vector<double> probes;
    std::vector<double> finite;
    for (int c = 0; c < 128; ++c) {
      double d = f.decode(uint8_t(c));
      if (std::isfinite(d))
        finite.push_back(d);
    }
    std::sort(finite.begin(), finite.end());
    for (size_t i = 0; i < finite.size(); ++i) {
      probes.push_back(finite[i]);
      if (i + 1 < finite.size()) {
        double a = finite[i], b = finite[i + 1];
        probes.push_back((a + b) / 2);
        probes.push_back(a + (b - a) / 4);
        probes.push_back(b - (b - a) / 4);
      }
    }
    std::uniform_real_distribution<double> u(-f.maxFinite, f.maxFinite);
    for (int i = 0; i < 2000; ++i)
      probes.push_back(float(u(rng)) * std::ldexp(1.0, -int(rng() % 12)));
    size_t n = probes.size() * 2;
    Tensor x(DType::F32, {int64_t(n)});
    for (size_t i = 0; i < probes.size(); ++i) {
      x.put<float>(2 * i, float(probes[i]));
      x.put<float>(2 * i + 1, -float(probes[i]));
    }
    Tensor y = cast(cast(x, f.dtype), DType::F64);
    int bad = 0;
    for (size_t i = 0; i < n && bad < 5; ++i) {
      double v = x.at(i);
      double want = std::signbit(v) ? -f.nearest(-v) : f.nearest(v);
      if (f.fnuz && want == 0)
        want = 0.0; // no negative zero
      double got = y.at(i);
      if (got != want || std::signbit(got) != std::signbit(want)) {
        ++bad;
        ADD_FAILURE() << dtypeName(f.dtype) << ": " << v << " gave " << got
                      << ", want " << want;
      }
    }
  }
}

TEST(Cast, Float8OutOfRange) {
  const double big = 1e6, inf = INFINITY, nan = NAN;
  Tensor x = makeTensor(DType::F32, {5}, {big, -big, inf, -inf, nan});
  for (const Float8Ref &f : kFloat8) {
    SCOPED_TRACE(dtypeName(f.dtype));
    // Saturating (the default): clamp to the largest finite value.
    Tensor s = runOne("Cast", {&x}, f.dtype, {5}, castTo(f.dtype, true));
    Tensor sv = cast(s, DType::F64);
    EXPECT_EQ(sv.at(0), f.maxFinite);
    EXPECT_EQ(sv.at(1), -f.maxFinite);
    EXPECT_EQ(sv.at(2), f.maxFinite);
    EXPECT_EQ(sv.at(3), -f.maxFinite);
    EXPECT_TRUE(std::isnan(sv.at(4)));
    // Not saturating: infinity where the format has one, else NaN.
    Tensor n = runOne("Cast", {&x}, f.dtype, {5}, castTo(f.dtype, false));
    Tensor nv = cast(n, DType::F64);
    for (int i = 0; i < 4; ++i) {
      if (f.ieee)
        EXPECT_EQ(nv.at(i), i % 2 ? -inf : inf) << i;
      else
        EXPECT_TRUE(std::isnan(nv.at(i))) << i;
    }
  }
  EXPECT_PREPARE_ERROR(prepareOnly("Cast", {{DType::F32, {2}}},
                                   {{DType::F8E4M3FN, {2}}},
                                   [] {
                                     Attrs a = castTo(DType::F8E4M3FN);
                                     a.setInt("saturate", 2);
                                     return a;
                                   }()),
                       "saturate must be 0 or 1");
}

TEST(Cast, SubByteIntegers) {
  struct Case {
    DType t;
    int lo, hi;
  };
  const Case cases[] = {{DType::I4, -8, 7}, {DType::U4, 0, 15},
                        {DType::I2, -2, 1}, {DType::U2, 0, 3}};
  for (const Case &c : cases) {
    SCOPED_TRACE(dtypeName(c.t));
    // Floats truncate toward zero; NaN and out-of-range values give 0.
    std::vector<double> in, want;
    for (double v = c.lo - 3.5; v <= c.hi + 3.5; v += 0.25) {
      in.push_back(v);
      double t = std::trunc(v);
      want.push_back(t >= c.lo && t <= c.hi ? t : 0);
    }
    in.push_back(NAN);
    want.push_back(0);
    Tensor f = makeTensor(DType::F32, {int64_t(in.size())}, in);
    Tensor q = runOne("Cast", {&f}, c.t, f.desc.shape, castTo(c.t));
    expectClose(cast(q, DType::F32), want, 0, 0);
    for (int64_t i = 0; i < q.numel(); ++i)
      EXPECT_LT(q.get<uint8_t>(i), 1 << (c.hi - c.lo == 15 ? 4 : 2))
          << "element " << i << " leaves bits above its width";
    // Integers keep their low bits (two's complement wrap), and decoding
    // ignores the bits above the width.
    Tensor i = makeTensor(DType::I32, {4}, {double(c.hi + 1), double(c.lo - 1), -1, 100});
    Tensor w = cast(cast(i, c.t), DType::I32);
    int span = c.hi - c.lo + 1;
    auto wrap = [&](int v) {
      int m = ((v - c.lo) % span + span) % span;
      return double(m + c.lo);
    };
    expectClose(w, {wrap(c.hi + 1), wrap(c.lo - 1), wrap(-1), wrap(100)}, 0, 0);
    Tensor dirty(c.t, {1});
    dirty.put<uint8_t>(0, uint8_t(0xF0 | (c.hi & 0x3)));
    expectClose(cast(dirty, DType::I32), {double(c.hi & 0x3)}, 0, 0);
  }
}

TEST(Cast, InvalidInputs) {
  const TensorDesc x{DType::F32, {2}};
  EXPECT_PREPARE_ERROR(prepareOnly("Cast", {x}, {{DType::I64, {2}}}),
                       "attribute to");
  Attrs bad;
  bad.setInt("to", 14); // complex64
  EXPECT_PREPARE_ERROR(prepareOnly("Cast", {x}, {{DType::I64, {2}}}, bad),
                       "not a supported dtype");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Cast", {x}, {{DType::I32, {2}}}, castTo(DType::I64)),
      "attribute to is i64");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Cast", {x}, {{DType::I64, {3}}}, castTo(DType::I64)),
      "does not match");
}

} // namespace
} // namespace tpc::cpu::test
