//===- Reduce.cpp - Reductions, arg-reductions, TopK and CumSum -----------===//
#include "kernels/cpu/Reduce.h"
#include "kernels/cpu/Convert.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpc::cpu {
namespace {

template <class T> bool isNaN(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(x);
  else
    return false;
}

struct SumC {
  template <class T> static T init() { return T(0); }
  template <class T> static T combine(T a, T b) { return a + b; }
};
struct ProdC {
  template <class T> static T init() { return T(1); }
  template <class T> static T combine(T a, T b) { return a * b; }
};
struct MaxC {
  template <class T> static T init() {
    if constexpr (std::is_floating_point_v<T>)
      return -std::numeric_limits<T>::infinity();
    else
      return std::numeric_limits<T>::lowest();
  }
  template <class T> static T combine(T a, T b) {
    return (b > a || isNaN(b)) ? b : a;
  }
};
struct MinC {
  template <class T> static T init() {
    if constexpr (std::is_floating_point_v<T>)
      return std::numeric_limits<T>::infinity();
    else
      return std::numeric_limits<T>::max();
  }
  template <class T> static T combine(T a, T b) {
    return (b < a || isNaN(b)) ? b : a;
  }
};

struct Plain {
  template <class T> static T map(T x) { return x; }
};
struct Square {
  template <class T> static T map(T x) { return x * x; }
};

/// Native types are their own accumulator type; f16/bf16 (widen() in
/// Convert.h) accumulate in float.
template <class T> T widen(T v) { return v; }

/// Reduces a row to one value. Four independent accumulators let the
/// contiguous case vectorize without reassociation flags (and make float
/// sums a little more accurate).
template <class T, class A, class C, class M>
A reduceRow(const T *x, int64_t n, int64_t stride) {
  if (stride != 1) {
    A acc = C::template init<A>();
    for (int64_t i = 0; i < n; ++i)
      acc = C::combine(acc, M::map(A(widen(x[i * stride]))));
    return acc;
  }
  A acc[4] = {C::template init<A>(), C::template init<A>(),
              C::template init<A>(), C::template init<A>()};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k)
      acc[k] = C::combine(acc[k], M::map(A(widen(x[i + k]))));
  for (; i < n; ++i)
    acc[0] = C::combine(acc[0], M::map(A(widen(x[i]))));
  return C::combine(C::combine(acc[0], acc[1]), C::combine(acc[2], acc[3]));
}

/// Reduces `in` (elements of T) into the accumulators `out` (of A).
template <class T, class A, class C, class M>
void reduceWith(const ReduceParams &p, const T *in, A *out) {
  for (int64_t i = 0; i < p.outNumel; ++i)
    out[i] = C::template init<A>();
  const StridedLayout<2> &l = p.layout;
  const int64_t n = rowLength(l);
  const int64_t so = rowStride(l, 0), si = rowStride(l, 1);
  forEachRow(l, [&](const int64_t *off) {
    A *o = out + off[0];
    const T *x = in + off[1];
    if (so == 0) {
      *o = C::combine(*o, reduceRow<T, A, C, M>(x, n, si));
    } else if (so == 1 && si == 1) {
      for (int64_t i = 0; i < n; ++i)
        o[i] = C::combine(o[i], M::map(A(widen(x[i]))));
    } else {
      for (int64_t i = 0; i < n; ++i)
        o[i * so] = C::combine(o[i * so], M::map(A(widen(x[i * si]))));
    }
  });
}

/// Calls `f(C(), M())` with the combiner and the map of reduction `op`.
template <class F> void visitReduction(ReduceOp op, F &&f) {
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Mean:
    return f(SumC(), Plain());
  case ReduceOp::Max:
    return f(MaxC(), Plain());
  case ReduceOp::Min:
    return f(MinC(), Plain());
  case ReduceOp::Prod:
    return f(ProdC(), Plain());
  case ReduceOp::L2:
  case ReduceOp::SumSquare:
    return f(SumC(), Square());
  }
}

/// Reduces elements of T into `y`, of the accumulator type A (T itself,
/// or float for f16/bf16), and finishes Mean and L2 there.
template <class T, class A>
void reduceTyped(const ReduceParams &p, const void *in, A *y) {
  const T *x = static_cast<const T *>(in);
  visitReduction(p.op, [&](auto c, auto m) {
    reduceWith<T, A, decltype(c), decltype(m)>(p, x, y);
  });
  if (p.op == ReduceOp::Mean) {
    if constexpr (std::is_floating_point_v<A>) {
      const A scale = A(1) / static_cast<A>(p.count);
      for (int64_t i = 0; i < p.outNumel; ++i)
        y[i] *= scale;
    } else if (p.count > 0) {
      for (int64_t i = 0; i < p.outNumel; ++i)
        y[i] /= static_cast<A>(p.count);
    }
  } else if (p.op == ReduceOp::L2) {
    for (int64_t i = 0; i < p.outNumel; ++i)
      y[i] = static_cast<A>(std::sqrt(static_cast<double>(y[i])));
  }
}

/// f16/bf16: accumulate in a float buffer per thread (it grows to the
/// largest output once, so steady-state runs do not allocate), then round
/// each result once.
template <class S>
void reduce16(const ReduceParams &p, const void *in, void *out) {
  thread_local std::vector<float> acc;
  if (acc.size() < static_cast<size_t>(p.outNumel))
    acc.resize(p.outNumel);
  reduceTyped<S, float>(p, in, acc.data());
  S *y = static_cast<S *>(out);
  for (int64_t i = 0; i < p.outNumel; ++i)
    y[i] = narrowTo<S>(acc[i]);
}

template <class T>
void argReduceTyped(const ArgReduceParams &p, const T *in, int64_t *out) {
  // better(a, b): whether a value `a` met later replaces the best `b`.
  auto better = [&](T at, T bt) {
    const auto a = widen(at), b = widen(bt);
    if (p.isMax)
      return p.selectLast ? a >= b : a > b;
    return p.selectLast ? a <= b : a < b;
  };
  for (int64_t o = 0; o < p.outer; ++o) {
    const T *block = in + o * p.axisDim * p.inner;
    int64_t *dst = out + o * p.inner;
    if (p.inner == 1) {
      int64_t best = 0;
      for (int64_t a = 1; a < p.axisDim; ++a)
        if (better(block[a], block[best]))
          best = a;
      *dst = best;
      continue;
    }
    // Walk the axis in memory order, comparing each row against the best so
    // far, which the output holds as indices.
    for (int64_t j = 0; j < p.inner; ++j)
      dst[j] = 0;
    for (int64_t a = 1; a < p.axisDim; ++a) {
      const T *row = block + a * p.inner;
      for (int64_t j = 0; j < p.inner; ++j)
        if (better(row[j], block[dst[j] * p.inner + j]))
          dst[j] = a;
    }
  }
}

/// A partial sort of each line's (value, index) pairs in a per-thread
/// buffer that only grows; the values are copied from the input.
template <class T>
void topKTyped(const TopKParams &p, const T *in, T *values, int64_t *indices) {
  using A = decltype(widen(T{}));
  thread_local std::vector<std::pair<A, int64_t>> line;
  line.resize(size_t(p.axisDim));
  auto before = [&](const std::pair<A, int64_t> &a,
                    const std::pair<A, int64_t> &b) {
    return topKBefore(p.largest, a.first, a.second, b.first, b.second);
  };
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t j = 0; j < p.inner; ++j) {
      const T *x = in + o * p.axisDim * p.inner + j;
      for (int64_t a = 0; a < p.axisDim; ++a)
        line[size_t(a)] = {A(widen(x[a * p.inner])), a};
      std::partial_sort(line.begin(), line.begin() + p.k, line.end(), before);
      const int64_t first = o * p.k * p.inner + j;
      for (int64_t r = 0; r < p.k; ++r) {
        const int64_t a = line[size_t(r)].second;
        values[first + r * p.inner] = x[a * p.inner];
        indices[first + r * p.inner] = a;
      }
    }
}

/// The type CumSum adds T in: float for f16/bf16; for integers the unsigned
/// type, so that sums wrap (signed overflow is undefined); T otherwise.
template <class T, bool = std::is_integral_v<T>> struct CumSumAcc {
  using type = T;
};
template <class T> struct CumSumAcc<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <> struct CumSumAcc<Half> { using type = float; };
template <> struct CumSumAcc<BFloat16> { using type = float; };

/// Sums in axis order, keeping one accumulator per inner column in a
/// per-thread buffer that only grows, so that walking the axis reads and
/// writes whole contiguous rows.
template <class T>
void cumSumTyped(const CumSumParams &p, const T *in, T *out) {
  using A = typename CumSumAcc<T>::type;
  thread_local std::vector<A> acc;
  if (acc.size() < static_cast<size_t>(p.inner))
    acc.resize(p.inner);
  auto store = [](A v) {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      return narrowTo<T>(v);
    else
      return static_cast<T>(v);
  };
  for (int64_t o = 0; o < p.outer; ++o) {
    std::fill(acc.begin(), acc.begin() + p.inner, A(0));
    const int64_t block = o * p.axisDim * p.inner;
    for (int64_t step = 0; step < p.axisDim; ++step) {
      const int64_t a = p.reverse ? p.axisDim - 1 - step : step;
      const T *x = in + block + a * p.inner;
      T *y = out + block + a * p.inner;
      for (int64_t j = 0; j < p.inner; ++j) {
        const A v = static_cast<A>(widen(x[j]));
        if (p.exclusive)
          y[j] = store(acc[j]);
        acc[j] += v;
        if (!p.exclusive)
          y[j] = store(acc[j]);
      }
    }
  }
}

} // namespace

void reduceKernel(const ReduceParams &p, const void *in, void *out) {
  if (visitFloat16(p.dtype, [&](auto tag) {
        reduce16<typename decltype(tag)::type>(p, in, out);
      }))
    return;
  visitNumeric(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduceTyped<T, T>(p, in, static_cast<T *>(out));
  });
}

void argReduceKernel(const ArgReduceParams &p, const void *in, int64_t *out) {
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    argReduceTyped<T>(p, static_cast<const T *>(in), out);
  };
  if (!visitFloat16(p.dtype, run))
    visitNumeric(p.dtype, run);
}

void topKKernel(const TopKParams &p, const void *in, void *values,
                int64_t *indices) {
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    topKTyped<T>(p, static_cast<const T *>(in), static_cast<T *>(values),
                 indices);
  };
  if (p.dtype == DType::I8)
    run(TypeTag<int8_t>{});
  else if (p.dtype == DType::U8)
    run(TypeTag<uint8_t>{});
  else if (!visitFloat16(p.dtype, run))
    visitNumeric(p.dtype, run);
}

void cumSumKernel(const CumSumParams &p, const void *in, void *out) {
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    cumSumTyped<T>(p, static_cast<const T *>(in), static_cast<T *>(out));
  };
  if (!visitFloat16(p.dtype, run))
    visitNumeric(p.dtype, run);
}

} // namespace tpc::cpu
