//===- MatMulCases.cpp - Parity cases of the cuBLASLt products ------------===//
//
// The GEMM parity cases: MatMul with the batch folded into M (a shared
// weight), strided batches (attention), broadcast batch dims (one call per
// matrix), 1-D operands, k = 0; Gemm with every transpose combination, alpha
// and beta, C as a bias row (the epilogue), a column or a full matrix; odd
// sizes whose leading dims are not 16-byte multiples, and misaligned
// operands (the element-aligned algorithm). f32 runs without TF32, so the
// CPU's f32 results are matched to accumulation order. MatMulNBits, whose
// kernel is tpc's own, against the CPU's.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

namespace tpc::cuda::test {
namespace {

using Cases = std::vector<ParityCase>;


/// Products accumulate k terms: the tolerance grows with k.
double kScale(int64_t k) { return 10 + double(k) / 4; }

void addMatMul(Cases &v) {
  struct Shapes {
    const char *name;
    Shape a, b, y;
  };
  const Shapes shapes[] = {
      {"weight_folded", {2, 7, 64}, {64, 48}, {2, 7, 48}},
      {"odd_folded", {3, 5, 33}, {33, 17}, {3, 5, 17}},
      {"attention_batched", {2, 3, 9, 16}, {2, 3, 16, 9}, {2, 3, 9, 9}},
      {"broadcast_a", {1, 5, 12}, {4, 12, 7}, {4, 5, 7}},
      {"broadcast_outer", {3, 1, 4, 6}, {1, 2, 6, 5}, {3, 2, 4, 5}},
      {"vector_matrix", {40}, {40, 9}, {9}},
      {"matrix_vector", {6, 40}, {40}, {6}},
      {"one_token", {1, 1, 256}, {256, 768}, {1, 1, 768}},
  };
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    for (const Shapes &s : shapes) {
      const int64_t k = s.a.back();
      addCase(v, std::string(dtypeName(t)) + "_" + s.name, "MatMul",
          {rnd(t, s.a, -1, 1), rnd(t, s.b, -1, 1)}, {{t, s.y}}, {}, kScale(k));
    }
    addCase(v, std::string(dtypeName(t)) + "_misaligned", "MatMul",
        {rnd(t, {5, 12}, -1, 1), rnd(t, {12, 8}, -1, 1)}, {{t, {5, 8}}}, {},
        kScale(12), 1);
  }
  addCase(v, "f64_batched", "MatMul",
      {rnd(DType::F64, {3, 4, 5}), rnd(DType::F64, {3, 5, 6})},
      {{DType::F64, {3, 4, 6}}}, {}, 10);
  addCase(v, "f32_k0", "MatMul",
      {Tensor(DType::F32, {3, 0}), Tensor(DType::F32, {0, 4})},
      {{DType::F32, {3, 4}}});
}

void addGemm(Cases &v) {
  const int64_t m = 13, k = 37, n = 21;
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    for (int ta : {0, 1})
      for (int tb : {0, 1}) {
        Attrs a = intAttr("transA", ta, intAttr("transB", tb));
        const Shape as = ta ? Shape{k, m} : Shape{m, k};
        const Shape bs = tb ? Shape{n, k} : Shape{k, n};
        const std::string n0 = std::string(dtypeName(t)) + "_t" +
                               std::to_string(ta) + std::to_string(tb);
        addCase(v, n0 + "_bias_row", "Gemm",
            {rnd(t, as, -1, 1), rnd(t, bs, -1, 1), rnd(t, {n})},
            {{t, {m, n}}}, a, kScale(k));
        Attrs ab = a;
        ab.setFloat("alpha", 0.5);
        ab.setFloat("beta", -2.0);
        addCase(v, n0 + "_alpha_beta_full_c", "Gemm",
            {rnd(t, as, -1, 1), rnd(t, bs, -1, 1), rnd(t, {m, n})},
            {{t, {m, n}}}, ab, kScale(k));
      }
    addCase(v, std::string(dtypeName(t)) + "_column_c", "Gemm",
        {rnd(t, {m, k}, -1, 1), rnd(t, {k, n}, -1, 1), rnd(t, {m, 1})},
        {{t, {m, n}}}, {}, kScale(k));
    addCase(v, std::string(dtypeName(t)) + "_no_c", "Gemm",
        {rnd(t, {m, k}, -1, 1), rnd(t, {k, n}, -1, 1)}, {{t, {m, n}}}, {},
        kScale(k));
    addCase(v, std::string(dtypeName(t)) + "_aligned_bias", "Gemm",
        {rnd(t, {64, 128}, -1, 1), rnd(t, {128, 96}, -1, 1), rnd(t, {96})},
        {{t, {64, 96}}}, intAttr("transB", 0), kScale(128));
  }
  Attrs beta0;
  beta0.setFloat("beta", 0.0);
  addCase(v, "f32_beta0", "Gemm",
      {rnd(DType::F32, {4, 6}), rnd(DType::F32, {6, 5}), rnd(DType::F32, {5})},
      {{DType::F32, {4, 5}}}, beta0, 10);
  Attrs half;
  half.setFloat("beta", 0.5);
  addCase(v, "f32_k0_beta", "Gemm",
      {Tensor(DType::F32, {3, 0}), Tensor(DType::F32, {0, 4}),
       rnd(DType::F32, {4})},
      {{DType::F32, {3, 4}}}, half);
  addCase(v, "f32_misaligned_bias", "Gemm",
      {rnd(DType::F32, {6, 10}), rnd(DType::F32, {10, 7}),
       rnd(DType::F32, {7})},
      {{DType::F32, {6, 7}}}, {}, 10, 1);
}

void addMatMulBias(Cases &v) {
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    for (const char *act : {"none", "relu", "gelu", "gelu_tanh"}) {
      Attrs a;
      a.setString("activation", act);
      addCase(v, std::string(dtypeName(t)) + "_" + act, "MatMulBias",
          {rnd(t, {2, 5, 33}, -1, 1), rnd(t, {33, 17}, -1, 1), rnd(t, {17})},
          {{t, {2, 5, 17}}}, a, kScale(33));
    }
  addCase(v, "f32_aligned", "MatMulBias",
      {rnd(DType::F32, {64, 128}, -1, 1), rnd(DType::F32, {128, 96}, -1, 1),
       rnd(DType::F32, {96})},
      {{DType::F32, {64, 96}}}, {}, kScale(128));
  addCase(v, "f32_misaligned", "MatMulBias",
      {rnd(DType::F32, {6, 10}), rnd(DType::F32, {10, 8}),
       rnd(DType::F32, {8})},
      {{DType::F32, {6, 8}}}, {}, 10, 1);
}

/// MatMulNBits: 4- and 8-bit codes, every zero-point form, K past the last
/// block's end, one row (decode) and more rows than one pass takes, 16-bit
/// activations and scales.
void addMatMulNBits(Cases &v) {
  struct Q {
    const char *name;
    int bits;
    int64_t block, k, n, rows;
    int zero; // 0 default, 1 packed, 2 per block, 3 scalar
    DType t;
  };
  const Q qs[] = {
      {"b4_blk32_decode", 4, 32, 96, 40, 1, 0, DType::F32},
      {"b4_blk32_packed_zero", 4, 32, 100, 33, 3, 1, DType::F32},
      {"b4_blk16_float_zero", 4, 16, 70, 9, 11, 2, DType::F32},
      {"b8_blk64_packed_zero", 8, 64, 130, 17, 2, 1, DType::F32},
      {"b8_blk32_scalar_zero", 8, 32, 64, 5, 1, 3, DType::F32},
      {"b4_blk128_bf16", 4, 128, 256, 24, 2, 1, DType::BF16},
      {"b4_blk32_f16", 4, 32, 64, 8, 3, 2, DType::F16},
  };
  for (const Q &q : qs) {
    const int64_t blocks = (q.k + q.block - 1) / q.block;
    Attrs a = intAttr("bits", q.bits, intAttr("block_size", q.block));
    std::vector<Tensor> in = {
        rnd(q.t, {q.rows, q.k}, -1, 1),
        rnd(DType::U8, {q.n, blocks, q.block * q.bits / 8}, 0, 255),
        rnd(q.t, {q.n, blocks}, 0.01, 0.1)};
    if (q.zero == 1)
      in.push_back(
          rnd(DType::U8, {q.n, (blocks * q.bits + 7) / 8}, 0, 255));
    else if (q.zero == 2)
      in.push_back(rnd(q.t, {q.n, blocks}, 0, double((1 << q.bits) - 1)));
    else if (q.zero == 3)
      in.push_back(rnd(q.t, {1}, 1, 6));
    addCase(v, q.name, "MatMulNBits", std::move(in), {{q.t, {q.rows, q.n}}},
            a, kScale(q.k));
  }
}

} // namespace

void addMatMulCases(std::vector<ParityCase> &v) {
  addMatMulNBits(v);
  addMatMulBias(v);
  addMatMul(v);
  addGemm(v);
}

} // namespace tpc::cuda::test
