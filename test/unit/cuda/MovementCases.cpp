//===- MovementCases.cpp - Parity cases of the data-movement kernels ------===//
//
// Every element size (1, 2, 4, 8 bytes), transposes large enough for the
// tiled path and odd enough for its edges, out-of-range and negative
// indices, concatenations whose chunks rule the 16-byte unit out,
// ScatterND with and without reductions (unique tuples without one, since
// duplicates race on the GPU; with duplicates and out-of-range ones with),
// and ScatterElements with duplicate indices throughout (its lines resolve
// them as the CPU does).
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

namespace tpc::cuda::test {
namespace {

using Cases = std::vector<ParityCase>;


const DType kSizes[] = {DType::Bool, DType::F16, DType::F32, DType::I64};

void addStrided(Cases &v) {
  for (DType t : kSizes) {
    const std::string n = dtypeName(t);
    addCase(v, n + "_tiled", "Transpose", {rnd(t, {3, 45, 70}, -9, 9)},
        {{t, {3, 70, 45}}}, ints("perm", {0, 2, 1}));
    addCase(v, n + "_perm", "Transpose", {rnd(t, {2, 3, 5, 7}, -9, 9)},
        {{t, {7, 2, 5, 3}}}, ints("perm", {3, 0, 2, 1}));
  }
  addCase(v, "f32_reversed", "Transpose", {rnd(DType::F32, {5, 6, 7})},
          {{DType::F32, {7, 6, 5}}}, ints("perm", {2, 1, 0}));
  addCase(v, "f32_big_tiled", "Transpose", {rnd(DType::F32, {257, 129})},
      {{DType::F32, {129, 257}}}, ints("perm", {1, 0}));
  for (DType t : {DType::F32, DType::F16, DType::I64}) {
    addCase(v, dtypeName(t), "Expand", {rnd(t, {3, 1, 5}, -9, 9)},
            {{t, {2, 3, 4, 5}}}, {});
    addCase(v, dtypeName(t), "Tile", {rnd(t, {2, 3}, -9, 9)}, {{t, {6, 6}}},
        ints("repeats", {3, 2}));
  }
  Attrs sl = ints("starts", {1, -2});
  sl = ints("ends", {6, -9}, sl);
  sl = ints("axes", {0, 2}, sl);
  sl = ints("steps", {2, -3}, sl);
  for (DType t : kSizes)
    addCase(v, dtypeName(t), "Slice", {rnd(t, {7, 4, 11}, -9, 9)},
        {{t, {3, 4, 3}}}, sl);
  Attrs pad = ints("pads", {1, -1, 2, 0, 3, 1});
  pad.setFloat("value", -1.5);
  for (DType t : {DType::F32, DType::F16, DType::I64, DType::BF16})
    addCase(v, dtypeName(t), "Pad", {rnd(t, {3, 4, 5}, -9, 9)},
        {{t, {4, 6, 8}}}, pad);
  Attrs tr = intAttr("k", -1);
  for (DType t : {DType::F32, DType::F16, DType::I64}) {
    addCase(v, std::string(dtypeName(t)) + "_upper", "Trilu",
        {rnd(t, {2, 5, 7}, -9, 9)}, {{t, {2, 5, 7}}}, intAttr("k", 2));
    addCase(v, std::string(dtypeName(t)) + "_lower", "Trilu",
        {rnd(t, {3, 6, 4}, -9, 9)}, {{t, {3, 6, 4}}}, intAttr("upper", 0, tr));
  }
}

void addConcatSplit(Cases &v) {
  for (DType t : kSizes) {
    const std::string n = dtypeName(t);
    addCase(v, n + "_axis1", "Concat",
        {rnd(t, {3, 2, 5}, -9, 9), rnd(t, {3, 7, 5}, -9, 9),
         rnd(t, {3, 1, 5}, -9, 9)},
        {{t, {3, 10, 5}}}, intAttr("axis", 1));
    addCase(v, n + "_last", "Concat",
        {rnd(t, {4, 3}, -9, 9), rnd(t, {4, 1}, -9, 9)}, {{t, {4, 4}}},
        intAttr("axis", -1));
    addCase(v, n + "_uneven", "Split", {rnd(t, {3, 10, 5}, -9, 9)},
        {{t, {3, 2, 5}}, {t, {3, 7, 5}}, {t, {3, 1, 5}}},
        ints("split", {2, 7, 1}, intAttr("axis", 1)));
  }
  // More operands than one launch takes (8 slots).
  std::vector<Tensor> many;
  for (int i = 0; i < 11; ++i)
    many.push_back(rnd(DType::F32, {2, 1 + i % 3}));
  int64_t total = 0;
  for (const Tensor &t : many)
    total += t.desc.shape[1];
  addCase(v, "f32_eleven", "Concat", many, {{DType::F32, {2, total}}},
      intAttr("axis", 1));
  addCase(v, "f32_equal", "Split", {rnd(DType::F32, {4, 12})},
          {{DType::F32, {4, 4}}, {DType::F32, {4, 4}}, {DType::F32, {4, 4}}},
          ints("split", {4, 4, 4}, intAttr("axis", 1)));
  addCase(v, "f32_misaligned", "Concat",
      {rnd(DType::F32, {5, 3}), rnd(DType::F32, {5, 4})},
      {{DType::F32, {5, 7}}}, intAttr("axis", 1), 1, 1);
}

/// Indices in [-dim, dim - 1]: negative ones count from the end. (An index
/// out of range fails the CPU run, which is the reference here.)
Tensor indices(DType t, Shape s, int64_t dim) {
  return rnd(t, std::move(s), double(-dim), double(dim - 1));
}

void addGathers(Cases &v) {
  for (DType t : kSizes) {
    const std::string n = dtypeName(t);
    addCase(v, n + "_axis0", "Gather",
        {rnd(t, {9, 6}, -9, 9), indices(DType::I64, {2, 5}, 9)},
        {{t, {2, 5, 6}}});
    addCase(v, n + "_axis1", "Gather",
        {rnd(t, {3, 9, 5}, -9, 9), indices(DType::I32, {4}, 9)},
        {{t, {3, 4, 5}}}, intAttr("axis", 1));
    addCase(v, n + "_axis0", "GatherElements",
        {rnd(t, {5, 4}, -9, 9), indices(DType::I64, {3, 4}, 5)},
        {{t, {3, 4}}});
    addCase(v, n + "_axis2", "GatherElements",
        {rnd(t, {3, 4, 6}, -9, 9), indices(DType::I32, {2, 3, 9}, 6)},
        {{t, {2, 3, 9}}}, intAttr("axis", -1));
  }
  addCase(v, "f32_embedding", "Gather",
      {rnd(DType::F32, {1000, 64}), indices(DType::I64, {3, 17}, 1000)},
      {{DType::F32, {3, 17, 64}}});
  addCase(v, "f16_rows_odd", "Gather",
      {rnd(DType::F16, {50, 7}), indices(DType::I64, {13}, 50)},
      {{DType::F16, {13, 7}}}, {}, 1, 1);
  for (DType t : {DType::F32, DType::F16, DType::I64}) {
    addCase(v, std::string(dtypeName(t)) + "_depth2", "GatherND",
        {rnd(t, {4, 5, 3}, -9, 9), indices(DType::I64, {6, 2}, 4)},
        {{t, {6, 3}}});
    addCase(v, std::string(dtypeName(t)) + "_batch1", "GatherND",
        {rnd(t, {2, 5, 3}, -9, 9), indices(DType::I32, {2, 4, 1}, 5)},
        {{t, {2, 4, 3}}}, intAttr("batch_dims", 1));
  }
}

/// The full index grid of window [:, :, :, :cols] of shape `s` (the mask
/// slice assignment of transformers' exports).
Tensor windowGrid(const Shape &s, int64_t cols) {
  std::vector<double> grid;
  for (int64_t b = 0; b < s[0]; ++b)
    for (int64_t h = 0; h < s[1]; ++h)
      for (int64_t q = 0; q < s[2]; ++q)
        for (int64_t k = 0; k < cols; ++k)
          grid.insert(grid.end(), {double(b), double(h), double(q), double(k)});
  return cpu::test::makeTensor(DType::I64, {s[0], s[1], s[2], cols, 4}, grid);
}

/// Calls f(dtype, name, attrs) for every dtype and reduction the scatters
/// combine, with the reduction attribute set and a case name prefix.
template <class F> void forEachReduction(F &&f) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32,
                  DType::I64})
    for (const char *r : {"add", "mul", "max", "min"}) {
      Attrs a;
      a.setString("reduction", r);
      f(t, std::string(dtypeName(t)) + "_" + r, a);
    }
}

void addScatterND(Cases &v) {
  // Unique rows, two given as negative indices.
  Tensor rows = cpu::test::makeTensor(DType::I64, {2, 3, 1},
                                      {4, -1, 0, 3, 2, -5});
  for (DType t : kSizes) {
    const std::string n = dtypeName(t);
    addCase(v, n + "_rows", "ScatterND",
        {rnd(t, {6, 5, 4}, -9, 9), rows, rnd(t, {2, 3, 5, 4}, -9, 9)},
        {{t, {6, 5, 4}}});
    addCase(v, n + "_mask", "ScatterND",
        {rnd(t, {2, 3, 8, 8}, -9, 9), windowGrid({2, 3, 8, 8}, 5),
         rnd(t, {2, 3, 8, 5}, -9, 9)},
        {{t, {2, 3, 8, 8}}});
  }
  addCase(v, "f32_in_place", "ScatterND",
      {rnd(DType::F32, {6, 5, 4}), rows, rnd(DType::F32, {2, 3, 5, 4})},
      {{DType::F32, {6, 5, 4}}});
  v.back().inPlace = 0;
  addCase(v, "f16_misaligned", "ScatterND",
      {rnd(DType::F16, {6, 5, 3}), rows, rnd(DType::F16, {2, 3, 5, 3})},
      {{DType::F16, {6, 5, 3}}}, {}, 1, 1);
  forEachReduction([&](DType t, const std::string &n, const Attrs &a) {
    addCase(v, n + "_rows", "ScatterND",
        {rnd(t, {6, 70}, -3, 3), indices(DType::I64, {9, 1}, 6),
         rnd(t, {9, 70}, -3, 3)},
        {{t, {6, 70}}}, a);
    addCase(v, n + "_elements", "ScatterND",
        {rnd(t, {4, 5, 3}, -3, 3), indices(DType::I64, {12, 2}, 4),
         rnd(t, {12, 3}, -3, 3)},
        {{t, {4, 5, 3}}}, a);
  });
}

void addScatterElements(Cases &v) {
  Attrs none;
  none.setString("reduction", "none");
  for (DType t : kSizes) {
    const std::string n = dtypeName(t);
    addCase(v, n + "_rows", "ScatterElements",
        {rnd(t, {6, 5}, -9, 9), indices(DType::I64, {6, 9}, 5),
         rnd(t, {6, 9}, -9, 9)},
        {{t, {6, 5}}}, intAttr("axis", -1, none));
    addCase(v, n + "_columns", "ScatterElements",
        {rnd(t, {4, 3, 7}, -9, 9), indices(DType::I32, {8, 2, 5}, 4),
         rnd(t, {8, 2, 5}, -9, 9)},
        {{t, {4, 3, 7}}}, intAttr("axis", 0, none));
  }
  addCase(v, "f32_in_place", "ScatterElements",
      {rnd(DType::F32, {5, 40}), indices(DType::I64, {5, 30}, 40),
       rnd(DType::F32, {5, 30})},
      {{DType::F32, {5, 40}}}, intAttr("axis", 1));
  v.back().inPlace = 0;
  addCase(v, "f16_misaligned", "ScatterElements",
      {rnd(DType::F16, {3, 7}), indices(DType::I64, {3, 5}, 7),
       rnd(DType::F16, {3, 5})},
      {{DType::F16, {3, 7}}}, intAttr("axis", 1), 1, 1);
  forEachReduction([&](DType t, const std::string &n, const Attrs &a) {
    addCase(v, n + "_rows", "ScatterElements",
        {rnd(t, {7, 6}, -3, 3), indices(DType::I64, {7, 10}, 6),
         rnd(t, {7, 10}, -3, 3)},
        {{t, {7, 6}}}, intAttr("axis", 1, a));
    addCase(v, n + "_middle", "ScatterElements",
        {rnd(t, {3, 4, 5}, -3, 3), indices(DType::I32, {2, 9, 5}, 4),
         rnd(t, {2, 9, 5}, -3, 3)},
        {{t, {3, 4, 5}}}, intAttr("axis", 1, a));
  });
}

/// KV-cache writes out of place (the parity harness gives the output its own
/// buffer): the state is copied, then the new rows written at the position.
void addCacheWrites(Cases &v) {
  for (int64_t pos : {0, 3, 4}) {
    addCase(v, "f32_pos" + std::to_string(pos), "CacheWrite",
        {rnd(DType::F32, {2, 3, 5, 4}), rnd(DType::F32, {2, 3, 1, 4}),
         tpc::cpu::test::makeTensor(DType::I64, {1}, {double(pos)})},
        {{DType::F32, {2, 3, 5, 4}}}, intAttr("axis", 2));
  }
  addCase(v, "f16_two_rows", "CacheWrite",
      {rnd(DType::F16, {1, 2, 8, 16}), rnd(DType::F16, {1, 2, 2, 16}),
       tpc::cpu::test::makeTensor(DType::I64, {1}, {5})},
      {{DType::F16, {1, 2, 8, 16}}}, intAttr("axis", 2));
}

} // namespace

void addMovementCases(std::vector<ParityCase> &v) {
  addCacheWrites(v);
  addStrided(v);
  addConcatSplit(v);
  addGathers(v);
  addScatterND(v);
  addScatterElements(v);
}

} // namespace tpc::cuda::test
