//===- FusedTest.cpp - Kernels of the fused ops ---------------------------===//
#include "KernelTestUtil.h"
#include "kernels/cpu/Fused.h"

#include <cmath>

namespace tpc::cpu::test {
namespace {

/// Plain double attention over [B, H, S, D] with kv heads shared by groups
/// of q heads, an optional broadcast mask, an optional causal mask and
/// optional valid key counts per batch (nonpad_kv_seqlen; keys at or past
/// them masked).
std::vector<double> refAttention(const Tensor &q, const Tensor &k,
                                 const Tensor &v, const Tensor *mask,
                                 double scale, bool causal,
                                 const std::vector<int64_t> &lengths = {}) {
  const Shape &qs = q.desc.shape, &ks = k.desc.shape, &vs = v.desc.shape;
  const int64_t B = qs[0], H = qs[1], S = qs[2], D = qs[3];
  const int64_t G = ks[1], L = ks[2], Dv = vs[3];
  std::vector<double> y(B * H * S * Dv);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < S; ++i) {
        const int64_t g = h / (H / G);
        std::vector<double> s(L);
        double mx = -INFINITY;
        for (int64_t j = 0; j < L; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += q.at(ravel({b, h, i, d}, qs)) * k.at(ravel({b, g, j, d}, ks));
          s[j] = dot * scale;
          if (mask) {
            double m = mask->at(broadcastIndex({b, h, i, j}, mask->desc.shape));
            if (mask->desc.dtype == DType::Bool)
              s[j] = m != 0 ? s[j] : -INFINITY;
            else
              s[j] += m;
          }
          if (causal && j > i)
            s[j] = -INFINITY;
          if (!lengths.empty() && j >= lengths[size_t(b)])
            s[j] = -INFINITY;
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (double &e : s)
          sum += (e = std::exp(e - mx));
        for (int64_t d = 0; d < Dv; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < L; ++j)
            acc += s[j] * v.at(ravel({b, g, j, d}, vs));
          y[ravel({b, h, i, d}, {B, H, S, Dv})] = acc / sum;
        }
      }
  return y;
}

struct AttentionCase {
  Shape q, k, v;
  Shape mask;         // empty: no mask
  DType maskType = DType::F32;
  bool causal = false;
  double scale = 0;   // 0: the default 1/sqrt(D)
  std::vector<int64_t> lengths = {}; // nonpad_kv_seqlen; empty: none
};

TEST(Attention, MatchesReference) {
  const AttentionCase cases[] = {
      {{1, 2, 5, 4}, {1, 2, 5, 4}, {1, 2, 5, 4}},
      {{2, 4, 6, 8}, {2, 4, 6, 8}, {2, 4, 6, 3}, {}, DType::F32, true},
      // GQA: 6 q heads over 2 kv heads, different kv length.
      {{1, 6, 3, 4}, {1, 2, 7, 4}, {1, 2, 7, 5}, {}, DType::F32, false, 0.3},
      // Additive padding mask [B, 1, 1, L] and a full [S, L] mask.
      {{2, 2, 4, 4}, {2, 2, 4, 4}, {2, 2, 4, 4}, {2, 1, 1, 4}},
      {{1, 2, 4, 4}, {1, 2, 4, 4}, {1, 2, 4, 4}, {4, 4}, DType::F32, true},
      // Boolean mask, broadcast over heads.
      {{2, 4, 3, 2}, {2, 2, 3, 2}, {2, 2, 3, 2}, {2, 1, 3, 3}, DType::Bool},
      // More query rows and keys than one block of the f32 kernel holds
      // (64 x 256), causal with a padding mask: the online softmax
      // rescales across key blocks and skips blocks past the diagonal.
      {{1, 2, 70, 16}, {1, 2, 300, 16}, {1, 2, 300, 8}, {1, 1, 1, 300},
       DType::F32, true},
      {{1, 1, 130, 8}, {1, 1, 530, 8}, {1, 1, 530, 8}, {1, 1, 130, 530},
       DType::Bool},
      // nonpad_kv_seqlen: a decode step over a cache filled to 300 of 600
      // positions (GQA 14/2: each kv head's 7 rows in one block), with
      // and without a padding mask; counts per batch, one past the cache
      // (clamped to it); a group of two-row queries, causal.
      {{1, 14, 1, 64}, {1, 2, 600, 64}, {1, 2, 600, 64}, {}, DType::F32,
       false, 0, {300}},
      {{1, 14, 1, 64}, {1, 2, 600, 64}, {1, 2, 600, 64}, {1, 1, 1, 600},
       DType::F32, false, 0, {257}},
      {{2, 4, 3, 8}, {2, 2, 9, 8}, {2, 2, 9, 4}, {}, DType::F32, false, 0,
       {4, 10}},
      {{1, 7, 2, 16}, {1, 1, 40, 16}, {1, 1, 40, 16}, {1, 1, 2, 40},
       DType::Bool, true, 0, {1}},
  };
  uint64_t seed = 7;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16})
    for (const AttentionCase &c : cases) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " q " + shapeToString(c.q) +
                   " k " + shapeToString(c.k) + " mask " +
                   shapeToString(c.mask));
      Tensor q = randomTensor(t, c.q, seed++), k = randomTensor(t, c.k, seed++),
             v = randomTensor(t, c.v, seed++);
      Tensor mask;
      if (!c.mask.empty()) {
        DType mt = c.maskType == DType::Bool ? DType::Bool : t;
        mask = randomTensor(mt, c.mask, seed++, -3, 3);
        if (mt == DType::Bool) // keep one key per row so no row is empty
          for (int64_t i = 0; i < mask.numel(); i += c.mask.back())
            mask.set(i, 1);
      }
      Attrs a;
      double scale = c.scale ? c.scale : 1.0 / std::sqrt(double(c.q[3]));
      if (c.scale)
        a.setFloat("scale", c.scale);
      a.setInt("is_causal", c.causal ? 1 : 0);
      const Tensor *m = c.mask.empty() ? nullptr : &mask;
      Shape ys = {c.q[0], c.q[1], c.q[2], c.v[3]};
      std::vector<const Tensor *> in = {&q, &k, &v};
      if (m)
        in.push_back(m);
      Tensor lens;
      std::vector<int64_t> clamped;
      if (!c.lengths.empty()) {
        std::vector<double> values(c.lengths.begin(), c.lengths.end());
        lens = makeTensor(DType::I64, {int64_t(c.lengths.size())}, values);
        in.push_back(&lens);
        for (int64_t n : c.lengths)
          clamped.push_back(std::min(n, c.k[2]));
      }
      // 16-bit results are the double result rounded once.
      const double tol = t == DType::BF16 ? 8e-3 : t == DType::F16 ? 1e-3 : 1e-5;
      expectClose(runOne("Attention", in, t, ys, a),
                  refAttention(q, k, v, m, scale, c.causal, clamped), tol,
                  tol * 0.1);
    }
}

TEST(Attention, RejectsBadShapes) {
  const TensorDesc q{DType::F32, {1, 4, 3, 8}};
  const Attrs a = ints("is_causal", {0});
  EXPECT_PREPARE_ERROR(
      prepareOnly("Attention",
                  {q, {DType::F32, {1, 3, 3, 8}}, {DType::F32, {1, 3, 3, 8}}},
                  {{DType::F32, {1, 4, 3, 8}}}, a),
      "must divide");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Attention",
                  {q, {DType::F32, {1, 4, 3, 7}}, {DType::F32, {1, 4, 3, 8}}},
                  {{DType::F32, {1, 4, 3, 8}}}, a),
      "do not agree");
  EXPECT_PREPARE_ERROR(prepareOnly("Attention",
                                   {q, q, q, {DType::F32, {2, 1, 3, 3}}},
                                   {{DType::F32, {1, 4, 3, 8}}}, a),
                       "does not broadcast");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Attention", {q, q, q}, {{DType::F32, {1, 4, 3, 8}}}),
      "is_causal is required");
  EXPECT_PREPARE_ERROR(prepareOnly("Attention",
                                   {q, q, q, {DType::I64, {2}}},
                                   {{DType::F32, {1, 4, 3, 8}}}, a),
                       "is not [batch]");
  EXPECT_PREPARE_ERROR(
      prepareOnly("Attention",
                  {q, q, q, {DType::I64, {1}}, {DType::F32, {1, 1, 3, 3}}},
                  {{DType::F32, {1, 4, 3, 8}}}, a),
      "in that order");
}

TEST(SwiGLU, MatchesReference) {
  uint64_t seed = 3;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    Tensor g = randomTensor(t, {3, 17}, seed++, -30, 30);
    Tensor u = randomTensor(t, {3, 17}, seed++);
    std::vector<double> want(g.numel());
    for (int64_t i = 0; i < g.numel(); ++i)
      want[i] = g.at(i) / (1 + std::exp(-g.at(i))) * u.at(i);
    const double tol = t == DType::BF16 ? 8e-3 : t == DType::F16 ? 1e-3 : 1e-6;
    expectClose(runOne("SwiGLU", {&g, &u}, t, {3, 17}), want, tol, tol * 0.1);
  }
  EXPECT_PREPARE_ERROR(prepareOnly("SwiGLU",
                                   {{DType::F32, {2, 3}}, {DType::F32, {3}}},
                                   {{DType::F32, {2, 3}}}),
                       "differs");
}

TEST(AddNormalization, MatchesReference) {
  uint64_t seed = 11;
  for (DType t : {DType::F32, DType::F64})
    for (bool rms : {false, true})
      for (bool bias : {false, true}) {
        if (rms && bias)
          continue;
        SCOPED_TRACE(std::string(dtypeName(t)) + (rms ? " rms" : " layer") +
                     (bias ? " bias" : ""));
        const Shape s = {2, 3, 16};
        Tensor a = randomTensor(t, s, seed++), b = randomTensor(t, s, seed++);
        Tensor g = randomTensor(t, {16}, seed++), beta = randomTensor(t, {16}, seed++);
        std::vector<double> sum(a.numel()), y(a.numel());
        for (int64_t r = 0; r < 6; ++r) {
          double mean = 0, var = 0;
          for (int64_t j = 0; j < 16; ++j)
            mean += (sum[r * 16 + j] = a.at(r * 16 + j) + b.at(r * 16 + j)) / 16;
          if (rms)
            mean = 0;
          for (int64_t j = 0; j < 16; ++j)
            var += (sum[r * 16 + j] - mean) * (sum[r * 16 + j] - mean) / 16;
          for (int64_t j = 0; j < 16; ++j)
            y[r * 16 + j] = (sum[r * 16 + j] - mean) / std::sqrt(var + 1e-5) *
                                g.at(j) + (bias ? beta.at(j) : 0.0);
        }
        Attrs attrs = normAttrs(-1, 1e-5, rms);
        std::vector<Tensor> outs = {Tensor(t, s), Tensor(t, s)};
        std::vector<const Tensor *> in = {&a, &b, &g};
        if (bias)
          in.push_back(&beta);
        ASSERT_TRUE(runKernel("AddNormalization", in, outs, attrs).isOk());
        expectClose(outs[0], y, 1e-5, 1e-5);
        expectClose(outs[1], sum, 1e-6, 1e-6);
      }
  const Attrs rms = normAttrs(-1, 1e-5, 1);
  const TensorDesc x{DType::F32, {2, 8}}, w{DType::F32, {8}};
  EXPECT_PREPARE_ERROR(prepareOnly("AddNormalization", {x, x, w, w}, {x, x}, rms),
                       "no bias");
  EXPECT_PREPARE_ERROR(prepareOnly("AddNormalization",
                                   {x, {DType::F32, {8}}, w}, {x, x}, rms),
                       "differs");
}

TEST(MatMulBias, MatchesReference) {
  uint64_t seed = 21;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16})
    for (const char *act : {"none", "relu", "gelu", "gelu_tanh"}) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + act);
      Tensor a = randomTensor(t, {2, 3, 8}, seed++);
      Tensor w = randomTensor(t, {8, 5}, seed++), b = randomTensor(t, {5}, seed++);
      std::vector<double> want(30);
      for (int64_t r = 0; r < 6; ++r)
        for (int64_t j = 0; j < 5; ++j) {
          double v = b.at(j);
          for (int64_t k = 0; k < 8; ++k)
            v += a.at(r * 8 + k) * w.at(k * 5 + j);
          const std::string s = act;
          if (s == "relu")
            v = v < 0 ? 0 : v;
          else if (s == "gelu")
            v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
          else if (s == "gelu_tanh")
            v = 0.5 * v *
                (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
          want[r * 5 + j] = v;
        }
      Attrs attrs;
      attrs.setString("activation", act);
      // 16-bit: the product is rounded before the epilogue, then once more.
      const double tol = t == DType::BF16 ? 3e-2 : t == DType::F16 ? 4e-3 : 1e-5;
      expectClose(runOne("MatMulBias", {&a, &w, &b}, t, {2, 3, 5}, attrs), want,
                  tol, tol);
    }
  Attrs bad, plain;
  bad.setString("activation", "tanh");
  plain.setString("activation", "none");
  EXPECT_PREPARE_ERROR(prepareOnly("MatMulBias",
                                   {{DType::F32, {4, 8}}, {DType::F32, {8, 5}},
                                    {DType::F32, {5}}},
                                   {{DType::F32, {4, 5}}}, bad),
                       "activation");
  EXPECT_PREPARE_ERROR(
      prepareOnly(
          "MatMulBias",
          {{DType::F32, {4, 8}}, {DType::F32, {8, 5}}, {DType::F32, {4, 1}}},
          {{DType::F32, {4, 5}}}, plain),
      "one value per column");
  EXPECT_PREPARE_ERROR(
      prepareOnly(
          "MatMulBias",
          {{DType::F32, {4, 8}}, {DType::F32, {8, 5}}, {DType::F32, {5}}},
          {{DType::F32, {4, 5}}}),
      "activation is required");
}

/// The f32 kernel's parameters for q [B, H, S, D], k [B, G, L, D] and
/// v [B, G, L, Dv], unscaled, without mask.
AttentionParams paramsFor(const Tensor &q, const Tensor &k, const Tensor &v) {
  AttentionParams p;
  p.batch = q.desc.shape[0];
  p.qHeads = q.desc.shape[1];
  p.qLen = q.desc.shape[2];
  p.headDim = q.desc.shape[3];
  p.kvHeads = k.desc.shape[1];
  p.kvLen = k.desc.shape[2];
  p.vDim = v.desc.shape[3];
  return p;
}

TEST(Attention, ThreadsGiveTheSameBits) {
  Tensor q = randomTensor(DType::F32, {2, 4, 90, 16}, 1),
         k = randomTensor(DType::F32, {2, 2, 90, 16}, 2),
         v = randomTensor(DType::F32, {2, 2, 90, 16}, 3);
  AttentionParams p = paramsFor(q, k, v);
  p.scale = 0.25;
  p.causal = true;
  std::vector<float> one(size_t(2 * 4 * 90 * 16)), two(one.size());
  attentionKernel(p, q.data(), k.data(), v.data(), nullptr, nullptr,
                  one.data(), 1);
  attentionKernel(p, q.data(), k.data(), v.data(), nullptr, nullptr,
                  two.data(), 3);
  EXPECT_EQ(one, two);
}

/// Keys at or past nonpad_kv_seqlen are never read: NaN there changes
/// nothing (a kernel that reads them multiplies NaN by a zero weight).
TEST(Attention, KeysPastTheValidLengthAreNotRead) {
  for (DType t : {DType::F32, DType::BF16}) {
    SCOPED_TRACE(dtypeName(t));
    Tensor q = randomTensor(t, {1, 4, 1, 16}, 11),
           k = randomTensor(t, {1, 2, 700, 16}, 12),
           v = randomTensor(t, {1, 2, 700, 16}, 13);
    Tensor lens = makeTensor(DType::I64, {1}, {301});
    Tensor y0 = runOne("Attention", {&q, &k, &v, &lens}, t, {1, 4, 1, 16},
                       ints("is_causal", {0}));
    for (int64_t g = 0; g < 2; ++g)
      for (int64_t j = 301; j < 700; ++j)
        for (int64_t d = 0; d < 16; ++d) {
          k.set((g * 700 + j) * 16 + d, NAN);
          v.set((g * 700 + j) * 16 + d, NAN);
        }
    Tensor y1 = runOne("Attention", {&q, &k, &v, &lens}, t, {1, 4, 1, 16},
                       ints("is_causal", {0}));
    for (int64_t i = 0; i < y0.numel(); ++i) {
      ASSERT_FALSE(std::isnan(y1.at(i))) << i;
      EXPECT_EQ(y0.at(i), y1.at(i)) << i;
    }
  }
}

TEST(Attention, FullyMaskedRowIsNaN) {
  Tensor q = randomTensor(DType::F32, {1, 1, 2, 4}, 4),
         k = randomTensor(DType::F32, {1, 1, 3, 4}, 5),
         v = randomTensor(DType::F32, {1, 1, 3, 4}, 6);
  AttentionParams p = paramsFor(q, k, v);
  p.mask = AttentionParams::Mask::Bool;
  p.maskStrides[2] = 3;
  p.maskStrides[3] = 1;
  const uint8_t mask[6] = {0, 0, 0, 1, 0, 1};
  std::vector<float> y(8);
  attentionKernel(p, q.data(), k.data(), v.data(), mask, nullptr, y.data(),
                  1);
  for (int d = 0; d < 4; ++d) {
    EXPECT_TRUE(std::isnan(y[size_t(d)]));
    EXPECT_FALSE(std::isnan(y[size_t(4 + d)]));
  }
  // nan_to_zero (the SDPA export's guard): the masked row is zeros, the
  // other row unchanged.
  std::vector<float> z(8);
  p.nanToZero = true;
  attentionKernel(p, q.data(), k.data(), v.data(), mask, nullptr, z.data(),
                  1);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(z[size_t(d)], 0.0f);
    EXPECT_EQ(z[size_t(4 + d)], y[size_t(4 + d)]);
  }
}

} // namespace
} // namespace tpc::cpu::test
