//===- NormCases.cpp - Parity cases of softmax, norms, reductions, CumSum -===//
//
// Rows shorter than a warp, longer than a block (1024 threads x several
// elements), strided softmax axes, reductions over trailing, leading and
// interleaved axes, ArgMax/ArgMin and TopK with ties and NaNs, CumSum
// along rows and strided axes. Sums over long rows accumulate in another order than the
// CPU, hence the tolerance scales.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <cmath>
#include <limits>
#include <utility>

namespace tpc::cuda::test {
namespace {

using Cases = std::vector<ParityCase>;


const DType kFloats[] = {DType::F32, DType::F16, DType::BF16};

void addSoftmax(Cases &v) {
  for (const char *op : {"Softmax", "LogSoftmax"})
    for (DType t : kFloats) {
      const std::string n = dtypeName(t);
      addCase(v, n + "_row7", op, {rnd(t, {5, 7}, -4, 4)}, {{t, {5, 7}}},
              intAttr("axis", -1), 2);
      addCase(v, n + "_row5000", op, {rnd(t, {3, 5000}, -6, 6)}, {{t, {3, 5000}}},
          intAttr("axis", -1), 4);
      addCase(v, n + "_axis1", op, {rnd(t, {2, 33, 9}, -4, 4)}, {{t, {2, 33, 9}}},
          intAttr("axis", 1), 2);
    }
  Tensor inf = rnd(DType::F32, {4, 8});
  inf.set(3, -INFINITY);
  inf.set(9, -INFINITY);
  addCase(v, "f32_neg_inf", "Softmax", {inf}, {{DType::F32, {4, 8}}},
          intAttr("axis", -1));
  addCase(v, "f64", "Softmax", {rnd(DType::F64, {3, 129})},
          {{DType::F64, {3, 129}}}, intAttr("axis", -1));
}

void addNorms(Cases &v) {
  Attrs eps;
  eps.setFloat("epsilon", 1e-3);
  for (DType t : kFloats) {
    const std::string n = dtypeName(t);
    const Shape s = {4, 3, 768};
    Attrs last = intAttr("axis", -1, eps);
    addCase(v, n + "_bias_stats", "LayerNormalization",
        {rnd(t, s, 1, 5), rnd(t, {768}, 0.5, 1.5), rnd(t, {768}, -1, 1)},
        {{t, s}, {t, {4, 3, 1}}, {t, {4, 3, 1}}}, last, 8);
    addCase(v, n + "_axis1_nobias", "LayerNormalization",
        {rnd(t, {5, 6, 7}, -2, 2), rnd(t, {6, 7}, 0.5, 1.5), absent()},
        {{t, {5, 6, 7}}}, intAttr("axis", 1, eps), 4);
    addCase(v, n + "_row3000", "LayerNormalization",
        {rnd(t, {2, 3000}, -3, 3), rnd(t, {3000}, 0.5, 1.5),
         rnd(t, {3000}, -1, 1)},
        {{t, {2, 3000}}}, last, 8);
    addCase(v, n + "_odd", "RMSNormalization", {rnd(t, {3, 5, 19}, -3, 3), rnd(t, {19})},
        {{t, {3, 5, 19}}}, last, 4);
    addCase(v, n + "_two_dims", "RMSNormalization",
        {rnd(t, {7, 4, 300}, -3, 3), rnd(t, {4, 300})}, {{t, {7, 4, 300}}},
        intAttr("axis", 1, eps), 8);
  }
  addCase(v, "f64", "LayerNormalization",
      {rnd(DType::F64, {3, 65}), rnd(DType::F64, {65}), rnd(DType::F64, {65})},
      {{DType::F64, {3, 65}}}, intAttr("axis", -1, eps), 10);
}

void addReductions(Cases &v) {
  struct Axes {
    const char *name;
    std::vector<int64_t> axes;
    Shape out; // keepdims = 1
  };
  const Shape s = {6, 5, 37};
  const Axes shapes[] = {
      {"last", {2}, {6, 5, 1}},
      {"leading", {0}, {1, 5, 37}},
      {"middle", {1}, {6, 1, 37}},
      {"outer_inner", {0, 2}, {1, 5, 1}},
      {"all", {0, 1, 2}, {1, 1, 1}},
  };
  const char *ops[] = {"ReduceSum",  "ReduceMean", "ReduceMax",
                       "ReduceMin",  "ReduceProd", "ReduceL2",
                       "ReduceSumSquare"};
  for (const char *op : ops) {
    const bool prod = std::string(op) == "ReduceProd";
    // Products of many values near 1 stay finite.
    const double lo = prod ? 0.9 : -2, hi = prod ? 1.1 : 2;
    for (const Axes &a : shapes)
      for (DType t : kFloats)
        addCase(v, std::string(dtypeName(t)) + "_" + a.name, op,
            {rnd(t, s, lo, hi)}, {{t, a.out}}, ints("axes", a.axes), 16);
    for (DType t : {DType::I32, DType::I64})
      addCase(v, std::string(dtypeName(t)) + "_last", op,
          {rnd(t, {4, 9}, prod ? 1 : -20, prod ? 2 : 20)}, {{t, {4, 1}}},
          ints("axes", {1}));
  }
  addCase(v, "f32_row10000_nokeep", "ReduceSum", {rnd(DType::F32, {3, 10000})},
      {{DType::F32, {3}}}, ints("axes", {1}, intAttr("keepdims", 0)), 50);
  addCase(v, "f32_default_axes", "ReduceMean", {rnd(DType::F32, {4, 7})},
      {{DType::F32, {1, 1}}});
  Tensor nan = rnd(DType::F32, {3, 11});
  nan.set(15, std::nan(""));
  addCase(v, "f32_nan", "ReduceMax", {nan}, {{DType::F32, {3, 1}}},
      ints("axes", {1}));
}

/// Small integers as floats: ties are frequent.
Tensor ties(DType t, Shape s, double lo = -3, double hi = 3) {
  Tensor x = rnd(DType::I32, s, lo, hi);
  Tensor y(t, s);
  for (int64_t i = 0; i < x.numel(); ++i)
    y.set(i, x.at(i));
  return y;
}

void addArg(Cases &v) {
  for (const char *op : {"ArgMax", "ArgMin"}) {
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I64,
                    DType::I32}) {
      const std::string n = dtypeName(t);
      for (int last : {0, 1}) {
        Attrs a = intAttr("select_last_index", last, intAttr("axis", -1));
        const std::string sfx = last ? "_last_index" : "";
        addCase(v, n + "_rows" + sfx, op, {ties(t, {7, 301})},
            {{DType::I64, {7, 1}}}, a);
        addCase(v, n + "_long_row" + sfx, op, {ties(t, {2, 5000})},
            {{DType::I64, {2, 1}}}, a);
        addCase(v, n + "_axis1" + sfx, op, {ties(t, {3, 10, 6})},
            {{DType::I64, {3, 6}}},
            intAttr("select_last_index", last,
                    intAttr("axis", 1, intAttr("keepdims", 0))));
      }
      addCase(v, n + "_random", op, {rnd(t, {5, 50000}, -100, 100)},
          {{DType::I64, {5, 1}}}, intAttr("axis", 1));
    }
    // NaN first in a row wins; later NaNs are skipped.
    Tensor nan = rnd(DType::F32, {4, 9});
    nan.set(0, std::nan(""));
    nan.set(13, std::nan(""));
    nan.set(27, std::nan(""));
    addCase(v, "f32_nan_rows", op, {nan}, {{DType::I64, {4, 1}}},
        intAttr("axis", 1));
    addCase(v, "f32_nan_columns", op, {nan}, {{DType::I64, {1, 9}}},
        intAttr("axis", 0));
  }
}

/// TopK: every dtype with ties, long rows (k rounds over a block), strided
/// axes, every position of a short axis (k = dim), NaNs both ways.
void addTopK(Cases &v) {
  auto attrs = [](int64_t k, int64_t axis, int largest) {
    return intAttr("k", k, intAttr("axis", axis, intAttr("largest", largest)));
  };
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32,
                  DType::I64, DType::I8, DType::U8})
    for (int largest : {1, 0}) {
      const std::string n =
          std::string(dtypeName(t)) + (largest ? "_largest" : "_smallest");
      addCase(v, n + "_rows", "TopK", {ties(t, {7, 301}, 0, 6)},
          {{t, {7, 10}}, {DType::I64, {7, 10}}}, attrs(10, -1, largest));
      addCase(v, n + "_axis1_all", "TopK", {ties(t, {3, 10, 6}, 0, 6)},
          {{t, {3, 10, 6}}, {DType::I64, {3, 10, 6}}}, attrs(10, 1, largest));
    }
  addCase(v, "f32_long_rows", "TopK", {rnd(DType::F32, {4, 50000}, -100, 100)},
      {{DType::F32, {4, 50}}, {DType::I64, {4, 50}}}, attrs(50, 1, 1));
  addCase(v, "bf16_many_lines", "TopK", {rnd(DType::BF16, {300, 20, 2})},
      {{DType::BF16, {300, 3, 2}}, {DType::I64, {300, 3, 2}}},
      attrs(3, 1, 0));
  Tensor nan = ties(DType::F32, {4, 9});
  for (int64_t i : {0, 13, 14, 27, 35})
    nan.set(i, std::nan(""));
  for (int largest : {1, 0})
    addCase(v, std::string("f32_nan") + (largest ? "_largest" : "_smallest"),
        "TopK", {nan}, {{DType::F32, {4, 4}}, {DType::I64, {4, 4}}},
        attrs(4, -1, largest));
}

/// CumSum: long rows (the block scan) with every flag, short rows and
/// strided axes (one thread per column). Integer-valued data make every sum
/// exact, so the block scan's order cannot show; random floats get a
/// tolerance for it.
void addCumSum(Cases &v) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64,
                  DType::F64}) {
    const std::string n = dtypeName(t);
    for (int exclusive : {0, 1})
      for (int reverse : {0, 1}) {
        const std::string sfx = std::string(exclusive ? "_exclusive" : "") +
                                (reverse ? "_reverse" : "");
        Attrs a = intAttr("exclusive", exclusive,
                          intAttr("reverse", reverse, intAttr("axis", -1)));
        addCase(v, n + "_rows5000" + sfx, "CumSum", {ties(t, {3, 5000})},
            {{t, {3, 5000}}}, a);
        addCase(v, n + "_axis0" + sfx, "CumSum", {ties(t, {40, 7, 9})},
            {{t, {40, 7, 9}}},
            intAttr("exclusive", exclusive,
                    intAttr("reverse", reverse, intAttr("axis", 0))));
      }
    addCase(v, n + "_short_rows", "CumSum", {ties(t, {300, 20})}, {{t, {300, 20}}},
        intAttr("axis", 1));
    addCase(v, n + "_rows33", "CumSum", {ties(t, {5, 33})}, {{t, {5, 33}}},
        intAttr("axis", -1));
  }
  addCase(v, "f32_random_rows", "CumSum", {rnd(DType::F32, {4, 3000}, 0, 1)},
      {{DType::F32, {4, 3000}}}, intAttr("axis", 1), 16);
  addCase(v, "f32_random_middle", "CumSum", {rnd(DType::F32, {3, 200, 5}, -1, 1)},
      {{DType::F32, {3, 200, 5}}},
      intAttr("axis", -2, intAttr("exclusive", 1)));
}

/// An Attention case on fresh random q, k and v of the given shapes, with
/// output [B, H, S, v's last dim].
void addAttention(Cases &v, const std::string &name, DType t, const Shape &q,
                  const Shape &k, const Shape &vs, Attrs a, double tolScale) {
  addCase(v, name, "Attention", {rnd(t, q), rnd(t, k), rnd(t, vs)},
          {{t, {q[0], q[1], q[2], vs[3]}}}, std::move(a), tolScale);
}

/// The fused ops: GQA attention with causal, float and bool masks, a row
/// longer than a warp's worth of keys, several tiles, more keys than the
/// row kernel holds; SwiGLU; residual add + norm.
void addFused(Cases &v) {
  for (DType t : kFloats) {
    const std::string n = dtypeName(t);
    addAttention(v, n + "_gqa", t, {2, 4, 5, 8}, {2, 2, 7, 8}, {2, 2, 7, 6}, {},
                 4);
    addAttention(v, n + "_causal_long", t, {1, 3, 300, 16}, {1, 3, 300, 16},
                 {1, 3, 300, 16}, intAttr("is_causal", 1), 8);
    addCase(v, n + "_float_mask", "Attention",
        {rnd(t, {2, 2, 5, 8}), rnd(t, {2, 2, 9, 8}), rnd(t, {2, 2, 9, 4}),
         rnd(t, {5, 9}, -3, 0)},
        {{t, {2, 2, 5, 4}}}, {}, 4);
    // The tiled kernel: several query and key tiles, heads 64 wide (values
    // 48), and a float mask that hides each row's first 40 keys (left
    // padding: a whole first tile masked) besides its random values.
    Tensor pad = rnd(t, {70, 100}, -3, 0);
    for (int64_t r = 0; r < 70; ++r)
      for (int64_t c = 0; c < 40; ++c)
        pad.set(r * 100 + c, -std::numeric_limits<double>::infinity());
    addCase(v, n + "_tiles_left_pad", "Attention",
            {rnd(t, {1, 4, 70, 64}), rnd(t, {1, 2, 100, 64}),
             rnd(t, {1, 2, 100, 48}), pad},
            {{t, {1, 4, 70, 48}}}, {}, 4);
    addAttention(v, n + "_tiles_causal", t, {2, 2, 50, 128}, {2, 2, 50, 128},
                 {2, 2, 50, 128}, intAttr("is_causal", 1), 8);
    // More keys than the row kernel holds, for a few rows and for one.
    addAttention(v, n + "_long_keys", t, {1, 2, 3, 8}, {1, 2, 7000, 8},
                 {1, 2, 7000, 8}, {}, 8);
    addAttention(v, n + "_decode_long_keys", t, {1, 2, 1, 8}, {1, 2, 7000, 8},
                 {1, 2, 7000, 8}, {}, 8);
    addCase(v, n + "_odd", "SwiGLU", {rnd(t, {3, 37}, -6, 6), rnd(t, {3, 37})},
        {{t, {3, 37}}});
    Attrs eps;
    eps.setFloat("epsilon", 1e-3);
    addCase(v, n + "_layer", "AddNormalization",
        {rnd(t, {4, 3, 64}), rnd(t, {4, 3, 64}), rnd(t, {64}, 0.5, 1.5),
         rnd(t, {64})},
        {{t, {4, 3, 64}}, {t, {4, 3, 64}}},
        intAttr("rms", 0, intAttr("axis", -1, eps)), 8);
    addCase(v, n + "_rms", "AddNormalization",
        {rnd(t, {5, 96}), rnd(t, {5, 96}), rnd(t, {96}, 0.5, 1.5)},
        {{t, {5, 96}}, {t, {5, 96}}},
        intAttr("rms", 1, intAttr("axis", -1, eps)), 8);
  }
  Tensor keep = rnd(DType::Bool, {2, 1, 5, 9});
  for (int64_t i = 0; i < keep.numel(); i += 9)
    keep.set(i, 1); // at least one key per row
  addCase(v, "f32_bool_mask", "Attention",
      {rnd(DType::F32, {2, 3, 5, 8}), rnd(DType::F32, {2, 3, 9, 8}),
       rnd(DType::F32, {2, 3, 9, 8}), keep},
      {{DType::F32, {2, 3, 5, 8}}}, {}, 4);
}

} // namespace

void addNormCases(std::vector<ParityCase> &v) {
  addFused(v);
  addSoftmax(v);
  addNorms(v);
  addReductions(v);
  addArg(v);
  addTopK(v);
  addCumSum(v);
}

} // namespace tpc::cuda::test
