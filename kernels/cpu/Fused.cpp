//===- Fused.cpp - Kernels of fused ops -----------------------------------===//
#include "kernels/cpu/Fused.h"
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace tpc::cpu {
namespace {

/// Element loads and stores through double; 16-bit floats widen exactly
/// and round once, to nearest even.
template <class T> double load(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<double>(v);
  else
    return static_cast<double>(widen(v));
}
template <class T> T store(double d) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(d);
  else
    return narrowTo<T>(doubleToFloatRoundOdd(d));
}

/// Calls f(TypeTag<T>{}) for every float storage type.
template <class F> void visitAnyFloat(DType t, F &&f) {
  if (!visitFloat16(t, f))
    visitFloat(t, f);
}

template <class T>
void attentionTyped(const AttentionParams &p, const T *q, const T *k,
                    const T *v, const void *mask, const int64_t *kvLengths,
                    T *y) {
  const int64_t group = p.qHeads / p.kvHeads;
  const double ninf = -std::numeric_limits<double>::infinity();
  std::vector<double> scores(p.kvLen), acc(p.vDim);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.qHeads; ++h) {
      const int64_t valid = validKeyCount(p, kvLengths, b);
      const int64_t g = h / group;
      const T *kh = k + (b * p.kvHeads + g) * p.kvLen * p.headDim;
      const T *vh = v + (b * p.kvHeads + g) * p.kvLen * p.vDim;
      for (int64_t i = 0; i < p.qLen; ++i) {
        const T *qi = q + ((b * p.qHeads + h) * p.qLen + i) * p.headDim;
        const int64_t maskRow = b * p.maskStrides[0] + h * p.maskStrides[1] +
                                i * p.maskStrides[2];
        double mx = ninf;
        bool nan = false;
        for (int64_t j = 0; j < p.kvLen; ++j) {
          double s = ninf;
          bool keep = !(p.causal && j > i) && j < valid;
          const int64_t at = maskRow + j * p.maskStrides[3];
          if (p.mask == AttentionParams::Mask::Bool)
            keep = keep && static_cast<const uint8_t *>(mask)[at] != 0;
          if (keep) {
            const T *kj = kh + j * p.headDim;
            double dot = 0;
            for (int64_t d = 0; d < p.headDim; ++d)
              dot += load(qi[d]) * load(kj[d]);
            s = dot * p.scale;
            if (p.mask == AttentionParams::Mask::Float)
              s += load(static_cast<const T *>(mask)[at]);
          }
          nan |= s != s;
          scores[j] = s;
          mx = s > mx ? s : mx;
        }
        T *yi = y + ((b * p.qHeads + h) * p.qLen + i) * p.vDim;
        if (nan || mx == ninf) {
          // Softmax of a row with no finite score is NaN, as unfused.
          for (int64_t d = 0; d < p.vDim; ++d)
            yi[d] = store<T>(p.nanToZero
                                 ? 0.0
                                 : std::numeric_limits<double>::quiet_NaN());
          continue;
        }
        double sum = 0;
        for (int64_t j = 0; j < p.kvLen; ++j) {
          scores[j] = std::exp(scores[j] - mx);
          sum += scores[j];
        }
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < p.kvLen; ++j) {
          if (scores[j] == 0)
            continue;
          const T *vj = vh + j * p.vDim;
          for (int64_t d = 0; d < p.vDim; ++d)
            acc[d] += scores[j] * load(vj[d]);
        }
        for (int64_t d = 0; d < p.vDim; ++d)
          yi[d] = store<T>(acc[d] / sum);
      }
    }
}

template <class T>
void swigluTyped(const SwiGLUParams &p, const T *gate, const T *up, T *y) {
  for (int64_t i = 0; i < p.numel; ++i) {
    const double g = load(gate[i]);
    // Never exponentiate a positive number, so that neither branch
    // overflows.
    const double sig = g >= 0 ? 1.0 / (1.0 + std::exp(-g))
                              : std::exp(g) / (1.0 + std::exp(g));
    y[i] = store<T>(g * sig * load(up[i]));
  }
}

} // namespace

void attentionKernel(const AttentionParams &p, const void *q, const void *k,
                     const void *v, const void *mask,
                     const int64_t *kvLengths, void *y, int numThreads) {
  if (p.dtype == DType::F32)
    return attentionBlocked(p, static_cast<const float *>(q),
                            static_cast<const float *>(k),
                            static_cast<const float *>(v), mask, kvLengths,
                            static_cast<float *>(y), numThreads);
  // 16-bit operands: widened to float (exactly) one block at a time by the
  // blocked kernel, the output rounded once.
  if (visitFloat16(p.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        attentionBlocked(p, static_cast<const T *>(q),
                         static_cast<const T *>(k), static_cast<const T *>(v),
                         mask, kvLengths, static_cast<T *>(y), numThreads);
      }))
    return;
  visitFloat(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    attentionTyped(p, static_cast<const T *>(q), static_cast<const T *>(k),
                   static_cast<const T *>(v), mask, kvLengths,
                   static_cast<T *>(y));
  });
}

void swigluKernel(const SwiGLUParams &p, const void *gate, const void *up,
                  void *y) {
  if (p.dtype == DType::F32) {
    // sigmoid eight lanes at a time, a block at a time through y.
    const float *g = static_cast<const float *>(gate);
    const float *u = static_cast<const float *>(up);
    float *out = static_cast<float *>(y);
    constexpr int64_t kBlock = 1024;
    float sig[kBlock];
    for (int64_t start = 0; start < p.numel; start += kBlock) {
      const int64_t n = std::min(kBlock, p.numel - start);
      vecSigmoid(g + start, sig, n);
      for (int64_t i = 0; i < n; ++i)
        out[start + i] = g[start + i] * sig[i] * u[start + i];
    }
    return;
  }
  visitAnyFloat(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    swigluTyped(p, static_cast<const T *>(gate), static_cast<const T *>(up),
                static_cast<T *>(y));
  });
}

} // namespace tpc::cpu

namespace tpc::cpu {

void addKernel(DType dtype, int64_t numel, const void *a, const void *b,
               void *sum) {
  visitAnyFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = static_cast<const T *>(a), *y = static_cast<const T *>(b);
    T *s = static_cast<T *>(sum);
    for (int64_t i = 0; i < numel; ++i) {
      if constexpr (std::is_floating_point_v<T>)
        s[i] = x[i] + y[i];
      else // in float, as the Add kernel computes 16-bit floats
        s[i] = narrowTo<T>(widen(x[i]) + widen(y[i]));
    }
  });
}

} // namespace tpc::cpu
