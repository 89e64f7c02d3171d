//===- Norm.cpp - Softmax and normalization kernels -----------------------===//
#include "kernels/cpu/Norm.h"
#include "kernels/cpu/Convert.h"

#include <cmath>
#include <limits>
#include <vector>

namespace tpc::cpu {
namespace {

/// Max of a contiguous row, four lanes so that it vectorizes. NaN wins.
template <class T> T rowMax(const T *x, int64_t n) {
  T m[4] = {
      -std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
      -std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity()};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k)
      m[k] = (x[i + k] > m[k] || x[i + k] != x[i + k]) ? x[i + k] : m[k];
  for (; i < n; ++i)
    m[0] = (x[i] > m[0] || x[i] != x[i]) ? x[i] : m[0];
  for (int k = 1; k < 4; ++k)
    m[0] = (m[k] > m[0] || m[k] != m[k]) ? m[k] : m[0];
  return m[0];
}

/// Softmax of one contiguous row.
template <class T> void softmaxRow(const T *x, T *y, int64_t n, bool log) {
  const T mx = rowMax(x, n);
  double sum = 0;
  if (log) {
    for (int64_t i = 0; i < n; ++i)
      sum += std::exp(x[i] - mx);
    // (x - max) - log(sum) rather than x - (max + log(sum)): the first
    // difference is exact for the largest entries, whose results are tiny.
    const T logSum = static_cast<T>(std::log(sum));
    for (int64_t i = 0; i < n; ++i)
      y[i] = (x[i] - mx) - logSum;
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - mx);
    sum += y[i];
  }
  const T inv = static_cast<T>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i)
    y[i] *= inv;
}

/// Softmax along a strided axis: one column of `n` elements `stride` apart.
template <class T>
void softmaxColumn(const T *x, T *y, int64_t n, int64_t stride, bool log) {
  T mx = -std::numeric_limits<T>::infinity();
  for (int64_t a = 0; a < n; ++a)
    mx = (x[a * stride] > mx || x[a * stride] != x[a * stride]) ? x[a * stride]
                                                                : mx;
  double sum = 0;
  for (int64_t a = 0; a < n; ++a)
    sum += std::exp(x[a * stride] - mx);
  if (log) {
    const T logSum = static_cast<T>(std::log(sum));
    for (int64_t a = 0; a < n; ++a)
      y[a * stride] = (x[a * stride] - mx) - logSum;
    return;
  }
  const T inv = static_cast<T>(1.0 / sum);
  for (int64_t a = 0; a < n; ++a)
    y[a * stride] = std::exp(x[a * stride] - mx) * inv;
}

template <class T> void softmaxTyped(const SoftmaxParams &p, const T *x, T *y) {
  const int64_t block = p.axis * p.inner;
  for (int64_t o = 0; o < p.outer; ++o) {
    if (p.inner == 1) {
      softmaxRow(x + o * block, y + o * block, p.axis, p.log);
      continue;
    }
    for (int64_t j = 0; j < p.inner; ++j)
      softmaxColumn(x + o * block + j, y + o * block + j, p.axis, p.inner,
                    p.log);
  }
}

/// Sum of a row in double with four lanes.
template <class T, class Fn> double rowSum(const T *x, int64_t n, Fn fn) {
  double s[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k)
      s[k] += fn(static_cast<double>(x[i + k]));
  for (; i < n; ++i)
    s[0] += fn(static_cast<double>(x[i]));
  return (s[0] + s[1]) + (s[2] + s[3]);
}

template <class T>
void normTyped(const NormParams &p, const T *x, const T *scale, const T *bias,
               T *y, T *meanOut, T *invStdOut) {
  const int64_t n = p.norm;
  const double invN = n ? 1.0 / static_cast<double>(n) : 0.0;
  for (int64_t r = 0; r < p.outer; ++r) {
    const T *xr = x + r * n;
    T *yr = y + r * n;
    double mean = 0, var;
    if (p.rms) {
      var = rowSum(xr, n, [](double v) { return v * v; }) * invN;
    } else {
      mean = rowSum(xr, n, [](double v) { return v; }) * invN;
      var =
          rowSum(xr, n, [mean](double v) { return (v - mean) * (v - mean); }) *
          invN;
    }
    const double invStd = 1.0 / std::sqrt(var + p.epsilon);
    const T m = static_cast<T>(mean);
    const T s = static_cast<T>(invStd);
    if (bias) {
      for (int64_t i = 0; i < n; ++i)
        yr[i] = (xr[i] - m) * s * scale[i] + bias[i];
    } else {
      for (int64_t i = 0; i < n; ++i)
        yr[i] = (xr[i] - m) * s * scale[i];
    }
    if (meanOut)
      meanOut[r] = m;
    if (invStdOut)
      invStdOut[r] = s;
  }
}

/// Softmax of `n` 16-bit floats `stride` apart, computed in float (sum in
/// double) with each result rounded once. exp is evaluated twice rather
/// than stored, so that nothing is rounded before the division.
template <class S>
void softmax16(const S *x, S *y, int64_t n, int64_t stride, bool log) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t a = 0; a < n; ++a) {
    const float v = widen(x[a * stride]);
    mx = (v > mx || v != v) ? v : mx;
  }
  double sum = 0;
  for (int64_t a = 0; a < n; ++a)
    sum += std::exp(widen(x[a * stride]) - mx);
  if (log) {
    const float logSum = static_cast<float>(std::log(sum));
    for (int64_t a = 0; a < n; ++a)
      y[a * stride] = narrowTo<S>((widen(x[a * stride]) - mx) - logSum);
    return;
  }
  const double inv = 1.0 / sum;
  for (int64_t a = 0; a < n; ++a)
    y[a * stride] = narrowTo<S>(
        static_cast<float>(std::exp(widen(x[a * stride]) - mx) * inv));
}

template <class S>
void softmax16Typed(const SoftmaxParams &p, const S *x, S *y) {
  const int64_t block = p.axis * p.inner;
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t j = 0; j < p.inner; ++j)
      softmax16(x + o * block + j, y + o * block + j, p.axis, p.inner, p.log);
}

/// Norms of 16-bit floats: each row, the scale and the bias widened once
/// into float buffers (exact), the statistics in double as normTyped's
/// (four lanes), each output computed in float and rounded once.
template <class S>
void norm16Typed(const NormParams &p, const S *x, const S *scale,
                 const S *bias, S *y, S *meanOut, S *invStdOut) {
  const int64_t n = p.norm;
  const double invN = n ? 1.0 / static_cast<double>(n) : 0.0;
  thread_local std::vector<float> buf;
  buf.resize(size_t(3 * n));
  float *row = buf.data(), *sc = row + n, *bi = sc + n;
  for (int64_t i = 0; i < n; ++i) {
    sc[i] = widen(scale[i]);
    bi[i] = bias ? widen(bias[i]) : 0.0f;
  }
  for (int64_t r = 0; r < p.outer; ++r) {
    const S *xr = x + r * n;
    S *yr = y + r * n;
    for (int64_t i = 0; i < n; ++i)
      row[i] = widen(xr[i]);
    double mean = 0, var;
    if (p.rms) {
      var = rowSum(row, n, [](double v) { return v * v; }) * invN;
    } else {
      mean = rowSum(row, n, [](double v) { return v; }) * invN;
      var = rowSum(row, n,
                   [mean](double v) { return (v - mean) * (v - mean); }) *
            invN;
    }
    const float m = static_cast<float>(mean);
    const float is = static_cast<float>(1.0 / std::sqrt(var + p.epsilon));
    for (int64_t i = 0; i < n; ++i)
      row[i] = (row[i] - m) * is * sc[i] + bi[i];
    for (int64_t i = 0; i < n; ++i)
      yr[i] = narrowTo<S>(row[i]);
    if (meanOut)
      meanOut[r] = narrowTo<S>(m);
    if (invStdOut)
      invStdOut[r] = narrowTo<S>(is);
  }
}

} // namespace

void softmaxKernel(const SoftmaxParams &p, const void *in, void *out) {
  if (visitFloat16(p.dtype, [&](auto tag) {
        using S = typename decltype(tag)::type;
        softmax16Typed(p, static_cast<const S *>(in), static_cast<S *>(out));
      }))
    return;
  visitFloat(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmaxTyped(p, static_cast<const T *>(in), static_cast<T *>(out));
  });
}

void normKernel(const NormParams &p, const void *x, const void *scale,
                const void *bias, void *y, void *mean, void *invStdDev) {
  if (visitFloat16(p.dtype, [&](auto tag) {
        using S = typename decltype(tag)::type;
        norm16Typed(p, static_cast<const S *>(x), static_cast<const S *>(scale),
                    static_cast<const S *>(bias), static_cast<S *>(y),
                    static_cast<S *>(mean), static_cast<S *>(invStdDev));
      }))
    return;
  visitFloat(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    normTyped(p, static_cast<const T *>(x), static_cast<const T *>(scale),
              static_cast<const T *>(bias), static_cast<T *>(y),
              static_cast<T *>(mean), static_cast<T *>(invStdDev));
  });
}

} // namespace tpc::cpu
