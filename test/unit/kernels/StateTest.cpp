//===- StateTest.cpp - The KV-cache write kernel --------------------------===//
#include "KernelTestUtil.h"

namespace tpc::cpu::test {
namespace {

/// state [2, 3, L=5, 4] with `n` new rows written at `pos` along axis 2,
/// computed by index arithmetic.
std::vector<double> reference(const Tensor &state, const Tensor &update,
                              int64_t pos, int64_t n) {
  std::vector<double> out = state.values();
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t t = 0; t < n; ++t)
        for (int64_t d = 0; d < 4; ++d)
          out[((a * 3 + h) * 5 + pos + t) * 4 + d] =
              update.at(((a * 3 + h) * n + t) * 4 + d);
  return out;
}

TEST(CacheWrite, WritesNewRowsAtThePosition) {
  Tensor state = randomTensor(DType::F32, {2, 3, 5, 4}, 40);
  for (int64_t n : {1, 2}) {
    Tensor update = randomTensor(DType::F32, {2, 3, n, 4}, 41 + uint64_t(n));
    for (int64_t pos = 0; pos + n <= 5; ++pos) {
      Tensor p = makeTensor(DType::I64, {1}, {double(pos)});
      Attrs a;
      a.setInt("axis", 2);
      expectClose(runOne("CacheWrite", {&state, &update, &p}, DType::F32,
                         {2, 3, 5, 4}, a),
                  reference(state, update, pos, n), 0, 0);
    }
  }
}

TEST(CacheWrite, WritesInPlaceWithoutTouchingTheRest) {
  Tensor state = randomTensor(DType::F32, {2, 3, 5, 4}, 50);
  Tensor update = randomTensor(DType::F32, {2, 3, 1, 4}, 51);
  Tensor p = makeTensor(DType::I64, {1}, {3});
  std::vector<double> want = reference(state, update, 3, 1);
  const KernelDef *def = lookupKernel("CacheWrite");
  ASSERT_NE(def, nullptr);
  std::unique_ptr<PreparedKernel> k;
  Attrs a;
  a.setInt("axis", 2);
  ASSERT_TRUE(def->prepare({state.desc, update.desc, p.desc}, {state.desc}, a,
                           k));
  const void *in[] = {state.data(), update.data(), p.data()};
  void *out[] = {state.data()};
  k->run(in, out, ExecContext{});
  ASSERT_TRUE(k->runStatus());
  expectClose(state, want, 0, 0);
}

TEST(CacheWrite, PositionsOutsideTheCacheFailTheRun) {
  Tensor state = randomTensor(DType::F32, {2, 3, 5, 4}, 60);
  Tensor update = randomTensor(DType::F32, {2, 3, 2, 4}, 61);
  Attrs a;
  a.setInt("axis", 2);
  Tensor past = makeTensor(DType::I64, {1}, {4});
  expectRunError("CacheWrite", {&state, &update, &past}, DType::F32,
                 {2, 3, 5, 4},
                 "cache position 4 with 2 new entries lies outside the cache "
                 "of 5 positions",
                 a);
  Tensor neg = makeTensor(DType::I64, {1}, {-1});
  expectRunError("CacheWrite", {&state, &update, &neg}, DType::F32,
                 {2, 3, 5, 4}, "cache position -1", a);
}

TEST(CacheWrite, InvalidInputs) {
  const TensorDesc s{DType::F32, {1, 2, 8, 4}};
  const TensorDesc pos{DType::I64, {1}};
  const Attrs a = ints("axis", {2});
  EXPECT_PREPARE_ERROR(
      prepareOnly("CacheWrite", {s, {DType::F32, {1, 3, 1, 4}}, pos}, {s}, a),
      "does not fit the state");
  EXPECT_PREPARE_ERROR(
      prepareOnly("CacheWrite", {s, {DType::F32, {1, 2, 9, 4}}, pos}, {s}, a),
      "does not fit the state");
  EXPECT_PREPARE_ERROR(
      prepareOnly("CacheWrite",
                  {s, {DType::F32, {1, 2, 1, 4}}, {DType::I64, {2}}}, {s}, a),
      "must hold one value");
  EXPECT_PREPARE_ERROR(
      prepareOnly("CacheWrite", {s, {DType::F16, {1, 2, 1, 4}}, pos}, {s}, a),
      "input 1");
  // The plan carries the axis (the KV-cache pass writes it).
  EXPECT_PREPARE_ERROR(
      prepareOnly("CacheWrite", {s, {DType::F32, {1, 2, 1, 4}}, pos}, {s}),
      "axis is required");
}

} // namespace
} // namespace tpc::cpu::test
