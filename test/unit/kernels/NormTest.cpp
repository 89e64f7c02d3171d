//===- NormTest.cpp - Softmax, LogSoftmax, LayerNormalization, RMSNorm ----===//
#include "KernelTestUtil.h"

#include <cmath>

namespace tpc::cpu::test {
namespace {

/// Reference softmax of `x` along `axis`, in double.
std::vector<double> refSoftmax(const Tensor &x, int64_t axis, bool log) {
  const Shape &s = x.desc.shape;
  std::vector<double> r(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    double mx = -INFINITY;
    for (int64_t k = 0; k < s[axis]; ++k) {
      idx[axis] = k;
      mx = std::max(mx, x.at(ravel(idx, s)));
    }
    double sum = 0;
    for (int64_t k = 0; k < s[axis]; ++k) {
      idx[axis] = k;
      sum += std::exp(x.at(ravel(idx, s)) - mx);
    }
    double v = x.at(i) - mx;
    r[i] = log ? v - std::log(sum) : std::exp(v) / sum;
  }
  return r;
}

TEST(Softmax, AlongAnyAxis) {
  uint64_t seed = 1;
  for (const char *name : {"Softmax", "LogSoftmax"})
    for (DType t : {DType::F32, DType::F64})
      for (Shape s : {Shape{3, 4, 5}, Shape{2, 1000}, Shape{7}, Shape{4, 1}})
        for (int64_t axis = -static_cast<int64_t>(s.size());
             axis < static_cast<int64_t>(s.size()); ++axis) {
          SCOPED_TRACE(std::string(name) + " " + dtypeName(t) + " " +
                       shapeToString(s) + " axis " + std::to_string(axis));
          Tensor x = randomTensor(t, s, seed++, -8, 8);
          Attrs a = softmaxAttrs(axis);
          int64_t ax = axis < 0 ? axis + static_cast<int64_t>(s.size()) : axis;
          bool log = std::string(name) == "LogSoftmax";
          expectClose(runOne(name, {&x}, t, s, a), refSoftmax(x, ax, log), 1e-5,
                      1e-7);
        }
  // Large inputs must not overflow.
  Tensor x = makeTensor(DType::F32, {2, 3}, {1000, 1001, 1002, -5, 0, 5});
  expectClose(runOne("Softmax", {&x}, DType::F32, {2, 3}, softmaxAttrs()),
              refSoftmax(x, 1, false), 1e-5, 1e-7);
  EXPECT_PREPARE_ERROR(prepareOnly("Softmax", {{DType::F32, {2, 3}}},
                                   {{DType::F32, {2, 3}}}, softmaxAttrs(2)),
                       "out of range");
  EXPECT_PREPARE_ERROR(
      prepareOnly("LogSoftmax", {{DType::I64, {2, 3}}}, {{DType::I64, {2, 3}}}),
      "unsupported dtype");
}

/// Reference layer norm / RMS norm over the trailing dims from `axis`.
void refNorm(const Tensor &x, const Tensor &scale, const Tensor *bias,
             int64_t axis, double eps, bool rms, std::vector<double> &y,
             std::vector<double> &mean, std::vector<double> &invStd) {
  const Shape &s = x.desc.shape;
  int64_t n = 1;
  for (size_t d = axis; d < s.size(); ++d)
    n *= s[d];
  const int64_t rows = x.numel() / n;
  y.assign(x.numel(), 0);
  mean.assign(rows, 0);
  invStd.assign(rows, 0);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    if (!rms) {
      for (int64_t i = 0; i < n; ++i)
        m += x.at(r * n + i);
      m /= n;
    }
    for (int64_t i = 0; i < n; ++i)
      v += (x.at(r * n + i) - m) * (x.at(r * n + i) - m);
    v /= n;
    double inv = 1 / std::sqrt(v + eps);
    for (int64_t i = 0; i < n; ++i)
      y[r * n + i] = (x.at(r * n + i) - m) * inv * scale.at(i) +
                     (bias ? bias->at(i) : 0.0);
    mean[r] = m;
    invStd[r] = inv;
  }
}

TEST(LayerNormalization, MatchesReference) {
  uint64_t seed = 100;
  struct Case {
    Shape shape;
    int64_t axis;
  };
  for (DType t : {DType::F32, DType::F64})
    for (Case c : {Case{{2, 3, 16}, -1}, Case{{4, 5, 6}, 1}, Case{{3, 768}, -1},
                   Case{{5}, 0}, Case{{2, 2, 3}, -2}})
      for (bool withBias : {false, true}) {
        SCOPED_TRACE(std::string(dtypeName(t)) + " " + shapeToString(c.shape) +
                     " axis " + std::to_string(c.axis));
        const int64_t rank = static_cast<int64_t>(c.shape.size());
        const int64_t ax = c.axis < 0 ? c.axis + rank : c.axis;
        Shape normShape(c.shape.begin() + ax, c.shape.end());
        Shape statShape = c.shape;
        for (int64_t d = ax; d < rank; ++d)
          statShape[d] = 1;
        // An offset keeps the mean away from 0 so that it matters.
        Tensor x = randomTensor(t, c.shape, seed++, 1, 5);
        Tensor scale = randomTensor(t, normShape, seed++, 0.5, 1.5);
        Tensor bias = randomTensor(t, normShape, seed++, -1, 1);
        std::vector<double> y, mean, inv;
        refNorm(x, scale, withBias ? &bias : nullptr, ax, 1e-3, false, y, mean,
                inv);
        std::vector<Tensor> outs;
        outs.emplace_back(t, c.shape);
        outs.emplace_back(t, statShape);
        outs.emplace_back(t, statShape);
        Attrs a = normAttrs(c.axis, 1e-3);
        Status st =
            runKernel("LayerNormalization",
                      {&x, &scale, withBias ? &bias : nullptr}, outs, a);
        ASSERT_TRUE(st.isOk()) << st.message();
        expectClose(outs[0], y, 1e-5, 1e-5);
        expectClose(outs[1], mean, 1e-6, 1e-6);
        expectClose(outs[2], inv, 1e-5, 1e-6);
      }
  // Y alone, with a scale with a leading unit dim.
  Tensor x = randomTensor(DType::F32, {3, 8}, 7);
  Tensor scale = randomTensor(DType::F32, {1, 8}, 8);
  std::vector<double> y, mean, inv;
  refNorm(x, scale, nullptr, 1, 1e-5, false, y, mean, inv);
  expectClose(runOne("LayerNormalization", {&x, &scale}, DType::F32, {3, 8},
                     normAttrs()),
              y, 1e-5, 1e-5);
}

TEST(Norms, AttributesComeFromThePlan) {
  // Defaults are the compiler's to write (ODS); a plan without one of the
  // attributes a kernel reads is refused, naming it.
  const TensorDesc x{DType::F32, {2, 8}}, w{DType::F32, {8}};
  EXPECT_PREPARE_ERROR(prepareOnly("Softmax", {x}, {x}),
                       "attribute axis is required");
  Attrs noEpsilon = softmaxAttrs();
  EXPECT_PREPARE_ERROR(prepareOnly("LayerNormalization", {x, w}, {x}, noEpsilon),
                       "attribute epsilon is required");
  EXPECT_PREPARE_ERROR(prepareOnly("RMSNormalization", {x, w}, {x}),
                       "attribute axis is required");
  Attrs noRms;
  noRms.setInt("axis", -1);
  noRms.setFloat("epsilon", 1e-5);
  EXPECT_PREPARE_ERROR(prepareOnly("AddNormalization", {x, x, w}, {x, x}, noRms),
                       "attribute rms is required");
}

TEST(LayerNormalization, InvalidInputs) {
  const TensorDesc x{DType::F32, {2, 8}};
  const Attrs a = normAttrs();
  EXPECT_PREPARE_ERROR(
      prepareOnly("LayerNormalization", {x, {DType::F32, {4}}}, {x}, a),
      "normalized shape");
  EXPECT_PREPARE_ERROR(prepareOnly("LayerNormalization",
                                   {x, {DType::F32, {8}}, {DType::F32, {2, 8}}},
                                   {x}, a),
                       "input 2 (B)");
  EXPECT_PREPARE_ERROR(
      prepareOnly("LayerNormalization", {x, {DType::F64, {8}}}, {x}, a),
      "dtype mismatch");
  EXPECT_PREPARE_ERROR(prepareOnly("LayerNormalization", {x, {DType::F32, {8}}},
                                   {x, {DType::F32, {2}}}, a),
                       "output 1");
  EXPECT_PREPARE_ERROR(prepareOnly("LayerNormalization", {x}, {x}),
                       "expected 2 to 3 inputs");
}

TEST(RMSNorm, MatchesReference) {
  uint64_t seed = 200;
  for (DType t : {DType::F32, DType::F64})
    for (Shape s : {Shape{2, 3, 64}, Shape{5, 7}}) {
      Tensor x = randomTensor(t, s, seed++, -3, 3);
      Tensor scale = randomTensor(t, {s.back()}, seed++, 0.5, 1.5);
      std::vector<double> y, mean, inv;
      refNorm(x, scale, nullptr, static_cast<int64_t>(s.size()) - 1, 1e-6, true,
              y, mean, inv);
      Attrs a = normAttrs(-1, 1e-6);
      expectClose(runOne("RMSNormalization", {&x, &scale}, t, s, a), y, 1e-5, 1e-5);
    }
  // Normalizing the last two dims.
  Tensor x = randomTensor(DType::F32, {3, 4, 5}, 300);
  Tensor scale = randomTensor(DType::F32, {4, 5}, 301);
  std::vector<double> y, mean, inv;
  refNorm(x, scale, nullptr, 1, 1e-5, true, y, mean, inv);
  Attrs a = normAttrs(-2);
  expectClose(runOne("RMSNormalization", {&x, &scale}, DType::F32, {3, 4, 5}, a), y,
              1e-5, 1e-5);
  EXPECT_PREPARE_ERROR(
      prepareOnly("RMSNormalization", {x.desc, {DType::F32, {5}}}, {x.desc}, a),
      "normalized shape");
  Attrs eps = normAttrs(-1, -1);
  EXPECT_PREPARE_ERROR(
      prepareOnly("RMSNormalization", {x.desc, {DType::F32, {5}}}, {x.desc}, eps),
      "epsilon");
}

} // namespace
} // namespace tpc::cpu::test
