//===- SliceGatherTest.cpp - Slice, Pad, the gathers and the scatters -----===//
#include "KernelTestUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tpc::cpu::test {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// Indices picked along one dim, with Python's slice.indices() rules. ONNX
/// differs only for a start below -dim with a negative step (ONNX clamps it
/// to 0, Python to -1); the cases below avoid that and a separate test
/// covers it.
std::vector<int64_t> pySlice(int64_t dim, int64_t start, int64_t end,
                             int64_t step) {
  auto fix = [&](int64_t v) {
    if (v < 0) {
      v += dim;
      if (v < 0)
        v = step < 0 ? -1 : 0;
    } else if (v >= dim) {
      v = step < 0 ? dim - 1 : dim;
    }
    return v;
  };
  std::vector<int64_t> r;
  int64_t s = fix(start), e = fix(end);
  for (int64_t i = s; step > 0 ? i < e : i > e; i += step)
    r.push_back(i);
  return r;
}

/// The attributes a plan carries for Slice (the importer writes ONNX's
/// defaults for axes and steps).
Attrs sliceAttrs(std::vector<int64_t> starts, std::vector<int64_t> ends,
                 std::vector<int64_t> axes, std::vector<int64_t> steps) {
  Attrs a = ints("starts", std::move(starts));
  a.setInts("ends", std::move(ends));
  a.setInts("axes", std::move(axes));
  a.setInts("steps", std::move(steps));
  return a;
}

struct SliceCase {
  Shape shape;
  std::vector<int64_t> starts, ends, axes, steps;
};

TEST(Slice, MatchesPythonSlicing) {
  const std::vector<SliceCase> cases = {
      {{10}, {2}, {7}, {}, {}},
      {{10}, {8}, {1}, {0}, {-3}},
      {{10}, {-1}, {kMin}, {0}, {-1}}, // full reversal
      {{10}, {-100}, {kMax}, {}, {}},  // sentinels clamp
      {{10}, {5}, {5}, {}, {}},        // empty
      {{10}, {7}, {2}, {}, {1}},       // empty (start > end)
      {{4, 6, 5}, {1, -4}, {3, kMax}, {0, -2}, {1, 2}},
      {{4, 6, 5}, {3, 0}, {0, 5}, {2, 0}, {-2, 3}},
      {{2, 3, 4}, {0, 0, 0}, {1, 1, 1}, {}, {}},
      {{2, 3, 4}, {kMax}, {kMin}, {1}, {-1}},
      {{3, 1, 4}, {0}, {10}, {1}, {1}}, // unit dim kept
      {{5, 6}, {-2}, {-1}, {-1}, {}},
  };
  uint64_t seed = 1;
  for (const SliceCase &c : cases) {
    SCOPED_TRACE(shapeToString(c.shape) + " starts " +
                 std::to_string(c.starts[0]));
    Tensor x = randomTensor(DType::I64, c.shape, seed++, -1000, 1000);
    const size_t rank = c.shape.size();
    std::vector<std::vector<int64_t>> picks(rank);
    for (size_t d = 0; d < rank; ++d)
      picks[d] = pySlice(c.shape[d], 0, c.shape[d], 1);
    for (size_t i = 0; i < c.starts.size(); ++i) {
      int64_t ax = c.axes.empty() ? static_cast<int64_t>(i) : c.axes[i];
      if (ax < 0)
        ax += static_cast<int64_t>(rank);
      int64_t step = c.steps.empty() ? 1 : c.steps[i];
      picks[ax] = pySlice(c.shape[ax], c.starts[i], c.ends[i], step);
    }
    Shape out;
    for (const auto &p : picks)
      out.push_back(static_cast<int64_t>(p.size()));
    std::vector<double> expect(numElements(out));
    for (int64_t i = 0; i < numElements(out); ++i) {
      std::vector<int64_t> idx = unravel(i, out);
      for (size_t d = 0; d < rank; ++d)
        idx[d] = picks[d][idx[d]];
      expect[i] = x.at(ravel(idx, c.shape));
    }
    // The importer writes ONNX's defaults: axes 0.., steps of 1.
    std::vector<int64_t> axes = c.axes, steps = c.steps;
    for (size_t i = 0; axes.size() < c.starts.size(); ++i)
      axes.push_back(int64_t(i));
    steps.resize(c.starts.size(), 1);
    expectClose(runOne("Slice", {&x}, DType::I64, out,
                       sliceAttrs(c.starts, c.ends, axes, steps)),
                expect, 0, 0);
  }
  // A hand-checked case: [8:1:-3] of 0..9 is 8, 5, 2.
  std::vector<double> ramp;
  for (int i = 0; i < 10; ++i)
    ramp.push_back(i);
  Tensor r = makeTensor(DType::F32, {10}, ramp);
  expectClose(
      runOne("Slice", {&r}, DType::F32, {3}, sliceAttrs({8}, {1}, {0}, {-3})),
      {8, 5, 2}, 0, 0);
  // ONNX clamps a negative-step start into [0, dim - 1]: [-100::-1] is {0}.
  expectClose(runOne("Slice", {&r}, DType::F32, {1},
                     sliceAttrs({-100}, {kMin}, {0}, {-1})),
              {0}, 0, 0);
}

TEST(Slice, InvalidInputs) {
  const TensorDesc x{DType::F32, {4, 5}}, y25{DType::F32, {2, 5}},
      y35{DType::F32, {3, 5}};
  expectPrepareErrors({
      {"Slice", {x}, {y25}, "is 0", sliceAttrs({0}, {2}, {0}, {0})},
      {"Slice", {x}, {y25}, "out of range", sliceAttrs({0}, {2}, {2}, {1})},
      {"Slice", {x}, {y25}, "repeated",
       sliceAttrs({0, 0}, {2, 2}, {0, 0}, {1, 1})},
      {"Slice", {x}, {y25}, "same length", sliceAttrs({0}, {2, 3}, {0}, {1})},
      {"Slice", {x}, {y35}, "does not match", sliceAttrs({0}, {2}, {0}, {1})},
      {"Slice", {x}, {y35}, "starts is required"},
  });
}

TEST(Pad, ConstantPadsAndCrops) {
  struct Case {
    Shape shape;
    std::vector<int64_t> pads, axes;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {1, 0, 2, 3}, {}}, {{2, 3, 4}, {0, 1, -1, 0, -1, 2}, {}},
      {{3, 4}, {2, 1}, {-1}},     {{5}, {-2, -3}, {}}, // crops to nothing
      {{2, 2}, {0, 0, 0, 0}, {}},
  };
  uint64_t seed = 10;
  for (DType t : {DType::F32, DType::I64, DType::F16})
    for (const Case &c : cases) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + shapeToString(c.shape));
      Tensor x = randomTensor(t, c.shape, seed++, 1, 9);
      const size_t rank = c.shape.size();
      std::vector<int64_t> begin(rank, 0), end(rank, 0);
      std::vector<int64_t> axes = c.axes;
      if (axes.empty())
        for (size_t d = 0; d < rank; ++d)
          axes.push_back(static_cast<int64_t>(d));
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t ax =
            axes[i] < 0 ? axes[i] + static_cast<int64_t>(rank) : axes[i];
        begin[ax] = c.pads[i];
        end[ax] = c.pads[i + axes.size()];
      }
      Shape out;
      for (size_t d = 0; d < rank; ++d)
        out.push_back(c.shape[d] + begin[d] + end[d]);
      std::vector<double> expect(numElements(out));
      for (int64_t i = 0; i < numElements(out); ++i) {
        std::vector<int64_t> idx = unravel(i, out);
        bool inside = true;
        for (size_t d = 0; d < rank; ++d) {
          idx[d] -= begin[d];
          inside = inside && idx[d] >= 0 && idx[d] < c.shape[d];
        }
        expect[i] = inside ? x.at(ravel(idx, c.shape)) : -1.5;
      }
      if (t == DType::I64)
        for (double &v : expect)
          if (v == -1.5)
            v = -1; // the pad value truncates for integers
      // The importer resolves axes into a begin and an end for every dim.
      std::vector<int64_t> pads = begin;
      pads.insert(pads.end(), end.begin(), end.end());
      Attrs a;
      a.setInts("pads", pads);
      a.setFloat("value", -1.5);
      expectClose(runOne("Pad", {&x}, t, out, a), expect, 0, 0);
    }
  const TensorDesc x{DType::F32, {2, 3}};
  Attrs bad;
  bad.setInts("pads", {1, 1});
  bad.setFloat("value", 0);
  EXPECT_PREPARE_ERROR(prepareOnly("Pad", {x}, {{DType::F32, {3, 4}}}, bad),
                       "expected 4");
  Attrs noValue;
  noValue.setInts("pads", {1, 1, 1, 1});
  EXPECT_PREPARE_ERROR(prepareOnly("Pad", {x}, {{DType::F32, {4, 5}}}, noValue),
                       "value is required");
  Attrs crop;
  crop.setInts("pads", {-2, 0, -1, 0});
  crop.setFloat("value", 0);
  EXPECT_PREPARE_ERROR(prepareOnly("Pad", {x}, {{DType::F32, {0, 3}}}, crop),
                       "below zero");
}

/// The data and index shapes of a gather or a scatter along `axis`.
struct AxisCase {
  Shape data, indices;
  int64_t axis;
};

TEST(Gather, TakesSlicesAlongAxis) {
  uint64_t seed = 20;
  const std::vector<AxisCase> cases = {
      {{5, 3}, {4}, 0}, {{5, 3}, {2, 2}, 1}, {{2, 6, 4}, {3}, -2},
      {{7}, {}, 0},     {{3, 4}, {0}, 0},    {{2, 3, 4}, {2, 1, 2}, 2},
  };
  for (DType it : {DType::I64, DType::I32})
    for (const AxisCase &c : cases) {
      SCOPED_TRACE(shapeToString(c.data) + " idx " + shapeToString(c.indices));
      Tensor data = randomTensor(DType::F32, c.data, seed++);
      const int64_t rank = static_cast<int64_t>(c.data.size());
      const int64_t ax = c.axis < 0 ? c.axis + rank : c.axis;
      const int64_t dim = c.data[ax];
      // Indices over [-dim, dim): negative ones wrap.
      Tensor idx = randomTensor(it, c.indices, seed++, -dim, dim - 1);
      Shape out(c.data.begin(), c.data.begin() + ax);
      out.insert(out.end(), c.indices.begin(), c.indices.end());
      out.insert(out.end(), c.data.begin() + ax + 1, c.data.end());
      std::vector<double> expect(numElements(out));
      const size_t ir = c.indices.size();
      for (int64_t i = 0; i < numElements(out); ++i) {
        std::vector<int64_t> o = unravel(i, out), d;
        d.assign(o.begin(), o.begin() + ax);
        std::vector<int64_t> ii(o.begin() + ax, o.begin() + ax + ir);
        int64_t v = static_cast<int64_t>(idx.at(ravel(ii, c.indices)));
        d.push_back(v < 0 ? v + dim : v);
        d.insert(d.end(), o.begin() + ax + ir, o.end());
        expect[i] = data.at(ravel(d, c.data));
      }
      Attrs a;
      a.setInt("axis", c.axis);
      expectClose(runOne("Gather", {&data, &idx}, DType::F32, out, a), expect,
                  0, 0);
    }
}


TEST(Gather, OutOfRangeIndicesFailTheRun) {
  Tensor data = randomTensor(DType::F32, {3, 2}, 30, 1, 2);
  Tensor ok = makeTensor(DType::I64, {3}, {1, -3, 2});
  const Attrs axis0 = ints("axis", {0});
  expectClose(
      runOne("Gather", {&data, &ok}, DType::F32, {3, 2}, axis0),
      {data.at(2), data.at(3), data.at(0), data.at(1), data.at(4), data.at(5)},
      0, 0);
  Tensor idx = makeTensor(DType::I64, {4}, {1, 3, -4, -3});
  expectRunError("Gather", {&data, &idx}, DType::F32, {4, 2},
                 "indices (input 1) element 1 is 3, outside [-3, 3)", axis0);
  Tensor neg = makeTensor(DType::I32, {2}, {0, -4});
  expectRunError("Gather", {&data, &neg}, DType::F32, {2, 2},
                 "element 1 is -4, outside [-3, 3)", axis0);
}

TEST(Gather, InvalidInputs) {
  const TensorDesc d{DType::F32, {3, 4}};
  EXPECT_PREPARE_ERROR(
      prepareOnly("Gather", {d, {DType::F32, {2}}}, {{DType::F32, {2, 4}}}),
      "indices");
  Attrs a;
  a.setInt("axis", 2);
  EXPECT_PREPARE_ERROR(
      prepareOnly("Gather", {d, {DType::I64, {2}}}, {{DType::F32, {2, 4}}}, a),
      "out of range");
  EXPECT_PREPARE_ERROR(prepareOnly("Gather", {d, {DType::I64, {2}}},
                                   {{DType::F32, {3, 2}}}, ints("axis", {0})),
                       "does not match");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Gather", {d, {DType::I64, {2}}}, {{DType::F32, {2, 4}}}),
      "axis is required");
}

TEST(GatherElements, PicksAlongAxis) {
  uint64_t seed = 40;
  const std::vector<AxisCase> cases = {
      {{3, 4}, {3, 4}, 0},
      {{3, 4}, {2, 6}, 1},
      {{2, 3, 4}, {2, 3, 2}, -1},
      {{4, 5, 2}, {2, 3, 2}, 1},
      {{5}, {8}, 0},
  };
  for (DType it : {DType::I64, DType::I32})
    for (const AxisCase &c : cases) {
      SCOPED_TRACE(shapeToString(c.data) + " idx " + shapeToString(c.indices));
      Tensor data = randomTensor(DType::I32, c.data, seed++, -500, 500);
      const int64_t rank = static_cast<int64_t>(c.data.size());
      const int64_t ax = c.axis < 0 ? c.axis + rank : c.axis;
      const int64_t dim = c.data[ax];
      Tensor idx = randomTensor(it, c.indices, seed++, -dim, dim - 1);
      std::vector<double> expect(idx.numel());
      for (int64_t i = 0; i < idx.numel(); ++i) {
        std::vector<int64_t> p = unravel(i, c.indices);
        int64_t v = static_cast<int64_t>(idx.at(i));
        p[ax] = v < 0 ? v + dim : v;
        expect[i] = data.at(ravel(p, c.data));
      }
      Attrs a;
      a.setInt("axis", c.axis);
      expectClose(
          runOne("GatherElements", {&data, &idx}, DType::I32, c.indices, a),
          expect, 0, 0);
    }
  Tensor data = makeTensor(DType::F32, {2, 2}, {1, 2, 3, 4});
  Tensor idx = makeTensor(DType::I64, {2, 2}, {0, 5, -1, -3});
  expectRunError("GatherElements", {&data, &idx}, DType::F32, {2, 2},
                 "element 1 is 5, outside [-2, 2)", ints("axis", {0}));
  EXPECT_PREPARE_ERROR(prepareOnly("GatherElements",
                                   {{DType::F32, {2, 2}}, {DType::I64, {2}}},
                                   {{DType::F32, {2}}}, ints("axis", {0})),
                       "rank");
  EXPECT_PREPARE_ERROR(prepareOnly("GatherElements",
                                   {{DType::F32, {2, 2}}, {DType::I64, {2, 3}}},
                                   {{DType::F32, {2, 3}}}, ints("axis", {0})),
                       "exceeds data shape");
}


TEST(GatherND, AddressesSlicesByTuples) {
  uint64_t seed = 90;
  struct Case {
    Shape data, indices;
    int64_t batchDims;
  };
  const std::vector<Case> cases = {
      {{4, 3}, {5, 2}, 0},       // full tuples: scalars
      {{4, 3, 2}, {2, 3, 1}, 0}, // depth 1: rows
      {{2, 5, 3}, {2, 4, 1}, 1}, // batched
      {{2, 3, 4}, {2, 2}, 1},    // batched, depth 2 per batch row
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(shapeToString(c.data) + " idx " + shapeToString(c.indices));
    Tensor data = randomTensor(DType::F32, c.data, seed++, -5, 5);
    const int64_t b = c.batchDims, depth = c.indices.back();
    // Random in-range tuples, some given as negative indices.
    std::vector<double> idxVals;
    int64_t tuples = numElements(c.indices) / depth;
    for (int64_t t = 0; t < tuples; ++t)
      for (int64_t j = 0; j < depth; ++j) {
        int64_t dim = c.data[b + j];
        int64_t v = int64_t((t * 7 + j * 3 + seed) % dim);
        idxVals.push_back((t + j) % 3 == 0 ? v - dim : v);
      }
    Tensor idx = makeTensor(DType::I64, c.indices, idxVals);
    Shape outShape(c.indices.begin(), c.indices.end() - 1);
    outShape.insert(outShape.end(), c.data.begin() + b + depth, c.data.end());
    int64_t slice = 1;
    for (size_t d = b + depth; d < c.data.size(); ++d)
      slice *= c.data[d];
    int64_t perBatch = tuples / (b ? numElements(Shape(c.data.begin(), c.data.begin() + b)) : 1);
    std::vector<double> expect;
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t batch = t / perBatch;
      std::vector<int64_t> pos(c.data.size(), 0);
      std::vector<int64_t> bidx = unravel(batch, Shape(c.data.begin(), c.data.begin() + b));
      for (int64_t d = 0; d < b; ++d)
        pos[d] = bidx[d];
      for (int64_t j = 0; j < depth; ++j) {
        int64_t v = int64_t(idxVals[t * depth + j]);
        pos[b + j] = v < 0 ? v + c.data[b + j] : v;
      }
      for (int64_t e = 0; e < slice; ++e) {
        std::vector<int64_t> p = pos;
        std::vector<int64_t> tail =
            unravel(e, Shape(c.data.begin() + b + depth, c.data.end()));
        for (size_t d = 0; d < tail.size(); ++d)
          p[b + depth + d] = tail[d];
        expect.push_back(data.at(ravel(p, c.data)));
      }
    }
    Attrs a;
    a.setInt("batch_dims", b);
    expectClose(runOne("GatherND", {&data, &idx}, DType::F32, outShape, a),
                expect, 0, 0);
  }
  // An out-of-range tuple fails the run.
  Tensor data = makeTensor(DType::F32, {2, 2}, {1, 2, 3, 4});
  Tensor idx = makeTensor(DType::I64, {2, 1}, {1, 7});
  expectRunError("GatherND", {&data, &idx}, DType::F32, {2, 2},
                 "element 1 is 7, outside [-2, 2)", ints("batch_dims", {0}));
  Attrs a;
  a.setInt("batch_dims", 2);
  EXPECT_PREPARE_ERROR(prepareOnly("GatherND",
                                   {{DType::F32, {2, 2}}, {DType::I64, {2, 1}}},
                                   {{DType::F32, {2}}}, a),
                       "batch_dims");
}

Attrs reductionAttr(const std::string &r) {
  Attrs a;
  a.setString("reduction", r);
  return a;
}

/// `d` combined with the update `u` per reduction `r` ("none" writes u),
/// stored back through `cell` (one element of the data's dtype), so
/// rounded as the dtype rounds after every update.
void combineRef(Tensor &cell, double &d, double u, const std::string &r) {
  cell.set(0, r == "add"   ? d + u
              : r == "mul" ? d * u
              : r == "max" ? std::max(d, u)
              : r == "min" ? std::min(d, u)
                           : u);
  d = cell.at(0);
}

/// Scalar reference of ScatterND in double: tuples in order, each entry
/// wrapped once if negative, out-of-range tuples skipped, the combined value
/// stored back through combineRef after every update.
std::vector<double> refScatterND(const Tensor &data, const Tensor &idx,
                                 const Tensor &upd, const std::string &r) {
  const Shape &s = data.desc.shape;
  const int64_t depth = idx.desc.shape.back();
  const Shape tail(s.begin() + depth, s.end());
  const int64_t slice = numElements(tail);
  const int64_t tuples = depth ? idx.numel() / depth
                               : numElements(Shape(idx.desc.shape.begin(),
                                                   idx.desc.shape.end() - 1));
  std::vector<double> out = data.values();
  Tensor cell(data.desc.dtype, {1});
  for (int64_t t = 0; t < tuples; ++t) {
    std::vector<int64_t> pos(s.size(), 0);
    bool inRange = true;
    for (int64_t j = 0; j < depth; ++j) {
      int64_t v = int64_t(idx.at(t * depth + j));
      pos[j] = v < 0 ? v + s[j] : v;
      inRange &= pos[j] >= 0 && pos[j] < s[j];
    }
    if (!inRange)
      continue;
    for (int64_t e = 0; e < slice; ++e) {
      std::vector<int64_t> tailIdx = unravel(e, tail);
      for (size_t d = 0; d < tailIdx.size(); ++d)
        pos[depth + d] = tailIdx[d];
      combineRef(cell, out[ravel(pos, s)], upd.at(t * slice + e), r);
    }
  }
  return out;
}

/// Rounds a 16-bit float type's data and updates down to small integers,
/// which keep its sums and products exact.
void floorHalfTypes(DType t, Tensor &data, Tensor &upd) {
  if (t == DType::F16 || t == DType::BF16)
    for (Tensor *x : {&data, &upd})
      for (int64_t i = 0; i < x->numel(); ++i)
        x->set(i, std::floor(x->at(i)));
}

/// `tuples` index tuples for the leading dims of `s`, some negative, with
/// duplicates (the first tuple comes back at the end).
Tensor scatterIndices(const Shape &s, Shape indexShape, uint64_t seed) {
  const int64_t depth = indexShape.back();
  const int64_t tuples = numElements(indexShape) / std::max<int64_t>(depth, 1);
  std::vector<double> vals;
  for (int64_t t = 0; t < tuples; ++t)
    for (int64_t j = 0; j < depth; ++j) {
      if (t == tuples - 1 && t > 0) {
        vals.push_back(vals[size_t(j)]);
        continue;
      }
      int64_t v = int64_t((t * 5 + j * 3 + seed) % s[j]);
      vals.push_back((t + j) % 3 == 0 ? v - s[j] : v);
    }
  return makeTensor(DType::I64, std::move(indexShape), vals);
}

TEST(ScatterND, EveryDTypeReductionAndDepth) {
  struct Case {
    Shape data, indices;
  };
  const std::vector<Case> cases = {
      {{4, 3}, {5, 2}},       // full tuples: single elements
      {{4, 3, 2}, {2, 3, 1}}, // depth 1: rows of [3, 2]
      {{2, 3, 4}, {3, 2}},    // depth 2 of 3: rows of 4
      {{7}, {4, 1}},
  };
  uint64_t seed = 500;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32,
                  DType::I64})
    for (const char *r : {"none", "add", "mul", "max", "min"})
      for (const Case &c : cases) {
        SCOPED_TRACE(std::string(dtypeName(t)) + " " + r + " " +
                     shapeToString(c.data) + " idx " +
                     shapeToString(c.indices));
        Tensor data = randomTensor(t, c.data, seed++, -3, 3);
        Tensor idx = scatterIndices(c.data, c.indices, seed++);
        Shape us(c.indices.begin(), c.indices.end() - 1);
        us.insert(us.end(), c.data.begin() + c.indices.back(), c.data.end());
        Tensor upd = randomTensor(t, us, seed++, -3, 3);
        floorHalfTypes(t, data, upd);
        const double tol = t == DType::F32 ? 1e-6 : 0;
        expectClose(runOne("ScatterND", {&data, &idx, &upd}, t, c.data,
                           reductionAttr(r)),
                    refScatterND(data, idx, upd, r), tol, tol);
      }
}

TEST(ScatterND, ByteDTypesWithoutReduction) {
  for (DType t : {DType::Bool, DType::I8, DType::U8}) {
    SCOPED_TRACE(dtypeName(t));
    Tensor data = randomTensor(t, {3, 4}, 7, 0, 9);
    Tensor idx = makeTensor(DType::I64, {2, 1}, {-1, 0});
    Tensor upd = randomTensor(t, {2, 4}, 8, 0, 9);
    expectClose(runOne("ScatterND", {&data, &idx, &upd}, t, {3, 4},
                       reductionAttr("none")),
                refScatterND(data, idx, upd, "none"), 0, 0);
  }
}

TEST(ScatterND, CausalMaskSliceAssignment) {
  // mask[:, :, :, :3] = u, as transformers' exports write it: the indices
  // are the full grid of the assigned window, k = rank.
  const Shape s = {1, 2, 4, 6};
  std::vector<double> grid;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t q = 0; q < 4; ++q)
      for (int64_t k = 0; k < 3; ++k)
        grid.insert(grid.end(), {0, double(h), double(q), double(k)});
  Tensor idx = makeTensor(DType::I64, {1, 2, 4, 3, 4}, grid);
  Tensor data = randomTensor(DType::F32, s, 11);
  Tensor upd = randomTensor(DType::F32, {1, 2, 4, 3}, 12);
  std::vector<double> want = data.values();
  for (int64_t i = 0; i < upd.numel(); ++i)
    want[(i / 3) * 6 + i % 3] = upd.at(i);
  expectClose(runOne("ScatterND", {&data, &idx, &upd}, DType::F32, s,
                     reductionAttr("none")),
              want, 0, 0);
}

TEST(ScatterND, DuplicatesOutOfRangeAndWholeTensor) {
  Tensor data = makeTensor(DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6});
  // Row 1 twice (the last wins; -2 is row 1).
  Tensor idx = makeTensor(DType::I64, {2, 1}, {1, -2});
  Tensor upd = makeTensor(DType::F32, {2, 2}, {10, 11, 30, 31});
  expectClose(runOne("ScatterND", {&data, &idx, &upd}, DType::F32, {3, 2},
                     reductionAttr("none")),
              {1, 2, 30, 31, 5, 6}, 0, 0);
  expectClose(runOne("ScatterND", {&data, &idx, &upd}, DType::F32, {3, 2},
                     reductionAttr("add")),
              {1, 2, 43, 46, 5, 6}, 0, 0);
  // Rows 5 and -4 are out of range: the run fails.
  Tensor bad = makeTensor(DType::I64, {4, 1}, {1, 5, -2, -4});
  Tensor upd4 = makeTensor(DType::F32, {4, 2}, {10, 11, 20, 21, 30, 31, 40, 41});
  expectRunError("ScatterND", {&data, &bad, &upd4}, DType::F32, {3, 2},
                 "element 1 is 5, outside [-3, 3)", reductionAttr("none"));
  // k = 0: every tuple addresses the whole tensor.
  Tensor none = makeTensor(DType::I64, {2, 0}, {});
  Tensor whole = makeTensor(DType::F32, {2, 3, 2},
                            {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2});
  expectClose(runOne("ScatterND", {&data, &none, &whole}, DType::F32, {3, 2},
                     reductionAttr("mul")),
              {2, 4, 6, 8, 10, 12}, 0, 0);
}

TEST(ScatterND, IntegersWrap) {
  const double max32 = std::numeric_limits<int32_t>::max();
  Tensor data = makeTensor(DType::I32, {2}, {max32, 3});
  Tensor idx = makeTensor(DType::I64, {1, 1}, {0});
  Tensor one = makeTensor(DType::I32, {1}, {1});
  expectClose(runOne("ScatterND", {&data, &idx, &one}, DType::I32, {2},
                     reductionAttr("add")),
              {-max32 - 1, 3}, 0, 0);
}

TEST(ScatterND, InvalidInputs) {
  const TensorDesc d{DType::F32, {4, 3}}, i{DType::I64, {2, 1}},
      u{DType::F32, {2, 3}};
  EXPECT_PREPARE_ERROR(
      prepareOnly("ScatterND", {d, i, u}, {d}, reductionAttr("sum")),
      "reduction must be none, add, mul, max or min");
  EXPECT_PREPARE_ERROR(prepareOnly("ScatterND", {d, i, {DType::F32, {2, 4}}},
                                   {d}, reductionAttr("none")),
                       "input 2 (updates) shape [2, 4] does not match");
  EXPECT_PREPARE_ERROR(prepareOnly("ScatterND", {d, {DType::I64, {2, 3}}, u},
                                   {d}, reductionAttr("none")),
                       "last dim <= data rank");
  EXPECT_PREPARE_ERROR(prepareOnly("ScatterND", {d, {DType::I64, {}}, u}, {d},
                                   reductionAttr("none")),
                       "rank >= 1");
  EXPECT_PREPARE_ERROR(prepareOnly("ScatterND", {d, {DType::F32, {2, 1}}, u},
                                   {d}, reductionAttr("none")),
                       "indices");
  EXPECT_PREPARE_ERROR(prepareOnly("ScatterND", {d, i, {DType::F64, {2, 3}}},
                                   {d}, reductionAttr("none")),
                       "dtype mismatch");
  EXPECT_PREPARE_ERROR(prepareOnly("ScatterND", {d, i, u},
                                   {{DType::F32, {4, 4}}},
                                   reductionAttr("none")),
                       "does not match");
  const TensorDesc b{DType::Bool, {4, 3}}, ub{DType::Bool, {2, 3}};
  EXPECT_PREPARE_ERROR(
      prepareOnly("ScatterND", {b, i, ub}, {b}, reductionAttr("max")),
      "unsupported dtype");
  EXPECT_PREPARE_ERROR(
      prepareOnly("ScatterND", {d, i}, {d}, reductionAttr("none")),
      "expected 3 inputs, got 2");
}

/// Scalar reference of ScatterElements in double: the indices' elements in
/// row-major order, each index wrapped once if negative (all in range here).
std::vector<double> refScatterElements(const Tensor &data, const Tensor &idx,
                                       const Tensor &upd, int64_t axis,
                                       const std::string &r) {
  const Shape &s = data.desc.shape;
  std::vector<double> out = data.values();
  Tensor cell(data.desc.dtype, {1});
  for (int64_t i = 0; i < idx.numel(); ++i) {
    std::vector<int64_t> pos = unravel(i, idx.desc.shape);
    const int64_t v = int64_t(idx.at(i));
    pos[axis] = v < 0 ? v + s[axis] : v;
    combineRef(cell, out[ravel(pos, s)], upd.at(i), r);
  }
  return out;
}

Attrs scatterAttrs(int64_t axis, const std::string &r) {
  Attrs a = reductionAttr(r);
  a.setInt("axis", axis);
  return a;
}

TEST(ScatterElements, EveryDTypeReductionAndAxis) {
  // Short axes and long index lines, so that most lines repeat indices.
  const std::vector<AxisCase> cases = {
      {{4, 3}, {4, 3}, 0},       {{4, 3}, {2, 7}, 1},
      {{3, 4, 5}, {2, 6, 3}, 1}, {{3, 4, 5}, {3, 2, 9}, -1},
      {{2, 3, 2}, {1, 3, 2}, 0}, {{5}, {12}, 0},
  };
  uint64_t seed = 700;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32,
                  DType::I64})
    for (const char *r : {"none", "add", "mul", "max", "min"})
      for (const AxisCase &c : cases) {
        const DType it = seed % 2 ? DType::I32 : DType::I64;
        SCOPED_TRACE(std::string(dtypeName(t)) + " " + r + " " +
                     shapeToString(c.data) + " idx " +
                     shapeToString(c.indices) + " " + dtypeName(it));
        const int64_t rank = int64_t(c.data.size());
        const int64_t ax = c.axis < 0 ? c.axis + rank : c.axis;
        const int64_t dim = c.data[ax];
        Tensor data = randomTensor(t, c.data, seed++, -3, 3);
        Tensor idx = randomTensor(it, c.indices, seed++, -dim, dim - 1);
        Tensor upd = randomTensor(t, c.indices, seed++, -3, 3);
        floorHalfTypes(t, data, upd);
        const double tol = t == DType::F32 ? 1e-6 : 0;
        expectClose(runOne("ScatterElements", {&data, &idx, &upd}, t, c.data,
                           scatterAttrs(c.axis, r)),
                    refScatterElements(data, idx, upd, ax, r), tol, tol);
      }
}

TEST(ScatterElements, ByteDTypesWithoutReduction) {
  for (DType t : {DType::Bool, DType::I8, DType::U8}) {
    SCOPED_TRACE(dtypeName(t));
    Tensor data = randomTensor(t, {3, 4}, 7, 0, 9);
    Tensor idx = makeTensor(DType::I64, {3, 2}, {-1, 0, 2, 2, 3, -4});
    Tensor upd = randomTensor(t, {3, 2}, 8, 0, 9);
    expectClose(runOne("ScatterElements", {&data, &idx, &upd}, t, {3, 4},
                       scatterAttrs(1, "none")),
                refScatterElements(data, idx, upd, 1, "none"), 0, 0);
  }
}

TEST(ScatterElements, DuplicatesAndOutOfRange) {
  // ONNX's example: axis 1, row 0 gets 1.1 at 1 and 2.1 at 3.
  Tensor data = makeTensor(DType::F32, {1, 5}, {1, 2, 3, 4, 5});
  Tensor idx = makeTensor(DType::I64, {1, 2}, {1, 3});
  Tensor upd = makeTensor(DType::F32, {1, 2}, {1.1, 2.1});
  expectClose(runOne("ScatterElements", {&data, &idx, &upd}, DType::F32,
                     {1, 5}, scatterAttrs(1, "none")),
              {1, 1.1, 3, 2.1, 5}, 1e-7, 0);
  // Index 1 three times (as 1, -4 and 1): the last update wins, or all
  // three combine in order.
  Tensor dup = makeTensor(DType::I32, {1, 3}, {1, -4, 1});
  Tensor upd3 = makeTensor(DType::F32, {1, 3}, {10, 20, 30});
  expectClose(runOne("ScatterElements", {&data, &dup, &upd3}, DType::F32,
                     {1, 5}, scatterAttrs(-1, "none")),
              {1, 30, 3, 4, 5}, 0, 0);
  expectClose(runOne("ScatterElements", {&data, &dup, &upd3}, DType::F32,
                     {1, 5}, scatterAttrs(1, "mul")),
              {1, 12000, 3, 4, 5}, 0, 0);
  // Along axis 0 the lines are columns: each keeps its own order.
  Tensor col = makeTensor(DType::F32, {2, 2}, {1, 2, 3, 4});
  Tensor cidx = makeTensor(DType::I64, {3, 2}, {1, 0, 1, 0, 0, 0});
  Tensor cupd = makeTensor(DType::F32, {3, 2}, {5, 6, 7, 8, 9, 10});
  expectClose(runOne("ScatterElements", {&col, &cidx, &cupd}, DType::F32,
                     {2, 2}, scatterAttrs(0, "none")),
              {9, 10, 7, 4}, 0, 0);
  expectClose(runOne("ScatterElements", {&col, &cidx, &cupd}, DType::F32,
                     {2, 2}, scatterAttrs(0, "add")),
              {10, 26, 15, 4}, 0, 0);
  // Index 5 and -6 are outside [-5, 5): the run fails naming the first.
  Tensor bad = makeTensor(DType::I64, {1, 3}, {0, 5, -6});
  expectRunError("ScatterElements", {&data, &bad, &upd3}, DType::F32, {1, 5},
                 "indices (input 1) element 1 is 5, outside [-5, 5)",
                 scatterAttrs(1, "add"));
}

TEST(ScatterElements, InvalidInputs) {
  const TensorDesc d{DType::F32, {4, 3}}, i{DType::I64, {2, 3}},
      u{DType::F32, {2, 3}};
  const TensorDesc b{DType::I8, {4, 3}}, ub{DType::I8, {2, 3}};
  const Attrs none = scatterAttrs(0, "none");
  expectPrepareErrors({
      {"ScatterElements", {d, i, u}, {d},
       "reduction must be none, add, mul, max or min", scatterAttrs(0, "sum")},
      {"ScatterElements", {d, i, u}, {d}, "out of range",
       scatterAttrs(2, "none")},
      {"ScatterElements", {d, {DType::I64, {6}}, {DType::F32, {6}}}, {d},
       "indices rank 1 differs from data rank 2", none},
      {"ScatterElements", {d, {DType::I64, {2, 4}}, {DType::F32, {2, 4}}}, {d},
       "exceeds data shape [4, 3] at dim 1", none},
      {"ScatterElements", {d, i, {DType::F32, {2, 2}}}, {d},
       "input 2 (updates) shape [2, 2] does not match", none},
      {"ScatterElements", {d, {DType::F32, {2, 3}}, u}, {d}, "indices", none},
      {"ScatterElements", {d, i, {DType::F64, {2, 3}}}, {d}, "dtype mismatch",
       none},
      {"ScatterElements", {b, i, ub}, {b}, "unsupported dtype",
       scatterAttrs(0, "add")},
      {"ScatterElements", {d, i}, {d}, "expected 3 inputs, got 2", none},
  });
}

} // namespace
} // namespace tpc::cpu::test
