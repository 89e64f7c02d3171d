//===- TestEngines.cpp - The engines runtime tests run --------------------===//
#include "TestEngines.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tpc::test {

MlpCase mlpCase(int64_t m, int64_t k, int64_t n) {
  MlpCase c;
  c.m = m;
  c.k = k;
  c.n = n;
  c.x = testValues(size_t(m * k), 1);
  c.w = testValues(size_t(k * n), 2);
  c.b = testValues(size_t(n), 3);
  c.expected = matmulRef(c.x, c.w, m, k, n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double &v = c.expected[size_t(i * n + j)];
      v = std::max(0.0, v + double(c.b[size_t(j)]));
    }
  return c;
}

namespace {

/// Rows [r0, r1) of a row-major matrix with `cols` columns.
std::vector<float> rows(const std::vector<float> &a, int64_t cols, int64_t r0,
                        int64_t r1) {
  return {a.begin() + r0 * cols, a.begin() + r1 * cols};
}

/// Columns [c0, c1) of a row-major matrix with `cols` columns.
std::vector<float> columns(const std::vector<float> &a, int64_t cols,
                           int64_t c0, int64_t c1) {
  std::vector<float> out;
  for (size_t i = 0; i < a.size(); i += size_t(cols))
    out.insert(out.end(), a.begin() + int64_t(i) + c0,
               a.begin() + int64_t(i) + c1);
  return out;
}

/// An engine of `tp` ranks with c's input x and output y: rank r's plan
/// reads x from an arena buffer of its own, and `steps(r, rank, x)` adds its
/// weights, buffers and steps and returns the buffer that holds y.
template <class Steps>
EngineBuilder mlpEngineOf(const MlpCase &c, int tp, Steps steps) {
  EngineBuilder eb(tp);
  eb.addInput("x", c.xDesc());
  eb.addOutput("y", c.yDesc());
  for (int rank = 0; rank < tp; ++rank) {
    RankBuilder &r = eb.rank(rank);
    uint32_t x = r.arena("x", DType::F32, {c.m, c.k});
    r.bindInput("x", x);
    r.bindOutput("y", steps(r, rank, x));
  }
  return eb;
}

/// y = Relu(in + b) through the buffer `a`, in steps named "add" and
/// "relu"; returns y.
uint32_t addBiasRelu(RankBuilder &r, uint32_t in, uint32_t b, uint32_t a,
                     uint32_t y) {
  r.step("Add", {in, b}, {a}, {}, "add");
  r.step("Relu", {a}, {y}, {}, "relu");
  return y;
}

} // namespace

EngineBuilder mlpEngine(const MlpCase &c) {
  return mlpEngineOf(c, 1, [&](RankBuilder &r, int, uint32_t x) {
    uint32_t w = r.weight("w", c.w, {c.k, c.n});
    uint32_t b = r.weight("b", c.b, {c.n});
    uint32_t xw = r.arena("xw", DType::F32, {c.m, c.n});
    uint32_t a = r.arena("a", DType::F32, {c.m, c.n});
    uint32_t y = r.arena("y", DType::F32, {c.m, c.n});
    r.step("MatMul", {x, w}, {xw}, {stringAttr("tp_role", "replicated")}, "mm");
    return addBiasRelu(r, xw, b, a, y);
  });
}

EngineBuilder rowParallelEngine(const MlpCase &c, int64_t kSplit) {
  return mlpEngineOf(c, 2, [&](RankBuilder &r, int rank, uint32_t x) {
    const int64_t k0 = rank ? kSplit : 0, k1 = rank ? c.k : kSplit;
    uint32_t w = r.weight("w", rows(c.w, c.n, k0, k1), {k1 - k0, c.n});
    uint32_t b = r.weight("b", c.b, {c.n});
    uint32_t xs = r.arena("xs", DType::F32, {c.m, k1 - k0});
    uint32_t part = r.arena("part", DType::F32, {c.m, c.n});
    uint32_t sum = r.arena("sum", DType::F32, {c.m, c.n});
    uint32_t a = r.arena("a", DType::F32, {c.m, c.n});
    uint32_t y = r.arena("y", DType::F32, {c.m, c.n});
    r.step("Slice", {x}, {xs},
           {intsAttr("starts", {k0}), intsAttr("ends", {k1}),
            intsAttr("axes", {1}), intsAttr("steps", {1})},
           "slice");
    r.step("MatMul", {xs, w}, {part}, {stringAttr("tp_role", "row")}, "mm");
    r.step("AllReduce", {part}, {sum}, {}, "allreduce");
    return addBiasRelu(r, sum, b, a, y);
  });
}

EngineBuilder columnParallelEngine(const MlpCase &c, int64_t nSplit) {
  return mlpEngineOf(c, 2, [&](RankBuilder &r, int rank, uint32_t x) {
    const int64_t n0 = rank ? nSplit : 0, n1 = rank ? c.n : nSplit;
    const int64_t nr = n1 - n0;
    uint32_t w = r.weight("w", columns(c.w, c.n, n0, n1), {c.k, nr});
    uint32_t b = r.weight("b", {c.b.begin() + n0, c.b.begin() + n1}, {nr});
    uint32_t xw = r.arena("xw", DType::F32, {c.m, nr});
    uint32_t a = r.arena("a", DType::F32, {c.m, nr});
    uint32_t g = r.arena("g", DType::F32, {c.m, c.n});
    uint32_t y = r.arena("y", DType::F32, {c.m, c.n});
    r.step("MatMul", {x, w}, {xw}, {stringAttr("tp_role", "column")}, "mm");
    r.step("Add", {xw, b}, {a}, {}, "add");
    // As the compiler writes it: one part, the whole axis.
    std::vector<plan::Attr> attrs = {intsAttr("axis", {1}),
                                     intsAttr("parts", {c.n})};
    if (2 * nSplit != c.n)
      attrs.push_back(intsAttr("sizes", {nSplit, c.n - nSplit}));
    r.step("AllGather", {a}, {g}, attrs, "allgather");
    r.step("Relu", {g}, {y}, {}, "relu");
    return y;
  });
}

EngineBuilder reduceScatterEngine(const MlpCase &c, int64_t kSplit, int axis,
                                  int64_t split) {
  const int64_t total = axis == 0 ? c.m : c.n;
  return mlpEngineOf(c, 2, [&](RankBuilder &r, int rank, uint32_t x) {
    const int64_t k0 = rank ? kSplit : 0, k1 = rank ? c.k : kSplit;
    const int64_t s0 = rank ? split : 0, s1 = rank ? total : split;
    Shape shard = {c.m, c.n};
    shard[size_t(axis)] = s1 - s0;
    // The bias, laid out like the shard (a full row for axis 0).
    std::vector<float> bias =
        axis == 0 ? c.b : std::vector<float>(c.b.begin() + s0, c.b.begin() + s1);
    uint32_t w = r.weight("w", rows(c.w, c.n, k0, k1), {k1 - k0, c.n});
    uint32_t b = r.weight("b", bias, {int64_t(bias.size())});
    uint32_t xs = r.arena("xs", DType::F32, {c.m, k1 - k0});
    uint32_t part = r.arena("part", DType::F32, {c.m, c.n});
    uint32_t mine = r.arena("mine", DType::F32, shard);
    uint32_t a = r.arena("a", DType::F32, shard);
    uint32_t act = r.arena("act", DType::F32, shard);
    uint32_t y = r.arena("y", DType::F32, {c.m, c.n});
    std::vector<plan::Attr> attrs = {intsAttr("axis", {axis})};
    if (2 * split != total)
      attrs.push_back(intsAttr("sizes", {split, total - split}));
    r.step("Slice", {x}, {xs},
           {intsAttr("starts", {k0}), intsAttr("ends", {k1}),
            intsAttr("axes", {1}), intsAttr("steps", {1})});
    r.step("MatMul", {xs, w}, {part}, {stringAttr("tp_role", "row")}, "mm");
    r.step("ReduceScatter", {part}, {mine}, attrs, "reducescatter");
    r.step("Add", {mine, b}, {a});
    r.step("Relu", {a}, {act});
    r.step("AllGather", {act}, {y}, attrs, "allgather");
    return y;
  });
}

void expectClose(const float *actual, const std::vector<double> &expected,
                 double tolerance) {
  ASSERT_NE(actual, nullptr);
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(double(actual[i]), expected[i], tolerance) << "element " << i;
}

} // namespace tpc::test
