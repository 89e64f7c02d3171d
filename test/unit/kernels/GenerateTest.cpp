//===- GenerateTest.cpp - Shape, Size, Range, ConstantOfShape -------------===//
#include "KernelTestUtil.h"

#include <cmath>

namespace tpc::cpu::test {
namespace {

TEST(Shape, ReportsDims) {
  Tensor x = randomTensor(DType::F16, {2, 3, 5, 7}, 1);
  expectClose(runOne("Shape", {&x}, DType::I64, {4}), {2, 3, 5, 7}, 0, 0);
  auto sliced = [&](int64_t start, std::optional<int64_t> end, Shape outShape,
                    std::vector<double> expect) {
    Attrs a;
    a.setInt("start", start);
    if (end)
      a.setInt("end", *end);
    SCOPED_TRACE("start " + std::to_string(start));
    expectClose(runOne("Shape", {&x}, DType::I64, outShape, a), expect, 0, 0);
  };
  sliced(1, 3, {2}, {3, 5});
  sliced(-2, std::nullopt, {2}, {5, 7});
  sliced(-10, 100, {4}, {2, 3, 5, 7}); // clamped, not rejected
  sliced(3, 1, {0}, {});
  Tensor s = randomTensor(DType::F32, {}, 2);
  expectClose(runOne("Shape", {&s}, DType::I64, {0}), {}, 0, 0);
  EXPECT_PREPARE_ERROR(prepareOnly("Shape", {x.desc}, {{DType::I32, {4}}}),
                       "unsupported dtype");
  EXPECT_PREPARE_ERROR(prepareOnly("Shape", {x.desc}, {{DType::I64, {3}}}),
                       "does not match");
}

TEST(Size, CountsElements) {
  Tensor x = randomTensor(DType::Bool, {4, 0, 2}, 3);
  expectClose(runOne("Size", {&x}, DType::I64, {}), {0}, 0, 0);
  Tensor y = randomTensor(DType::I8, {4, 3, 2}, 4);
  expectClose(runOne("Size", {&y}, DType::I64, {}), {24}, 0, 0);
  EXPECT_PREPARE_ERROR(prepareOnly("Size", {y.desc}, {{DType::I64, {1, 1}}}),
                       "does not match");
}

TEST(Range, CountsFromStart) {
  struct Case {
    DType t;
    double start, limit, delta;
  };
  for (Case c : {Case{DType::F32, 0.5, 3.2, 0.25}, Case{DType::I64, 10, -7, -3},
                 Case{DType::I32, -4, 9, 2}, Case{DType::F64, 1, 1, 1},
                 Case{DType::F64, -1.5, 2.5, 0.7},
                 // Exact in the 16-bit types: computed in float, rounded.
                 Case{DType::F16, -2, 3, 0.5}, Case{DType::BF16, 1, 9, 0.25}}) {
    SCOPED_TRACE(dtypeName(c.t));
    Tensor s = makeTensor(c.t, {}, {c.start});
    Tensor l = makeTensor(c.t, {}, {c.limit});
    Tensor d = makeTensor(c.t, {1}, {c.delta});
    int64_t n = std::max<int64_t>(
        0, static_cast<int64_t>(std::ceil((c.limit - c.start) / c.delta)));
    std::vector<double> expect;
    for (int64_t i = 0; i < n; ++i)
      expect.push_back(c.start + i * c.delta);
    expectClose(runOne("Range", {&s, &l, &d}, c.t, {n}), expect, 1e-6, 1e-6);
  }
  const TensorDesc f{DType::F32, {}};
  EXPECT_PREPARE_ERROR(
      prepareOnly("Range", {f, f, {DType::F32, {2}}}, {{DType::F32, {3}}}),
      "delta");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Range", {f, {DType::I64, {}}, f}, {{DType::F32, {3}}}),
      "limit");
  EXPECT_PREPARE_ERROR(prepareOnly("Range", {f, f, f}, {{DType::F32, {3, 1}}}),
                       "1-D");
}

TEST(ConstantOfShape, FillsWithValue) {
  Tensor shape = makeTensor(DType::I64, {2}, {2, 3});
  Attrs zero;
  zero.setFloats("value", {0.0});
  expectClose(runOne("ConstantOfShape", {&shape}, DType::F32, {2, 3}, zero),
              std::vector<double>(6, 0.0), 0, 0);
  Attrs f;
  f.setFloats("value", {2.5});
  expectClose(runOne("ConstantOfShape", {&shape}, DType::F16, {2, 3}, f),
              std::vector<double>(6, 2.5), 0, 0);
  expectClose(runOne("ConstantOfShape", {&shape}, DType::F64, {2, 3}, f),
              std::vector<double>(6, 2.5), 0, 0);
  Attrs i;
  i.setInts("value", {9007199254740993LL}); // 2^53 + 1: not exact in double
  Tensor y = runOne("ConstantOfShape", {&shape}, DType::I64, {2, 3}, i);
  for (int64_t k = 0; k < 6; ++k)
    EXPECT_EQ(y.get<int64_t>(k), 9007199254740993LL);
  Attrs one;
  one.setInts("value", {1});
  expectClose(runOne("ConstantOfShape", {}, DType::Bool, {4}, one),
              {1, 1, 1, 1}, 0, 0);
  Attrs two;
  two.setFloats("value", {1, 2});
  EXPECT_PREPARE_ERROR(
      prepareOnly("ConstantOfShape", {shape.desc}, {{DType::F32, {2, 3}}}, two),
      "exactly one");
  EXPECT_PREPARE_ERROR(prepareOnly("ConstantOfShape", {shape.desc},
                                   {{DType::F32, {2, 3, 1}}}, zero),
                       "rank 3");
  // The importer writes ONNX's 0.0f when the model gives no value.
  EXPECT_PREPARE_ERROR(
      prepareOnly("ConstantOfShape", {shape.desc}, {{DType::F32, {2, 3}}}),
      "value is required");
}

} // namespace
} // namespace tpc::cpu::test
