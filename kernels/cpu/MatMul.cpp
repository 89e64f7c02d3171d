//===- MatMul.cpp - Matrix products ---------------------------------------===//
#include "kernels/cpu/MatMul.h"
#include "kernels/cpu/MatMulHalf.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace tpc::cpu {
namespace {

/// OpenBLAS keeps one global thread count; set it only when it changes.
void setBlasThreads(int numThreads) {
  int want = std::max(1, numThreads);
  if (openblas_get_num_threads() != want)
    openblas_set_num_threads(want);
}

/// C = alpha * op(A) op(B) + beta * C, row-major, for the BLAS types.
template <class T>
void blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              T alpha, const T *a, const T *b, T beta, T *c) {
  const CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
  const blasint lda =
      static_cast<blasint>(std::max<int64_t>(1, transA ? m : k));
  const blasint ldb =
      static_cast<blasint>(std::max<int64_t>(1, transB ? k : n));
  const blasint ldc = static_cast<blasint>(std::max<int64_t>(1, n));
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, lda,
                b, ldb, beta, c, ldc);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, lda,
                b, ldb, beta, c, ldc);
}

/// Plain i-p-j loop for integer products; unsigned arithmetic wraps.
template <class T>
void loopGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              const T *a, const T *b, T *c) {
  using U = std::make_unsigned_t<T>;
  std::fill(c, c + m * n, T(0));
  for (int64_t i = 0; i < m; ++i) {
    T *row = c + i * n;
    for (int64_t p = 0; p < k; ++p) {
      const U av = static_cast<U>(transA ? a[p * m + i] : a[i * k + p]);
      for (int64_t j = 0; j < n; ++j) {
        const U bv = static_cast<U>(transB ? b[j * k + p] : b[p * n + j]);
        row[j] = static_cast<T>(static_cast<U>(row[j]) + av * bv);
      }
    }
  }
}

template <class T>
void matMulTyped(const MatMulParams &p, const T *a, const T *b, T *y) {
  auto one = [&](const T *am, const T *bm, T *ym, int64_t rows) {
    if (rows == 0 || p.n == 0)
      return;
    if (p.k == 0) {
      // BLAS may skip the update entirely when k is 0; the product is 0.
      std::fill(ym, ym + rows * p.n, T(0));
      return;
    }
    if constexpr (std::is_floating_point_v<T>)
      blasGemm<T>(false, false, rows, p.n, p.k, T(1), am, bm, T(0), ym);
    else
      loopGemm<T>(false, false, rows, p.n, p.k, am, bm, ym);
  };
  forEachProduct(p, [&](const ProductOffsets &o, int64_t rows) {
    one(a + o[1], b + o[2], y + o[0], rows);
  });
}

template <class T>
void gemmTyped(const GemmParams &p, const T *a, const T *b, const T *c, T *y) {
  if (p.m == 0 || p.n == 0)
    return;
  T beta = T(0);
  if (p.hasC && p.beta != 0) {
    // Seed Y with the broadcast C and let BLAS scale it by beta.
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j)
        y[i * p.n + j] = c[i * p.cRowStride + j * p.cColStride];
    beta = static_cast<T>(p.beta);
  }
  if (p.k == 0) {
    for (int64_t i = 0; i < p.m * p.n; ++i)
      y[i] = beta == T(0) ? T(0) : beta * y[i];
    return;
  }
  blasGemm<T>(p.transA, p.transB, p.m, p.n, p.k, static_cast<T>(p.alpha), a, b,
              beta, y);
}

} // namespace

void matMulKernel(const MatMulParams &p, const void *a, const void *b, void *y,
                  int numThreads) {
  if (p.dtype == DType::F16 || p.dtype == DType::BF16)
    return matMulHalfKernel(p, a, b, y, numThreads);
  visitNumeric(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>)
      setBlasThreads(numThreads);
    matMulTyped(p, static_cast<const T *>(a), static_cast<const T *>(b),
                static_cast<T *>(y));
  });
}

void gemmKernel(const GemmParams &p, const void *a, const void *b,
                const void *c, void *y, int numThreads) {
  if (p.dtype == DType::F16 || p.dtype == DType::BF16)
    return gemmHalfKernel(p, a, b, c, y, numThreads);
  setBlasThreads(numThreads);
  visitFloat(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gemmTyped(p, static_cast<const T *>(a), static_cast<const T *>(b),
              static_cast<const T *>(c), static_cast<T *>(y));
  });
}

} // namespace tpc::cpu
