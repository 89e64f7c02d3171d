//===- ReduceTest.cpp - Reductions, ArgMax/ArgMin, TopK and CumSum -------===//
#include "KernelTestUtil.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

namespace tpc::cpu::test {
namespace {

struct ReduceRef {
  const char *name;
  double init;
  std::function<double(double, double)> combine;
  std::function<double(double, int64_t)> finish;
};

std::vector<ReduceRef> refs() {
  auto same = [](double v, int64_t) { return v; };
  return {
      {"ReduceSum", 0, [](double a, double x) { return a + x; }, same},
      {"ReduceMean", 0, [](double a, double x) { return a + x; },
       [](double v, int64_t n) { return v / n; }},
      {"ReduceMax", -INFINITY,
       [](double a, double x) { return std::max(a, x); }, same},
      {"ReduceMin", INFINITY, [](double a, double x) { return std::min(a, x); },
       same},
      {"ReduceProd", 1, [](double a, double x) { return a * x; }, same},
      {"ReduceL2", 0, [](double a, double x) { return a + x * x; },
       [](double v, int64_t) { return std::sqrt(v); }},
      {"ReduceSumSquare", 0, [](double a, double x) { return a + x * x; },
       same},
  };
}

/// Reference reduction of `x` over `reduced` dims, returning the output
/// shape with or without kept dims.
std::vector<double> refReduce(const Tensor &x, const std::vector<bool> &reduced,
                              bool keepDims, const ReduceRef &r, Shape &out) {
  const Shape &s = x.desc.shape;
  Shape kept;
  out.clear();
  int64_t count = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    kept.push_back(reduced[d] ? 1 : s[d]);
    if (reduced[d])
      count *= s[d];
    if (!reduced[d] || keepDims)
      out.push_back(kept.back());
  }
  std::vector<double> acc(numElements(kept), r.init);
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    for (size_t d = 0; d < s.size(); ++d)
      if (reduced[d])
        idx[d] = 0;
    double &a = acc[ravel(idx, kept)];
    a = r.combine(a, x.at(i));
  }
  for (double &a : acc)
    a = r.finish(a, count);
  return acc;
}

/// The attributes the compiler writes for a Reduce* op.
Attrs reduceAttrs(std::vector<int64_t> axes, int64_t keepdims = 1,
                  int64_t noop = 0) {
  Attrs a;
  a.setInts("axes", std::move(axes));
  a.setInt("keepdims", keepdims);
  a.setInt("noop_with_empty_axes", noop);
  return a;
}

TEST(Reduce, AllOpsAllAxisSets) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
  };
  const std::vector<Case> cases = {
      {{3, 4, 5}, {-1}},      {{3, 4, 5}, {0}}, {{3, 4, 5}, {1}},
      {{3, 4, 5}, {0, 2}},    {{3, 4, 5}, {}},  {{3, 4, 5}, {2, 1, 0}},
      {{2, 1, 3}, {1}},       {{6}, {0}},       {{4, 37}, {1}},
      {{2, 3, 4, 5}, {1, 3}}, {{37, 3}, {0}},
  };
  uint64_t seed = 1;
  for (DType t : {DType::F32, DType::F64, DType::I64, DType::I32})
    for (const ReduceRef &r : refs())
      for (const Case &c : cases)
        for (int keep : {0, 1}) {
          SCOPED_TRACE(std::string(r.name) + " " + dtypeName(t) + " " +
                       shapeToString(c.shape) + " keepdims " +
                       std::to_string(keep));
          bool isInt = t == DType::I64 || t == DType::I32;
          // Products of many values explode; keep factors near 1 for
          // floats and in {-1, 0, 1} for integers.
          bool prod = std::string(r.name) == "ReduceProd";
          double lo = prod ? (isInt ? -1 : 0.8) : -5;
          double hi = prod ? (isInt ? 1 : 1.25) : 5;
          Tensor x = randomTensor(t, c.shape, seed++, lo, hi);
          std::vector<bool> reduced(c.shape.size(), c.axes.empty());
          for (int64_t a : c.axes)
            reduced[a < 0 ? a + c.shape.size() : a] = true;
          Shape out;
          std::vector<double> expect = refReduce(x, reduced, keep, r, out);
          if (isInt)
            for (double &v : expect)
              v = std::trunc(v); // integer Mean / L2 truncate
          Attrs a = reduceAttrs(c.axes, keep);
          expectClose(runOne(r.name, {&x}, t, out, a), expect, 1e-5, 1e-5);
        }
}

TEST(Reduce, NoopWithEmptyAxes) {
  Tensor x = randomTensor(DType::F32, {3, 4}, 50);
  Attrs a = reduceAttrs({}, 1, 1);
  expectClose(runOne("ReduceSum", {&x}, DType::F32, {3, 4}, a), x.values());
  std::vector<double> sq;
  for (double v : x.values())
    sq.push_back(v * v);
  expectClose(runOne("ReduceSumSquare", {&x}, DType::F32, {3, 4}, a), sq);
  // Without it, empty axes reduce everything.
  const std::vector<double> v = x.values();
  expectClose(runOne("ReduceMax", {&x}, DType::F32, {1, 1}, reduceAttrs({})),
              {*std::max_element(v.begin(), v.end())});
}

TEST(Reduce, EmptyAndNaN) {
  Tensor e(DType::F32, {2, 0});
  Attrs a = reduceAttrs({1}, 0);
  expectClose(runOne("ReduceSum", {&e}, DType::F32, {2}, a), {0, 0});
  expectClose(runOne("ReduceMax", {&e}, DType::F32, {2}, a),
              {-INFINITY, -INFINITY});
  Tensor n = makeTensor(DType::F32, {2, 3}, {1, NAN, 3, 4, 5, 6});
  expectClose(runOne("ReduceMax", {&n}, DType::F32, {2}, a), {NAN, 6});
  expectClose(runOne("ReduceMin", {&n}, DType::F32, {2}, a), {NAN, 4});
}

TEST(Reduce, InvalidInputs) {
  const TensorDesc x{DType::F32, {3, 4}};
  Attrs a = reduceAttrs({2});
  EXPECT_PREPARE_ERROR(prepareOnly("ReduceSum", {x}, {{DType::F32, {3, 1}}}, a),
                       "out of range");
  a.setInts("axes", {1, -1});
  EXPECT_PREPARE_ERROR(prepareOnly("ReduceSum", {x}, {{DType::F32, {3, 1}}}, a),
                       "repeated");
  a.setInts("axes", {1});
  EXPECT_PREPARE_ERROR(prepareOnly("ReduceSum", {x}, {{DType::F32, {3}}}, a),
                       "does not match");
  a.setInt("keepdims", 2);
  EXPECT_PREPARE_ERROR(prepareOnly("ReduceSum", {x}, {{DType::F32, {3}}}, a),
                       "keepdims");
  EXPECT_PREPARE_ERROR(
      prepareOnly("ReduceMean", {{DType::Bool, {3}}}, {{DType::Bool, {1}}}),
      "unsupported dtype");
  // Defaults are the compiler's to write (ODS): a plan without an attribute
  // the kernel reads is refused, naming it.
  Attrs noKeep;
  noKeep.setInts("axes", {1});
  EXPECT_PREPARE_ERROR(
      prepareOnly("ReduceSum", {x}, {{DType::F32, {3, 1}}}, noKeep),
      "attribute keepdims is required");
  EXPECT_PREPARE_ERROR(prepareOnly("ArgMax", {x}, {{DType::I64, {1, 4}}}),
                       "attribute axis is required");
}

TEST(ArgReduce, MaxAndMin) {
  uint64_t seed = 60;
  for (const char *name : {"ArgMax", "ArgMin"})
    for (DType t : {DType::F32, DType::I64})
      for (Shape s : {Shape{3, 4, 5}, Shape{7}, Shape{2, 1, 3}})
        for (int64_t axis = -static_cast<int64_t>(s.size());
             axis < static_cast<int64_t>(s.size()); ++axis)
          for (int keep : {0, 1})
            for (int last : {0, 1}) {
              SCOPED_TRACE(std::string(name) + " " + shapeToString(s) +
                           " axis " + std::to_string(axis));
              bool isMax = std::string(name) == "ArgMax";
              // Few distinct values so that ties exercise select_last_index.
              Tensor x = randomTensor(t, s, seed++, 0, 3);
              for (int64_t i = 0; i < x.numel(); ++i)
                x.set(i, std::floor(x.at(i)));
              const int64_t rank = static_cast<int64_t>(s.size());
              const int64_t ax = axis < 0 ? axis + rank : axis;
              Shape kept = s;
              kept[ax] = 1;
              Shape out = kept;
              if (!keep)
                out.erase(out.begin() + ax);
              std::vector<double> expect(numElements(kept));
              for (int64_t i = 0; i < numElements(kept); ++i) {
                std::vector<int64_t> idx = unravel(i, kept);
                int64_t best = 0;
                double bv = x.at(ravel(idx, s));
                for (int64_t k = 1; k < s[ax]; ++k) {
                  idx[ax] = k;
                  double v = x.at(ravel(idx, s));
                  bool better = isMax ? (v > bv || (last && v == bv))
                                      : (v < bv || (last && v == bv));
                  if (better) {
                    best = k;
                    bv = v;
                  }
                }
                expect[i] = static_cast<double>(best);
              }
              Attrs a;
              a.setInt("axis", axis);
              a.setInt("keepdims", keep);
              a.setInt("select_last_index", last);
              expectClose(runOne(name, {&x}, DType::I64, out, a), expect, 0, 0);
            }
  EXPECT_PREPARE_ERROR(
      prepareOnly("ArgMax", {{DType::F32, {3, 4}}}, {{DType::I32, {1, 4}}}),
      "unsupported dtype");
  Attrs a;
  a.setInt("axis", 1);
  a.setInt("keepdims", 1);
  a.setInt("select_last_index", 0);
  EXPECT_PREPARE_ERROR(prepareOnly("ArgMax", {{DType::F32, {3, 0}}},
                                   {{DType::I64, {3, 1}}}, a),
                       "empty axis");
}

Attrs topKAttrs(int64_t k, int64_t axis, int largest) {
  Attrs a;
  a.setInt("k", k);
  a.setInt("axis", axis);
  a.setInt("largest", largest);
  a.setInt("sorted", 1);
  return a;
}

/// Scalar reference of TopK: each line's positions stably sorted by value
/// (so equal values keep index order), NaN above every number; the first k.
void refTopK(const Tensor &x, int64_t axis, int64_t k, bool largest,
             std::vector<double> &values, std::vector<double> &indices) {
  const Shape &s = x.desc.shape;
  Shape os = s;
  os[axis] = k;
  values.assign(numElements(os), 0);
  indices.assign(numElements(os), 0);
  Shape lines = s;
  lines[axis] = 1;
  auto above = [](double a, double b) { // a ranks above b
    return std::isnan(a) ? !std::isnan(b) : !std::isnan(b) && a > b;
  };
  for (int64_t l = 0; l < numElements(lines); ++l) {
    std::vector<int64_t> pos = unravel(l, lines);
    std::vector<int64_t> order(s[axis]);
    for (int64_t a = 0; a < s[axis]; ++a)
      order[a] = a;
    auto at = [&](int64_t a) {
      pos[axis] = a;
      return x.at(ravel(pos, s));
    };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? above(at(a), at(b)) : above(at(b), at(a));
    });
    for (int64_t r = 0; r < k; ++r) {
      const double v = at(order[r]);
      pos[axis] = r;
      values[ravel(pos, os)] = v;
      indices[ravel(pos, os)] = double(order[r]);
    }
  }
}

/// Runs TopK on `x` and checks both outputs against refTopK, exactly.
void expectTopK(const Tensor &x, int64_t axis, int64_t k, int largest) {
  const int64_t rank = int64_t(x.desc.shape.size());
  const int64_t ax = axis < 0 ? axis + rank : axis;
  Shape os = x.desc.shape;
  os[ax] = k;
  std::vector<Tensor> outs;
  outs.emplace_back(x.desc.dtype, os);
  outs.emplace_back(DType::I64, os);
  ASSERT_TRUE(
      runKernel("TopK", {&x}, outs, topKAttrs(k, axis, largest)).isOk());
  std::vector<double> values, indices;
  refTopK(x, ax, k, largest, values, indices);
  expectClose(outs[0], values, 0, 0);
  expectClose(outs[1], indices, 0, 0);
}

TEST(TopK, EveryDTypeAxisAndK) {
  struct Case {
    Shape shape;
    int64_t axis, k;
  };
  const std::vector<Case> cases = {
      {{5, 37}, -1, 5},  {{3, 8, 4}, 1, 8}, {{4, 6, 2}, 0, 2},
      {{2, 9, 3}, -2, 1}, {{6}, 0, 0},      {{1, 300}, 1, 40},
  };
  uint64_t seed = 900;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32,
                  DType::I64, DType::I8, DType::U8})
    for (const Case &c : cases)
      for (int largest : {1, 0}) {
        SCOPED_TRACE(std::string(dtypeName(t)) + " " + shapeToString(c.shape) +
                     " axis " + std::to_string(c.axis) + " k " +
                     std::to_string(c.k) + " largest " +
                     std::to_string(largest));
        // Few distinct values, so that most lines have ties.
        Tensor x = randomTensor(t, c.shape, seed++, 0, 6);
        for (int64_t i = 0; i < x.numel(); ++i)
          x.set(i, std::floor(x.at(i)));
        if (t == DType::F32 || t == DType::F16)
          for (int64_t i = 3; i < x.numel(); i += 7)
            x.set(i, i % 2 ? std::nan("") : -INFINITY);
        expectTopK(x, c.axis, c.k, largest);
      }
}

TEST(TopK, RandomFloatsAndLongLines) {
  Tensor x = randomTensor(DType::F32, {3, 5000}, 77, -100, 100);
  expectTopK(x, 1, 50, 1);
  expectTopK(x, 1, 50, 0);
  Tensor b = randomTensor(DType::BF16, {7, 64, 3}, 78, -1, 1);
  expectTopK(b, 1, 64, 1);
}

TEST(TopK, NaNAndTiesAsOnnxruntime) {
  // onnxruntime 1.32's CPU provider on this line, k = 8: NaN above +inf
  // both ways, equal values (NaNs too) by lower index.
  const double nan = std::nan("");
  Tensor x = makeTensor(DType::F32, {1, 8},
                        {1, nan, 3, nan, 2, 3, -INFINITY, INFINITY});
  std::vector<Tensor> outs;
  outs.emplace_back(DType::F32, Shape{1, 8});
  outs.emplace_back(DType::I64, Shape{1, 8});
  ASSERT_TRUE(runKernel("TopK", {&x}, outs, topKAttrs(8, 1, 1)).isOk());
  expectClose(outs[0], {nan, nan, INFINITY, 3, 3, 2, 1, -INFINITY}, 0, 0);
  expectClose(outs[1], {1, 3, 7, 2, 5, 4, 0, 6}, 0, 0);
  ASSERT_TRUE(runKernel("TopK", {&x}, outs, topKAttrs(8, 1, 0)).isOk());
  expectClose(outs[0], {-INFINITY, 1, 2, 3, 3, INFINITY, nan, nan}, 0, 0);
  expectClose(outs[1], {6, 0, 4, 2, 5, 7, 1, 3}, 0, 0);
  // sorted = 0 returns the sorted order too.
  Attrs unsorted = topKAttrs(3, -1, 1);
  unsorted.setInt("sorted", 0);
  std::vector<Tensor> three;
  three.emplace_back(DType::F32, Shape{1, 3});
  three.emplace_back(DType::I64, Shape{1, 3});
  ASSERT_TRUE(runKernel("TopK", {&x}, three, unsorted).isOk());
  expectClose(three[1], {1, 3, 7}, 0, 0);
}

TEST(TopK, InvalidInputs) {
  const TensorDesc x{DType::F32, {3, 4}}, v{DType::F32, {3, 2}},
      i{DType::I64, {3, 2}};
  EXPECT_PREPARE_ERROR(prepareOnly("TopK", {x}, {v, i}, [] {
                         Attrs a;
                         a.setInt("axis", 1);
                         return a;
                       }()),
                       "attribute k is required");
  EXPECT_PREPARE_ERROR(prepareOnly("TopK", {x}, {{DType::F32, {3, 5}},
                                                 {DType::I64, {3, 5}}},
                                   topKAttrs(5, 1, 1)),
                       "k 5 is outside [0, 4]");
  EXPECT_PREPARE_ERROR(prepareOnly("TopK", {x}, {v, i}, topKAttrs(2, 2, 1)),
                       "out of range");
  EXPECT_PREPARE_ERROR(prepareOnly("TopK", {x}, {v, i}, topKAttrs(2, 1, 2)),
                       "largest must be 0 or 1");
  EXPECT_PREPARE_ERROR(prepareOnly("TopK", {x}, {v, {DType::I32, {3, 2}}},
                                   topKAttrs(2, 1, 1)),
                       "output 1 (indices)");
  EXPECT_PREPARE_ERROR(prepareOnly("TopK", {x}, {v, {DType::I64, {2, 2}}},
                                   topKAttrs(2, 1, 1)),
                       "output 1 shape [2, 2] does not match");
  EXPECT_PREPARE_ERROR(prepareOnly("TopK", {{DType::Bool, {3, 4}}},
                                   {{DType::Bool, {3, 2}}, i},
                                   topKAttrs(2, 1, 1)),
                       "unsupported dtype");
  EXPECT_PREPARE_ERROR(prepareOnly("TopK", {x}, {v}, topKAttrs(2, 1, 1)),
                       "outputs");
}

Attrs cumSumAttrs(int64_t axis, int exclusive = 0, int reverse = 0) {
  Attrs a;
  a.setInt("axis", axis);
  a.setInt("exclusive", exclusive);
  a.setInt("reverse", reverse);
  return a;
}

/// Scalar reference: element by element along the axis, in double.
std::vector<double> refCumSum(const Tensor &x, int64_t axis, bool exclusive,
                              bool reverse) {
  const Shape &s = x.desc.shape;
  const int64_t n = s[axis];
  std::vector<double> out(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    const int64_t pos = idx[axis];
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      bool before = reverse ? k > pos : k < pos;
      if (before || (!exclusive && k == pos)) {
        idx[axis] = k;
        sum += x.at(ravel(idx, s));
      }
    }
    out[i] = sum;
  }
  return out;
}

TEST(CumSum, EveryDTypeAxisAndFlag) {
  const DType types[] = {DType::F32,  DType::F64, DType::F16,
                         DType::BF16, DType::I32, DType::I64};
  const Shape shapes[] = {{3, 4, 5}, {7}, {2, 1, 3}, {2, 40}};
  uint64_t seed = 300;
  for (DType t : types)
    for (const Shape &s : shapes)
      for (int64_t axis = -static_cast<int64_t>(s.size());
           axis < static_cast<int64_t>(s.size()); ++axis)
        for (int exclusive : {0, 1})
          for (int reverse : {0, 1}) {
            SCOPED_TRACE(std::string(dtypeName(t)) + " " + shapeToString(s) +
                         " axis " + std::to_string(axis) + " exclusive " +
                         std::to_string(exclusive) + " reverse " +
                         std::to_string(reverse));
            Tensor x = randomTensor(t, s, seed++, -3, 3);
            // Small integers keep every f16/bf16 sum exact, so the result
            // is the reference itself.
            const bool half = t == DType::F16 || t == DType::BF16;
            if (half)
              for (int64_t i = 0; i < x.numel(); ++i)
                x.set(i, std::floor(x.at(i)));
            const int64_t ax = axis < 0 ? axis + int64_t(s.size()) : axis;
            std::vector<double> want = refCumSum(x, ax, exclusive, reverse);
            // The reference adds in index order, the kernel in sum order.
            const double tol =
                t == DType::F32 ? 1e-5 : (t == DType::F64 ? 1e-12 : 0);
            expectClose(runOne("CumSum", {&x}, t, s,
                               cumSumAttrs(axis, exclusive, reverse)),
                        want, tol, tol);
          }
}

TEST(CumSum, F32AddsInAxisOrderLikeOnnxruntime) {
  // onnxruntime adds f32 in f32, element after element: 1e8 + 1 rounds
  // back to 1e8, so the sums after -1e8 are 0 and 1 (in double, 1 and 2).
  Tensor x = makeTensor(DType::F32, {4}, {1e8, 1, -1e8, 1});
  expectClose(runOne("CumSum", {&x}, DType::F32, {4}, cumSumAttrs(0)),
              {1e8, 1e8, 0, 1}, 0, 0);
}

TEST(CumSum, HalfAccumulatesInFloat) {
  // 4096 ones: a 16-bit accumulator stalls at 256 (bf16) or 2048 (f16);
  // in float every sum i + 1 is exact and rounds once to the output type.
  for (DType t : {DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtypeName(t));
    const int64_t n = 4096;
    Tensor ones = makeTensor(t, {1, n}, std::vector<double>(n, 1.0));
    std::vector<double> counts(n);
    for (int64_t i = 0; i < n; ++i)
      counts[i] = double(i + 1);
    Tensor want = makeTensor(t, {1, n}, counts);
    expectClose(runOne("CumSum", {&ones}, t, {1, n}, cumSumAttrs(1)),
                want.values(), 0, 0);
  }
}

TEST(CumSum, IntegersWrapAndEmptyAxes) {
  const int64_t max32 = std::numeric_limits<int32_t>::max();
  Tensor x = makeTensor(DType::I32, {3}, {double(max32), 1, 1});
  expectClose(runOne("CumSum", {&x}, DType::I32, {3}, cumSumAttrs(0)),
              {double(max32), double(-max32 - 1), double(-max32)}, 0, 0);
  Tensor e(DType::I64, {2, 0});
  EXPECT_EQ(runOne("CumSum", {&e}, DType::I64, {2, 0}, cumSumAttrs(1)).numel(),
            0);
}

TEST(CumSum, InvalidInputs) {
  const TensorDesc x{DType::F32, {3, 4}};
  EXPECT_PREPARE_ERROR(prepareOnly("CumSum", {x}, {x}), "axis is required");
  EXPECT_PREPARE_ERROR(prepareOnly("CumSum", {x}, {x}, cumSumAttrs(2)),
                       "out of range");
  EXPECT_PREPARE_ERROR(prepareOnly("CumSum", {x}, {x}, cumSumAttrs(-3)),
                       "out of range");
  EXPECT_PREPARE_ERROR(prepareOnly("CumSum", {x}, {x}, cumSumAttrs(0, 2)),
                       "exclusive must be 0 or 1");
  EXPECT_PREPARE_ERROR(prepareOnly("CumSum", {x}, {x}, cumSumAttrs(0, 0, -1)),
                       "reverse must be 0 or 1");
  EXPECT_PREPARE_ERROR(
      prepareOnly("CumSum", {x}, {{DType::F32, {3, 1}}}, cumSumAttrs(0)),
      "does not match");
  EXPECT_PREPARE_ERROR(
      prepareOnly("CumSum", {x}, {{DType::F64, {3, 4}}}, cumSumAttrs(0)),
      "dtype mismatch");
  EXPECT_PREPARE_ERROR(prepareOnly("CumSum", {{DType::Bool, {3}}},
                                   {{DType::Bool, {3}}}, cumSumAttrs(0)),
                       "unsupported dtype");
  EXPECT_PREPARE_ERROR(prepareOnly("CumSum", {{DType::F32, {}}},
                                   {{DType::F32, {}}}, cumSumAttrs(0)),
                       "out of range");
  EXPECT_PREPARE_ERROR(prepareOnly("CumSum", {x, x}, {x}, cumSumAttrs(0)),
                       "expected 1 inputs, got 2");
}

} // namespace
} // namespace tpc::cpu::test
