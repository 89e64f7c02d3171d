//===- MovementTest.cpp - Copy, Transpose, Expand, Tile, Concat, Split ----===//
#include "KernelTestUtil.h"

namespace tpc::cpu::test {
namespace {

TEST(Copy, ReshapeFamilyCopiesBytes) {
  Tensor x = randomTensor(DType::F16, {2, 1, 3, 1}, 1);
  struct Case {
    const char *name;
    Shape out;
    Attrs attrs;
  };
  const std::vector<Case> cases = {
      {"Reshape", {3, 2}, ints("shape", {-1, 2})},
      {"Reshape", {2, 1, 3}, ints("shape", {0, 0, -1})},
      {"Reshape", {6}, {}},
      {"Copy", {2, 1, 3, 1}, {}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.name) + " -> " + shapeToString(c.out));
    Tensor y = runOne(c.name, {&x}, DType::F16, c.out, c.attrs);
    EXPECT_EQ(y.bytes, x.bytes);
  }
  // Zero-element tensors are fine.
  Tensor e(DType::F32, {0, 3});
  EXPECT_EQ(runOne("Reshape", {&e}, DType::F32, {3, 0}).numel(), 0);
}

TEST(Copy, BitCastKeepsTheBytes) {
  Tensor x = makeTensor(DType::F32, {3}, {1.0, -2.5, 0.0});
  Attrs to;
  to.setInt("to", int64_t(DType::I32));
  Tensor y = runOne("BitCast", {&x}, DType::I32, {3}, to);
  EXPECT_EQ(y.get<int32_t>(0), 0x3F800000);
  EXPECT_EQ(uint32_t(y.get<int32_t>(1)), 0xC0200000u);
  EXPECT_EQ(y.get<int32_t>(2), 0);
  // The widths must agree, and `to` must name the output's dtype.
  EXPECT_PREPARE_ERROR(
      prepareOnly("BitCast", {{DType::F32, {2}}}, {{DType::I64, {2}}},
                  [] { Attrs a; a.setInt("to", int64_t(DType::I64)); return a; }()),
      "bit width");
  EXPECT_PREPARE_ERROR(
      prepareOnly("BitCast", {{DType::F32, {2}}}, {{DType::I32, {2}}}, Attrs()),
      "attribute to");
}

TEST(Copy, InvalidInputs) {
  const TensorDesc x{DType::F32, {2, 1, 3}};
  EXPECT_PREPARE_ERROR(prepareOnly("Reshape", {x}, {{DType::F32, {5}}}),
                       "elements");
  EXPECT_PREPARE_ERROR(prepareOnly("Reshape", {x}, {{DType::F32, {3, 2}}},
                                   ints("shape", {2, 3})),
                       "does not match");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Reshape", {x}, {{DType::F32, {6}}}, ints("shape", {-1, -1})),
      "more than one -1");
  EXPECT_PREPARE_ERROR(prepareOnly("Copy", {x}, {{DType::I32, {2, 1, 3}}}),
                       "dtype mismatch");
}

/// Reference transpose by index arithmetic.
std::vector<double> refTranspose(const Tensor &x,
                                 const std::vector<int64_t> &perm,
                                 Shape &outShape) {
  const Shape &s = x.desc.shape;
  outShape.clear();
  for (int64_t p : perm)
    outShape.push_back(s[p]);
  std::vector<double> r(numElements(outShape));
  for (int64_t i = 0; i < numElements(outShape); ++i) {
    std::vector<int64_t> o = unravel(i, outShape), in(s.size());
    for (size_t d = 0; d < perm.size(); ++d)
      in[perm[d]] = o[d];
    r[i] = x.at(ravel(in, s));
  }
  return r;
}

TEST(Layout, Transpose) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3}, {1, 0}},
      {{2, 3, 4}, {0, 2, 1}},
      {{2, 3, 4, 5}, {0, 2, 1, 3}},
      {{2, 3, 4, 5}, {3, 2, 1, 0}},
      {{1, 4, 1, 3}, {2, 3, 0, 1}},
      {{5}, {0}},
      {{}, {}},
      {{2, 0, 3}, {2, 1, 0}},
      {{3, 4, 5}, {1, 2, 0}},
      // Trailing-dim swaps large enough to go by tiles, ragged edges too.
      {{40, 33}, {1, 0}},
      {{2, 3, 70, 18}, {0, 1, 3, 2}},
      {{16, 16}, {1, 0}},
      {{5, 64, 2, 48}, {0, 3, 2, 1}},
  };
  uint64_t seed = 10;
  for (DType t : {DType::F32, DType::I64, DType::F16, DType::Bool, DType::I8})
    for (const auto &[shape, perm] : cases) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + shapeToString(shape));
      Tensor x = randomTensor(t, shape, seed++, -50, 50);
      Shape os;
      std::vector<double> expect = refTranspose(x, perm, os);
      expectClose(runOne("Transpose", {&x}, t, os, ints("perm", perm)), expect,
                  0, 0);
    }
  // The plan carries perm (the importer writes ONNX's reversing default).
  const TensorDesc d{DType::F32, {2, 3, 4}};
  EXPECT_PREPARE_ERROR(prepareOnly("Transpose", {d}, {{DType::F32, {4, 3, 2}}}),
                       "perm is required");
  EXPECT_PREPARE_ERROR(prepareOnly("Transpose", {d}, {{DType::F32, {4, 3, 2}}},
                                   ints("perm", {0, 0, 1})),
                       "not a permutation");
  EXPECT_PREPARE_ERROR(prepareOnly("Transpose", {d}, {{DType::F32, {4, 3, 2}}},
                                   ints("perm", {1, 0})),
                       "rank 3");
  EXPECT_PREPARE_ERROR(prepareOnly("Transpose", {d}, {{DType::F32, {2, 3, 4}}},
                                   ints("perm", {2, 1, 0})),
                       "does not match");
}

TEST(Layout, Expand) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 1}, {2, 3, 4}}, {{}, {2, 2}},           {{4}, {3, 4}},
      {{1, 1}, {1, 1}},    {{2, 1, 3}, {2, 5, 3}}, {{1}, {0, 2}},
  };
  uint64_t seed = 20;
  for (const auto &[in, out] : cases) {
    SCOPED_TRACE(shapeToString(in) + " -> " + shapeToString(out));
    Tensor x = randomTensor(DType::I32, in, seed++, -100, 100);
    std::vector<double> expect(numElements(out));
    for (int64_t i = 0; i < numElements(out); ++i)
      expect[i] = x.at(broadcastIndex(unravel(i, out), in));
    expectClose(runOne("Expand", {&x}, DType::I32, out), expect, 0, 0);
  }
  // The compiler resolves ONNX's two-way broadcast (a 1 in the shape input
  // keeps a larger input dim) into the output's shape.
  Tensor x = randomTensor(DType::F32, {2, 3}, 30);
  Tensor y = runOne("Expand", {&x}, DType::F32, {4, 2, 3});
  for (int64_t i = 0; i < y.numel(); ++i)
    EXPECT_EQ(y.at(i), x.at(i % 6));
  EXPECT_PREPARE_ERROR(
      prepareOnly("Expand", {{DType::F32, {3}}}, {{DType::F32, {2, 4}}}),
      "does not broadcast");
}

TEST(Layout, Tile) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3}, {2, 3}}, {{4}, {3}},       {{2, 1, 3}, {1, 4, 1}},
      {{2, 3}, {1, 1}}, {{2, 3}, {0, 2}}, {{}, {}},
  };
  uint64_t seed = 40;
  for (const auto &[in, reps] : cases) {
    SCOPED_TRACE(shapeToString(in));
    Tensor x = randomTensor(DType::F64, in, seed++);
    Shape out;
    for (size_t d = 0; d < in.size(); ++d)
      out.push_back(in[d] * reps[d]);
    std::vector<double> expect(numElements(out));
    for (int64_t i = 0; i < numElements(out); ++i) {
      std::vector<int64_t> idx = unravel(i, out);
      for (size_t d = 0; d < in.size(); ++d)
        idx[d] %= in[d];
      expect[i] = x.at(ravel(idx, in));
    }
    expectClose(runOne("Tile", {&x}, DType::F64, out, ints("repeats", reps)),
                expect, 0, 0);
  }
  EXPECT_PREPARE_ERROR(
      prepareOnly("Tile", {{DType::F32, {2}}}, {{DType::F32, {4}}}),
      "repeats is required");
  EXPECT_PREPARE_ERROR(prepareOnly("Tile", {{DType::F32, {2}}},
                                   {{DType::F32, {4}}},
                                   ints("repeats", {2, 1})),
                       "rank 1");
  EXPECT_PREPARE_ERROR(prepareOnly("Tile", {{DType::F32, {2}}},
                                   {{DType::F32, {4}}}, ints("repeats", {-2})),
                       "negative");
}

TEST(Layout, Trilu) {
  uint64_t seed = 50;
  for (Shape s : {Shape{4, 5}, Shape{2, 3, 3}, Shape{5, 2}, Shape{1, 0, 3}})
    for (int64_t k : {-7, -1, 0, 2, 9})
      for (int64_t upper : {0, 1}) {
        SCOPED_TRACE(shapeToString(s) + " k=" + std::to_string(k) +
                     " upper=" + std::to_string(upper));
        Tensor x = randomTensor(DType::F32, s, seed++, 1, 2);
        int64_t rows = s[s.size() - 2], cols = s.back();
        std::vector<double> expect = x.values();
        for (int64_t i = 0; i < x.numel(); ++i) {
          int64_t r = (i / cols) % rows, c = i % cols;
          bool keep = upper ? c - r >= k : c - r <= k;
          if (!keep)
            expect[i] = 0;
        }
        Attrs a;
        a.setInt("k", k);
        a.setInt("upper", upper);
        expectClose(runOne("Trilu", {&x}, DType::F32, s, a), expect, 0, 0);
      }
  Attrs bad;
  bad.setInt("upper", 3);
  bad.setInt("k", 0);
  EXPECT_PREPARE_ERROR(
      prepareOnly("Trilu", {{DType::F32, {4}}}, {{DType::F32, {4}}}, bad),
      "rank >= 2");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Trilu", {{DType::F32, {2, 2}}}, {{DType::F32, {2, 2}}}, bad),
      "upper must be 0 or 1");
  // The plan carries upper and k (ODS defaults 1 and 0).
  EXPECT_PREPARE_ERROR(prepareOnly("Trilu", {{DType::F32, {2, 2}}},
                                   {{DType::F32, {2, 2}}}, ints("k", {0})),
                       "upper is required");
}

TEST(Concat, JoinsAlongAxis) {
  uint64_t seed = 70;
  const std::vector<std::pair<std::vector<Shape>, int64_t>> cases = {
      {{{2, 3}, {2, 4}}, 1},
      {{{2, 3}, {1, 3}, {4, 3}}, 0},
      {{{2, 3, 4}, {2, 1, 4}, {2, 0, 4}}, -2},
      {{{5}}, 0},
      {{{2, 2, 1}, {2, 2, 3}}, -1},
  };
  for (DType t : {DType::F32, DType::I8, DType::I64})
    for (const auto &[shapes, axis] : cases) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " axis " + std::to_string(axis));
      std::vector<Tensor> ins;
      std::vector<const Tensor *> ptrs;
      for (const Shape &s : shapes)
        ins.push_back(randomTensor(t, s, seed++, -100, 100));
      for (const Tensor &x : ins)
        ptrs.push_back(&x);
      const int64_t rank = static_cast<int64_t>(shapes[0].size());
      const int64_t ax = axis < 0 ? axis + rank : axis;
      Shape out = shapes[0];
      out[ax] = 0;
      for (const Shape &s : shapes)
        out[ax] += s[ax];
      std::vector<double> expect(numElements(out));
      for (int64_t i = 0; i < numElements(out); ++i) {
        std::vector<int64_t> idx = unravel(i, out);
        size_t which = 0;
        while (idx[ax] >= shapes[which][ax])
          idx[ax] -= shapes[which++][ax];
        expect[i] = ins[which].at(ravel(idx, shapes[which]));
      }
      expectClose(runOne("Concat", ptrs, t, out, ints("axis", {axis})), expect,
                  0, 0);
    }
  const TensorDesc a{DType::F32, {2, 3}}, b{DType::F32, {3, 3}};
  EXPECT_PREPARE_ERROR(
      prepareOnly("Concat", {a, b}, {{DType::F32, {2, 6}}}, ints("axis", {1})),
      "outside axis 1");
  EXPECT_PREPARE_ERROR(prepareOnly("Concat", {a, b}, {{DType::F32, {5, 3}}}),
                       "axis is required");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Concat", {a, b}, {{DType::F32, {5, 3}}}, ints("axis", {2})),
      "out of range");
  EXPECT_PREPARE_ERROR(prepareOnly("Concat", {a, {DType::I32, {3, 3}}},
                                   {{DType::F32, {5, 3}}}, ints("axis", {0})),
                       "dtype mismatch");
}

/// The attributes a plan carries for Split: the axis and every output's
/// size.
Attrs splitAttrs(int64_t axis, std::vector<int64_t> sizes) {
  Attrs a = ints("axis", {axis});
  a.setInts("split", std::move(sizes));
  return a;
}

TEST(Split, CutsAlongAxis) {
  Tensor x = randomTensor(DType::F32, {3, 7, 2}, 80);
  auto check = [&](int64_t axis, const std::vector<int64_t> &sizes) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    const int64_t ax = axis < 0 ? axis + 3 : axis;
    std::vector<Tensor> outs;
    for (int64_t n : sizes) {
      Shape s = x.desc.shape;
      s[ax] = n;
      outs.emplace_back(DType::F32, s);
    }
    Status st = runKernel("Split", {&x}, outs, splitAttrs(axis, sizes));
    ASSERT_TRUE(st.isOk()) << st.message();
    int64_t start = 0;
    for (size_t o = 0; o < outs.size(); ++o) {
      for (int64_t i = 0; i < outs[o].numel(); ++i) {
        std::vector<int64_t> idx = unravel(i, outs[o].desc.shape);
        idx[ax] += start;
        EXPECT_EQ(outs[o].at(i), x.at(ravel(idx, x.desc.shape)));
      }
      start += sizes[o];
    }
  };
  check(1, {2, 0, 5});
  check(-3, {1, 1, 1});
  // Opset 18's num_outputs (last chunk smaller) arrives resolved to sizes.
  check(1, {3, 3, 1});
  const TensorDesc y322{DType::F32, {3, 2, 2}}, y332{DType::F32, {3, 3, 2}},
      y342{DType::F32, {3, 4, 2}};
  expectPrepareErrors({
      {"Split", {x.desc}, {y322, y322}, "sums to 4", splitAttrs(1, {2, 2})},
      {"Split", {x.desc}, {y342, y332}, "3 sizes but there are 2 outputs",
       splitAttrs(1, {3, 3, 1})},
      {"Split", {x.desc}, {y332, y342}, "output 0 shape",
       splitAttrs(1, {4, 3})},
      {"Split", {x.desc}, {y332, y342}, "split is required", ints("axis", {1})},
  });
}

} // namespace
} // namespace tpc::cpu::test
