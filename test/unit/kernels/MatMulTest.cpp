//===- MatMulTest.cpp - MatMul and Gemm -----------------------------------===//
#include "KernelTestUtil.h"

namespace tpc::cpu::test {
namespace {

TEST(MatMul, NumpySemantics) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 4}, {4, 5}},
      {{2, 3, 4}, {4, 5}}, // folded into one GEMM
      {{2, 3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {5, 4, 6}}, // batch broadcast both ways
      {{3, 4}, {2, 4, 5}},       // A shared across the batch
      {{4}, {4, 5}},             // vector-matrix
      {{2, 3, 4}, {4}},          // matrix-vector
      {{4}, {4}},                // dot product
      {{1, 3, 4}, {3, 4, 2}},
      {{2, 3, 0}, {0, 5}}, // k = 0 gives zeros
      {{0, 4}, {4, 5}},
      {{65, 33}, {33, 70}},
  };
  uint64_t seed = 1;
  for (DType t : {DType::F32, DType::F64, DType::I64, DType::I32})
    for (const auto &[sa, sb] : cases) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + shapeToString(sa) + " x " +
                   shapeToString(sb));
      Tensor a = randomTensor(t, sa, seed++, -9, 9);
      Tensor b = randomTensor(t, sb, seed++, -9, 9);
      Shape out;
      std::vector<double> expect = refMatMul(a, b, out);
      for (int threads : {1, 2}) {
        std::vector<Tensor> outs;
        outs.emplace_back(t, out);
        Status st = runKernel("MatMul", {&a, &b}, outs, {}, threads);
        ASSERT_TRUE(st.isOk()) << st.message();
        expectClose(outs[0], expect, 1e-5, 1e-4);
      }
    }
}

TEST(MatMul, InvalidInputs) {
  EXPECT_PREPARE_ERROR(prepareOnly("MatMul",
                                   {{DType::F32, {3, 4}}, {DType::F32, {5, 6}}},
                                   {{DType::F32, {3, 6}}}),
                       "inner dims");
  EXPECT_PREPARE_ERROR(
      prepareOnly("MatMul", {{DType::F32, {2, 3, 4}}, {DType::F32, {3, 4, 5}}},
                  {{DType::F32, {3, 3, 5}}}),
      "not broadcastable");
  EXPECT_PREPARE_ERROR(prepareOnly("MatMul",
                                   {{DType::F32, {}}, {DType::F32, {4}}},
                                   {{DType::F32, {}}}),
                       "rank >= 1");
  EXPECT_PREPARE_ERROR(prepareOnly("MatMul",
                                   {{DType::F32, {3, 4}}, {DType::F32, {4, 5}}},
                                   {{DType::F32, {3, 4}}}),
                       "does not match");
  EXPECT_PREPARE_ERROR(
      prepareOnly("MatMul", {{DType::Bool, {3, 4}}, {DType::Bool, {4, 5}}},
                  {{DType::Bool, {3, 5}}}),
      "unsupported dtype");
}

TEST(Gemm, TransposesScalesAndAddsC) {
  uint64_t seed = 100;
  const int64_t m = 5, k = 7, n = 6;
  for (DType t : {DType::F32, DType::F64})
    for (int ta : {0, 1})
      for (int tb : {0, 1})
        for (Shape cs : {Shape{}, Shape{n}, Shape{m, 1}, Shape{m, n},
                         Shape{1, n}, Shape{-1}})
          for (double beta : {0.0, 1.0, -0.5}) {
            SCOPED_TRACE(std::string(dtypeName(t)) + " transA " +
                         std::to_string(ta) + " transB " + std::to_string(tb) +
                         " C " + shapeToString(cs));
            const bool hasC = cs != Shape{-1};
            Tensor a = randomTensor(t, ta ? Shape{k, m} : Shape{m, k}, seed++);
            Tensor b = randomTensor(t, tb ? Shape{n, k} : Shape{k, n}, seed++);
            Tensor c = randomTensor(t, hasC ? cs : Shape{}, seed++);
            const double alpha = 0.75;
            std::vector<double> expect;
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double s = 0;
                for (int64_t p = 0; p < k; ++p)
                  s += a.at(ta ? p * m + i : i * k + p) *
                       b.at(tb ? j * k + p : p * n + j);
                double cv = hasC ? c.at(broadcastIndex({i, j}, cs)) : 0;
                expect.push_back(alpha * s + beta * cv);
              }
            const Attrs at = gemmAttrs(ta, tb, alpha, beta);
            expectClose(
                runOne("Gemm", {&a, &b, hasC ? &c : nullptr}, t, {m, n}, at),
                expect, 1e-5, 1e-5);
          }
}

TEST(Gemm, InvalidInputs) {
  const TensorDesc a{DType::F32, {3, 4}}, b{DType::F32, {4, 5}};
  EXPECT_PREPARE_ERROR(prepareOnly("Gemm", {a, b, {DType::F32, {3, 2}}},
                                   {{DType::F32, {3, 5}}}, gemmAttrs()),
                       "input 2 (C)");
  Attrs t = gemmAttrs(1, 0);
  EXPECT_PREPARE_ERROR(prepareOnly("Gemm", {a, b}, {{DType::F32, {3, 5}}}, t),
                       "inner dims");
  t.setInt("transA", 3);
  EXPECT_PREPARE_ERROR(prepareOnly("Gemm", {a, b}, {{DType::F32, {3, 5}}}, t),
                       "transA");
  EXPECT_PREPARE_ERROR(prepareOnly("Gemm", {{DType::F32, {2, 3, 4}}, b},
                                   {{DType::F32, {3, 5}}}, gemmAttrs()),
                       "2-D");
  EXPECT_PREPARE_ERROR(prepareOnly("Gemm",
                                   {{DType::I64, {3, 4}}, {DType::I64, {4, 5}}},
                                   {{DType::I64, {3, 5}}}, gemmAttrs()),
                       "unsupported dtype");
  // The plan carries every Gemm attribute (ODS defaults included).
  EXPECT_PREPARE_ERROR(prepareOnly("Gemm", {a, b}, {{DType::F32, {3, 5}}}),
                       "transA is required");
}

} // namespace
} // namespace tpc::cpu::test
