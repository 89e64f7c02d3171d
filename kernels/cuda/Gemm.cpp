//===- Gemm.cpp - One cuBLASLt matrix product of fixed shape --------------===//
#include "kernels/cuda/Gemm.h"
#include "kernels/cuda/Check.h"

#include <climits>

namespace tpc::cuda {
namespace {

Status dataType(DType t, cudaDataType_t &out) {
  switch (t) {
  case DType::F32: out = CUDA_R_32F; return Status::ok();
  case DType::F64: out = CUDA_R_64F; return Status::ok();
  case DType::F16: out = CUDA_R_16F; return Status::ok();
  case DType::BF16: out = CUDA_R_16BF; return Status::ok();
  default:
    return Status::error(std::string("cuBLASLt products of ") + dtypeName(t) +
                         " are not supported");
  }
}

/// A column-major rows x cols layout with leading dim `ld`, batched.
Status makeLayout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld,
                  int64_t batch, int64_t stride,
                  cublasLtMatrixLayout_t &out) {
  TPC_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&out, type, uint64_t(rows),
                                              uint64_t(cols), ld));
  if (batch > 1) {
    const int32_t count = int32_t(batch);
    TPC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
    TPC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
        sizeof stride));
  }
  return Status::ok();
}

} // namespace

Status LtGemm::create(const KernelContext &ctx, const GemmShape &s,
                      std::unique_ptr<LtGemm> &out) {
  out.reset();
  if (s.m <= 0 || s.n <= 0 || s.k <= 0)
    return Status::error("a cuBLASLt product needs positive m, n and k");
  if (s.batch < 1 || s.batch > INT32_MAX)
    return Status::error("batch count " + std::to_string(s.batch) +
                         " is out of cuBLASLt's range");
  cudaDataType_t type = CUDA_R_32F;
  TPC_RETURN_IF_ERROR(dataType(s.dtype, type));
  std::unique_ptr<LtGemm> g(new LtGemm());
  g->ctx_ = &ctx;
  g->shape_ = s;
  g->alphaF_ = float(s.alpha);
  g->betaF_ = float(s.beta);
  g->alphaD_ = s.alpha;
  g->betaD_ = s.beta;

  const bool f64 = s.dtype == DType::F64;
  cublasComputeType_t compute = f64 ? CUBLAS_COMPUTE_64F
                                : (s.dtype == DType::F32 && ctx.allowTf32())
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  TPC_CUBLAS_CHECK(cublasLtMatmulDescCreate(&g->desc_, compute,
                                            f64 ? CUDA_R_64F : CUDA_R_32F));
  // Column-major view: D^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m), so
  // cuBLASLt's A is our B and its B is our A.
  const cublasOperation_t opA = s.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opB = s.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  TPC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      g->desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA));
  TPC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      g->desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB));
  if (s.bias) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    TPC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        g->desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  }
  TPC_RETURN_IF_ERROR(makeLayout(type, s.transB ? s.k : s.n,
                                 s.transB ? s.n : s.k, s.ldb, s.batch,
                                 s.strideB, g->layoutA_));
  TPC_RETURN_IF_ERROR(makeLayout(type, s.transA ? s.m : s.k,
                                 s.transA ? s.k : s.m, s.lda, s.batch,
                                 s.strideA, g->layoutB_));
  TPC_RETURN_IF_ERROR(
      makeLayout(type, s.n, s.m, s.ldd, s.batch, s.strideD, g->layoutD_));

  // One heuristic answer for 16-byte aligned operands, one for operands
  // aligned only to their element size.
  const uint32_t elem = uint32_t(dtypeSize(s.dtype));
  // The alignment preferences describe the base pointers only; a row or a
  // batch member further on starts 16-byte aligned only when the leading
  // dims and batch strides are multiples of 16 bytes too.
  auto bytes16 = [elem](int64_t v) { return (v * int64_t(elem)) % 16 == 0; };
  const bool pitches16 =
      bytes16(s.lda) && bytes16(s.ldb) && bytes16(s.ldd) &&
      (s.batch == 1 ||
       (bytes16(s.strideA) && bytes16(s.strideB) && bytes16(s.strideD)));
  for (uint32_t align : {16u, elem}) {
    if (align == 16 && !pitches16)
      continue;
    cublasLtMatmulPreference_t pref = nullptr;
    TPC_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = ctx.workspaceBytes();
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(pref, attr, &align,
                                                  sizeof align);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulAlgoGetHeuristic(
          ctx.lt(), g->desc_, g->layoutA_, g->layoutB_, g->layoutD_,
          g->layoutD_, pref, 1, &result, &found);
    (void)cublasLtMatmulPreferenceDestroy(pref);
    // NOT_SUPPORTED means no algorithm for this alignment; other failures
    // are errors.
    if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED)
      return cublasStatus(st, "cublasLtMatmulAlgoGetHeuristic");
    if (st != CUBLAS_STATUS_SUCCESS || found == 0)
      continue;
    if (align == 16) {
      g->aligned_ = result.algo;
      g->haveAligned_ = true;
    } else {
      g->unaligned_ = result.algo;
      g->haveUnaligned_ = true;
    }
  }
  if (!g->haveAligned_ && !g->haveUnaligned_)
    return Status::error(
        "cuBLASLt has no algorithm for " + std::string(dtypeName(s.dtype)) +
        " [" + std::to_string(s.m) + "x" + std::to_string(s.k) + "] x [" +
        std::to_string(s.k) + "x" + std::to_string(s.n) + "] (batch " +
        std::to_string(s.batch) + (s.bias ? ", bias epilogue" : "") + ")");
  out = std::move(g);
  return Status::ok();
}

LtGemm::~LtGemm() {
  if (layoutA_)
    (void)cublasLtMatrixLayoutDestroy(layoutA_);
  if (layoutB_)
    (void)cublasLtMatrixLayoutDestroy(layoutB_);
  if (layoutD_)
    (void)cublasLtMatrixLayoutDestroy(layoutD_);
  if (desc_)
    (void)cublasLtMatmulDescDestroy(desc_);
}

Status LtGemm::run(const void *a, const void *b, void *d, const void *bias,
                   cudaStream_t stream) {
  auto aligned16 = [](const void *p) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0;
  };
  const bool aligned = aligned16(a) && aligned16(b) && aligned16(d) &&
                       (!shape_.bias || aligned16(bias));
  const cublasLtMatmulAlgo_t *algo = nullptr;
  if (aligned && haveAligned_)
    algo = &aligned_;
  else if (haveUnaligned_)
    algo = &unaligned_;
  if (!algo)
    return Status::error("cuBLASLt found an algorithm only for 16-byte "
                         "aligned operands, and these are not");
  if (shape_.bias)
    TPC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  const bool f64 = shape_.dtype == DType::F64;
  const void *alpha = f64 ? static_cast<const void *>(&alphaD_) : &alphaF_;
  const void *beta = f64 ? static_cast<const void *>(&betaD_) : &betaF_;
  // cuBLASLt's A is our B (see create()).
  TPC_CUBLAS_CHECK(cublasLtMatmul(ctx_->lt(), desc_, alpha, b, layoutA_, a,
                                  layoutB_, beta, d, layoutD_, d, layoutD_,
                                  algo, ctx_->workspace(),
                                  ctx_->workspaceBytes(), stream));
  return Status::ok();
}

} // namespace tpc::cuda
