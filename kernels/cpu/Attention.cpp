//===- Attention.cpp - Blocked attention with an online softmax -----------===//
//
// A task is a block of query rows of one kv head: the rows of every query
// head that reads it (GQA's group, contiguous in Q), so each block of keys
// is loaded once for the whole group; a decode step's group of single rows
// is one small GEMM instead of one GEMV per query head. For each block of
// keys (never more than kQBlock x kKvBlock scores), the scores come from
// sgemm, are scaled, masked, exponentiated against the running row maximum
// and accumulated into the output block by a second sgemm, earlier blocks
// rescaled when the maximum grows (the flash-attention recurrence). Keys
// past the causal diagonal of the block's last row, and keys at or past
// the batch's valid length (nonpad_kv_seqlen: the filled positions of a KV
// cache), are never read. 16-bit operands are widened one block at a time
// (exactly), so no step touches more of K and V than the keys it reads.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/Fused.h"
#include "kernels/cpu/Parallel.h"
#include "kernels/cpu/Sgemm.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace tpc::cpu {
namespace {

constexpr int64_t kQBlock = 64;
constexpr int64_t kKvBlock = 256;

struct Block {
  std::vector<float> scores, out, rowMax, rowSum;
  // Widened 16-bit operands (unused for f32).
  std::vector<float> q, k, v;
};

template <class T> float toFloat(T x) {
  if constexpr (std::is_same_v<T, float>)
    return x;
  else
    return widen(x);
}

/// `rows` x `cols` elements at `src` (row stride `cols`) as floats: `src`
/// itself for f32, else widened into `buf`.
template <class T>
const float *asFloats(const T *src, int64_t rows, int64_t cols,
                      std::vector<float> &buf) {
  if constexpr (std::is_same_v<T, float>) {
    return src;
  } else {
    const int64_t n = rows * cols;
    for (int64_t i = 0; i < n; ++i)
      buf[size_t(i)] = widen(src[i]);
    return buf.data();
  }
}

/// Rows [r0, r0 + rows) of kv head g's group in batch b: query head
/// g * group + r / qLen, query position r % qLen.
template <class T>
void attendBlock(const AttentionParams &p, const T *q, const T *k, const T *v,
                 const void *mask, int64_t validKeys, T *y, int64_t b,
                 int64_t g, int64_t r0, int64_t rows, Block &w) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t group = p.qHeads / p.kvHeads;
  const int64_t h0 = g * group;
  const int64_t firstRow = (b * p.qHeads + h0) * p.qLen + r0;
  const float *qb = asFloats(q + firstRow * p.headDim, rows, p.headDim, w.q);
  const T *kh = k + (b * p.kvHeads + g) * p.kvLen * p.headDim;
  const T *vh = v + (b * p.kvHeads + g) * p.kvLen * p.vDim;
  float *ob = w.out.data();
  std::fill(ob, ob + rows * p.vDim, 0.0f);
  std::fill(w.rowMax.begin(), w.rowMax.begin() + rows, ninf);
  std::fill(w.rowSum.begin(), w.rowSum.begin() + rows, 0.0f);
  // Keys past the diagonal of the block's latest query position are masked
  // for every row of the block.
  int64_t kvEnd = validKeys;
  if (p.causal) {
    const int64_t last = r0 + rows - 1;
    const int64_t latest = last / p.qLen > r0 / p.qLen ? p.qLen - 1
                                                       : last % p.qLen;
    kvEnd = std::min(kvEnd, latest + 1);
  }
  for (int64_t j0 = 0; j0 < kvEnd; j0 += kKvBlock) {
    const int64_t cols = std::min(kKvBlock, kvEnd - j0);
    float *s = w.scores.data();
    SgemmArgs qk;
    qk.m = rows;
    qk.n = cols;
    qk.k = p.headDim;
    qk.a = qb;
    qk.lda = p.headDim;
    qk.b = asFloats(kh + j0 * p.headDim, cols, p.headDim, w.k);
    qk.ldb = p.headDim;
    qk.transB = true;
    qk.c = s;
    qk.ldc = cols;
    qk.alpha = float(p.scale);
    sgemm(qk, 1);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t h = h0 + (r0 + r) / p.qLen;
      const int64_t i = (r0 + r) % p.qLen;
      float *row = s + r * cols;
      const int64_t at = b * p.maskStrides[0] + h * p.maskStrides[1] +
                         i * p.maskStrides[2] + j0 * p.maskStrides[3];
      if (p.mask == AttentionParams::Mask::Float) {
        const T *mrow = static_cast<const T *>(mask) + at;
        for (int64_t c = 0; c < cols; ++c)
          row[c] += toFloat(mrow[c * p.maskStrides[3]]);
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
    pv.b = asFloats(vh + j0 * p.vDim, cols, p.vDim, w.v);
    pv.ldb = p.vDim;
    pv.c = ob;
    pv.ldc = p.vDim;
    pv.accumulate = true;
    sgemm(pv, 1);
  }
  T *yb = y + firstRow * p.vDim;
  for (int64_t r = 0; r < rows; ++r) {
    // A row that kept no score divides 0 by 0: NaN, as the unfused softmax
    // (zeros under nan_to_zero, as is a row a NaN score made NaN).
    const float sum = w.rowSum[size_t(r)];
    const float inv = 1.0f / sum;
    const bool zero = p.nanToZero && !(sum > 0.0f);
    for (int64_t d = 0; d < p.vDim; ++d) {
      const float out = zero            ? 0.0f
                        : sum == 0.0f ? std::numeric_limits<float>::quiet_NaN()
                                      : ob[r * p.vDim + d] * inv;
      if constexpr (std::is_same_v<T, float>)
        yb[r * p.vDim + d] = out;
      else
        yb[r * p.vDim + d] = narrowTo<T>(out);
    }
  }
}

} // namespace

template <class T>
void attentionBlocked(const AttentionParams &p, const T *q, const T *k,
                      const T *v, const void *mask, const int64_t *kvLengths,
                      T *y, int numThreads) {
  const int64_t group = p.qHeads / std::max<int64_t>(p.kvHeads, 1);
  const int64_t heads = p.batch * p.kvHeads;
  if (heads == 0 || group * p.qLen == 0 || p.vDim == 0)
    return;
  // Blocks of at most kQBlock rows, smaller where that leaves threads idle
  // (one kv head decoding one token: its query heads split across threads).
  // A block holds whole query heads when they are short (decode), else rows
  // of one head, so that causal blocks stop at their own diagonal.
  const int64_t wantPerHead =
      (int64_t(std::max(numThreads, 1)) + heads - 1) / heads;
  const int64_t rowBlock = std::max<int64_t>(
      1, std::min(kQBlock, (group * p.qLen + wantPerHead - 1) / wantPerHead));
  std::vector<std::pair<int64_t, int64_t>> ranges; // (first row, rows)
  if (p.qLen >= rowBlock) {
    for (int64_t hh = 0; hh < group; ++hh)
      for (int64_t i0 = 0; i0 < p.qLen; i0 += rowBlock)
        ranges.push_back({hh * p.qLen + i0, std::min(rowBlock, p.qLen - i0)});
  } else {
    const int64_t perBlock = std::max<int64_t>(1, rowBlock / p.qLen);
    for (int64_t hh = 0; hh < group; hh += perBlock)
      ranges.push_back(
          {hh * p.qLen, std::min(perBlock, group - hh) * p.qLen});
  }
  int64_t maxRows = 0;
  for (const auto &r : ranges)
    maxRows = std::max(maxRows, r.second);
  const int64_t blocks = int64_t(ranges.size());
  const int64_t tasks = heads * blocks;
  const int threads =
      int(std::max<int64_t>(1, std::min<int64_t>(numThreads, tasks)));
  parallelRun(threads, [&](int t, int parts) {
    Block w;
    w.scores.resize(size_t(maxRows * kKvBlock));
    w.out.resize(size_t(maxRows * p.vDim));
    w.rowMax.resize(size_t(maxRows));
    w.rowSum.resize(size_t(maxRows));
    if constexpr (!std::is_same_v<T, float>) {
      w.q.resize(size_t(maxRows * p.headDim));
      w.k.resize(size_t(kKvBlock * p.headDim));
      w.v.resize(size_t(kKvBlock * p.vDim));
    }
    int64_t lo, hi;
    splitRange(tasks, t, parts, 1, lo, hi);
    for (int64_t task = lo; task < hi; ++task) {
      const auto &[r0, rows] = ranges[size_t(task % blocks)];
      const int64_t bg = task / blocks;
      const int64_t b = bg / p.kvHeads;
      attendBlock(p, q, k, v, mask, validKeyCount(p, kvLengths, b), y, b,
                  bg % p.kvHeads, r0, rows, w);
    }
  });
}

template void attentionBlocked<float>(const AttentionParams &, const float *,
                                      const float *, const float *,
                                      const void *, const int64_t *, float *,
                                      int);
template void attentionBlocked<Half>(const AttentionParams &, const Half *,
                                     const Half *, const Half *, const void *,
                                     const int64_t *, Half *, int);
template void attentionBlocked<BFloat16>(const AttentionParams &,
                                         const BFloat16 *, const BFloat16 *,
                                         const BFloat16 *, const void *,
                                         const int64_t *, BFloat16 *, int);

} // namespace tpc::cpu
