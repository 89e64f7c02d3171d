//===- Gemm.h - One cuBLASLt matrix product of fixed shape ------*- C++ -*-===//
//
// Row-major D = alpha * op(A) op(B) + beta * D (+ a bias row), optionally
// strided-batched. Rows and columns are swapped on the way to cuBLASLt's
// column-major view (D^T = op(B)^T op(A)^T), so no operand is copied. The
// algorithm is chosen once, when the product is created, by cuBLASLt's
// heuristic: one for 16-byte aligned operands and one that only assumes
// element alignment; run() picks by the actual addresses.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CUDA_GEMM_H
#define TPC_KERNELS_CUDA_GEMM_H

#include "kernels/cuda/Registry.h"

#include <memory>

namespace tpc::cuda {

struct GemmShape {
  DType dtype = DType::F32;
  bool transA = false, transB = false;
  /// op(A) is m x k, op(B) is k x n, D is m x n; leading dims are the
  /// row-major row lengths of the stored matrices, in elements.
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldd = 0;
  /// Strided batch: `batch` products, operands `stride*` elements apart.
  int64_t batch = 1;
  int64_t strideA = 0, strideB = 0, strideD = 0;
  double alpha = 1.0, beta = 0.0;
  /// Adds bias[j] to every row of D (cuBLASLt's bias epilogue).
  bool bias = false;
};

class LtGemm {
public:
  /// Creates the descriptors and queries the heuristic. Fails when cuBLASLt
  /// has no algorithm for the shape.
  static Status create(const KernelContext &ctx, const GemmShape &shape,
                       std::unique_ptr<LtGemm> &out);
  ~LtGemm();
  LtGemm(const LtGemm &) = delete;
  LtGemm &operator=(const LtGemm &) = delete;

  /// Enqueues D = ... on `stream`; `bias` only when created with a bias.
  Status run(const void *a, const void *b, void *d, const void *bias,
             cudaStream_t stream);

private:
  LtGemm() = default;
  const KernelContext *ctx_ = nullptr;
  GemmShape shape_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layoutA_ = nullptr, layoutB_ = nullptr,
                         layoutD_ = nullptr;
  cublasLtMatmulAlgo_t aligned_{}, unaligned_{};
  bool haveAligned_ = false, haveUnaligned_ = false;
  float alphaF_ = 1, betaF_ = 0;
  double alphaD_ = 1, betaD_ = 0;
};

} // namespace tpc::cuda

#endif // TPC_KERNELS_CUDA_GEMM_H
