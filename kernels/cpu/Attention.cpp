//===- AttentionF32.cpp - Blocked fp32 attention with an online softmax ---===//
//
// For each (batch, head, block of query rows): scores for one block of keys
// at a time (never more than kQBlock x kKvBlock of them) by sgemm, scaled,
// masked, exponentiated against the running row maximum, and accumulated
// into the output block by a second sgemm, with earlier blocks rescaled
// when the maximum grows (the flash-attention recurrence). Causal blocks
// past the diagonal are skipped. Threads take (batch, head, query block)
// tasks.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Fused.h"
#include "kernels/cpu/Parallel.h"
#include "kernels/cpu/Sgemm.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tpc::cpu {
namespace {

constexpr int64_t kQBlock = 64;
constexpr int64_t kKvBlock = 256;

struct Block {
  std::vector<float> scores, out, rowMax, rowSum;
};

void attendBlock(const AttentionParams &p, const float *q, const float *k,
                 const float *v, const void *mask, float *y, int64_t b,
                 int64_t h, int64_t i0, Block &w) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t rows = std::min(kQBlock, p.qLen - i0);
  const int64_t g = h / (p.qHeads / p.kvHeads);
  const float *qb = q + ((b * p.qHeads + h) * p.qLen + i0) * p.headDim;
  const float *kh = k + (b * p.kvHeads + g) * p.kvLen * p.headDim;
  const float *vh = v + (b * p.kvHeads + g) * p.kvLen * p.vDim;
  float *ob = w.out.data();
  std::fill(ob, ob + rows * p.vDim, 0.0f);
  std::fill(w.rowMax.begin(), w.rowMax.begin() + rows, ninf);
  std::fill(w.rowSum.begin(), w.rowSum.begin() + rows, 0.0f);
  // Keys past the last row's diagonal are masked for every row.
  const int64_t kvEnd = p.causal ? std::min(p.kvLen, i0 + rows) : p.kvLen;
  for (int64_t j0 = 0; j0 < kvEnd; j0 += kKvBlock) {
    const int64_t cols = std::min(kKvBlock, kvEnd - j0);
    float *s = w.scores.data();
    SgemmArgs qk;
    qk.m = rows;
    qk.n = cols;
    qk.k = p.headDim;
    qk.a = qb;
    qk.lda = p.headDim;
    qk.b = kh + j0 * p.headDim;
    qk.ldb = p.headDim;
    qk.transB = true;
    qk.c = s;
    qk.ldc = cols;
    qk.alpha = float(p.scale);
    sgemm(qk, 1);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      float *row = s + r * cols;
      const int64_t at = b * p.maskStrides[0] + h * p.maskStrides[1] +
                         i * p.maskStrides[2] + j0 * p.maskStrides[3];
      if (p.mask == AttentionParams::Mask::Float) {
        const float *mrow = static_cast<const float *>(mask) + at;
        for (int64_t c = 0; c < cols; ++c)
          row[c] += mrow[c * p.maskStrides[3]];
      } else if (p.mask == AttentionParams::Mask::Bool) {
        const uint8_t *mrow = static_cast<const uint8_t *>(mask) + at;
        for (int64_t c = 0; c < cols; ++c)
          if (!mrow[c * p.maskStrides[3]])
            row[c] = ninf;
      }
      if (p.causal)
        for (int64_t c = std::max<int64_t>(0, i + 1 - j0); c < cols; ++c)
          row[c] = ninf;
      float mx = ninf;
      for (int64_t c = 0; c < cols; ++c)
        mx = row[c] > mx ? row[c] : mx;
      const float prev = w.rowMax[size_t(r)];
      const float next = std::max(prev, mx);
      if (next == ninf) {
        // Nothing kept yet in this row: it adds nothing.
        std::fill(row, row + cols, 0.0f);
        continue;
      }
      const float sum = vecExpShiftSum(row, row, cols, next);
      if (prev != next) {
        const float corr = prev == ninf ? 0.0f : std::exp(prev - next);
        float *orow = ob + r * p.vDim;
        for (int64_t d = 0; d < p.vDim; ++d)
          orow[d] *= corr;
        w.rowSum[size_t(r)] *= corr;
      }
      w.rowSum[size_t(r)] += sum;
      w.rowMax[size_t(r)] = next;
    }
    SgemmArgs pv;
    pv.m = rows;
    pv.n = p.vDim;
    pv.k = cols;
    pv.a = s;
    pv.lda = cols;
    pv.b = vh + j0 * p.vDim;
    pv.ldb = p.vDim;
    pv.c = ob;
    pv.ldc = p.vDim;
    pv.accumulate = true;
    sgemm(pv, 1);
  }
  float *yb = y + ((b * p.qHeads + h) * p.qLen + i0) * p.vDim;
  for (int64_t r = 0; r < rows; ++r) {
    // A row that kept no score divides 0 by 0: NaN, as the unfused softmax.
    const float inv = 1.0f / w.rowSum[size_t(r)];
    for (int64_t d = 0; d < p.vDim; ++d)
      yb[r * p.vDim + d] = w.rowSum[size_t(r)] == 0.0f
                               ? std::numeric_limits<float>::quiet_NaN()
                               : ob[r * p.vDim + d] * inv;
  }
}

} // namespace

void attentionF32(const AttentionParams &p, const float *q, const float *k,
                  const float *v, const void *mask, float *y, int numThreads) {
  const int64_t qBlocks = (p.qLen + kQBlock - 1) / kQBlock;
  const int64_t tasks = p.batch * p.qHeads * qBlocks;
  if (tasks == 0 || p.vDim == 0)
    return;
  const int threads =
      int(std::max<int64_t>(1, std::min<int64_t>(numThreads, tasks)));
  parallelRun(threads, [&](int t, int parts) {
    Block w;
    w.scores.resize(size_t(kQBlock * kKvBlock));
    w.out.resize(size_t(kQBlock * p.vDim));
    w.rowMax.resize(size_t(kQBlock));
    w.rowSum.resize(size_t(kQBlock));
    int64_t lo, hi;
    splitRange(tasks, t, parts, 1, lo, hi);
    for (int64_t task = lo; task < hi; ++task) {
      const int64_t qb = task % qBlocks;
      const int64_t bh = task / qBlocks;
      attendBlock(p, q, k, v, mask, y, bh / p.qHeads, bh % p.qHeads,
                  qb * kQBlock, w);
    }
  });
}

} // namespace tpc::cpu
