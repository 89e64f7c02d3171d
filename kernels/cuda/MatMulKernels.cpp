//===- MatMulKernels.cpp - MatMul and Gemm through cuBLASLt ---------------===//
//
// MatMul: a weight shared by the whole batch (B broadcast, A dense) folds the
// batch into M, one product; activation x activation products (attention)
// are strided-batched over the innermost batch dim, one cuBLASLt call per
// combination of the outer batch dims (none after collapsing in the usual
// [batch, heads] case). A batch dim broadcast in A falls back to one call per
// matrix. Gemm: C is folded in as a bias epilogue when it is a row vector
// with beta 1, else broadcast into Y first and accumulated with beta.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/Adapters.h"
#include "kernels/cuda/Gemm.h"
#include "kernels/cuda/Kernels.h"

#include "kernels/MatMul.h"

#include <array>

namespace tpc::cuda {
namespace {

Status checkGemmDType(DType t) {
  if (t == DType::F32 || t == DType::F64 || t == DType::F16 ||
      t == DType::BF16)
    return Status::ok();
  return Status::error(std::string("the CUDA backend multiplies f32, f64, "
                                   "f16 and bf16 matrices, not ") +
                       dtypeName(t));
}

class MatMulKernel final : public PreparedKernel {
public:
  struct Call {
    int64_t a, b, y; // element offsets of the first matrices
  };
  std::unique_ptr<LtGemm> gemm;
  std::vector<Call> calls;
  size_t elemSize = 4;
  /// k == 0: the product is zeros of this many bytes.
  size_t zeroBytes = 0;

  Status run(const void *const *inputs, void *const *outputs,
             cudaStream_t stream) override {
    if (zeroBytes) {
      TPC_CUDA_CHECK(cudaMemsetAsync(outputs[0], 0, zeroBytes, stream));
      return Status::ok();
    }
    if (!gemm)
      return Status::ok();
    const char *a = static_cast<const char *>(inputs[0]);
    const char *b = static_cast<const char *>(inputs[1]);
    char *y = static_cast<char *>(outputs[0]);
    for (const Call &c : calls)
      TPC_RETURN_IF_ERROR(gemm->run(a + c.a * elemSize, b + c.b * elemSize,
                                    y + c.y * elemSize, nullptr, stream)
                              .withContext("MatMul: "));
    return Status::ok();
  }
};

Status prepareMatMul(const KernelContext &ctx,
                     const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &,
                     std::unique_ptr<PreparedKernel> &kernel) {
  MatMulParams p;
  TPC_RETURN_IF_ERROR(makeMatMulParams(in, out, p));
  TPC_RETURN_IF_ERROR(checkGemmDType(p.dtype));
  const int64_t m = p.m, n = p.n, k = p.k;
  const StridedLayout<3> &l = p.batch;
  auto mk = std::make_unique<MatMulKernel>();
  mk->elemSize = dtypeSize(in[0].dtype);
  if (m == 0 || n == 0 || l.numel == 0) {
    kernel = std::move(mk);
    return Status::ok();
  }
  if (k == 0) {
    mk->zeroBytes = out[0].bytes();
    kernel = std::move(mk);
    return Status::ok();
  }
  GemmShape g;
  g.dtype = in[0].dtype;
  g.n = n;
  g.k = k;
  g.lda = k;
  g.ldb = n;
  g.ldd = n;
  const int last = l.rank - 1;
  if (p.foldBatch) {
    g.m = m * l.numel;
    mk->calls.push_back({0, 0, 0});
  } else if (l.strides[1][last] != 0 && l.strides[2][last] != 0) {
    // Strided batch over the innermost batch dim; the outer dims (if any)
    // are separate calls.
    g.m = m;
    g.batch = l.shape[last];
    g.strideA = l.strides[1][last];
    g.strideB = l.strides[2][last];
    g.strideD = l.strides[0][last];
    cpu::forEachRow(l, [&](const int64_t *off) {
      mk->calls.push_back({off[1], off[2], off[0]});
    });
  } else {
    // A broadcast batch dim: one call per matrix.
    g.m = m;
    cpu::forEachRow(l, [&](const int64_t *off) {
      for (int64_t i = 0; i < l.shape[last]; ++i)
        mk->calls.push_back({off[1] + i * l.strides[1][last],
                             off[2] + i * l.strides[2][last],
                             off[0] + i * l.strides[0][last]});
    });
  }
  TPC_RETURN_IF_ERROR(LtGemm::create(ctx, g, mk->gemm));
  kernel = std::move(mk);
  return Status::ok();
}

class GemmKernel final : public PreparedKernel {
public:
  /// The product with beta (C pre-broadcast into Y) or without C.
  std::unique_ptr<LtGemm> plain;
  /// The product with a bias epilogue (row-vector C, beta 1), if cuBLASLt
  /// has one; used when C is 16-byte aligned.
  std::unique_ptr<LtGemm> withBias;
  /// Broadcast of C into Y before `plain` (when C is used).
  bool seedC = false;
  StridedCopyParams seed;
  bool hasC = false;
  /// k == 0: Y = beta * C (seedC) or zeros.
  bool emptyK = false;
  double beta = 0;
  DType dtype = DType::F32;
  int64_t numel = 0;

  Status run(const void *const *inputs, void *const *outputs,
             cudaStream_t stream) override {
    const void *c = hasC ? inputs[2] : nullptr;
    void *y = outputs[0];
    if (withBias && c && reinterpret_cast<uintptr_t>(c) % 16 == 0)
      return withBias->run(inputs[0], inputs[1], y, c, stream)
          .withContext("Gemm: ");
    if (seedC) {
      cudaError_t err = stridedCopy(seed, c, y, stream);
      if (err != cudaSuccess)
        return cudaStatus(err, "Gemm: broadcasting C");
    }
    if (emptyK) {
      if (!seedC)
        TPC_CUDA_CHECK(cudaMemsetAsync(y, 0, size_t(numel) * dtypeSize(dtype),
                                       stream));
      else if (beta != 1.0)
        if (cudaError_t err = scaleKernel(dtype, numel, beta, y, stream);
            err != cudaSuccess)
          return cudaStatus(err, "Gemm: scaling C");
      return Status::ok();
    }
    if (!plain)
      return Status::ok();
    return plain->run(inputs[0], inputs[1], y, nullptr, stream)
        .withContext("Gemm: ");
  }
};

Status prepareGemm(const KernelContext &ctx, const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  GemmParams p;
  TPC_RETURN_IF_ERROR(makeGemmParams(in, out, attrs, p));
  TPC_RETURN_IF_ERROR(checkGemmDType(p.dtype));
  const Shape &a = in[0].shape, &b = in[1].shape;
  GemmShape g;
  g.dtype = p.dtype;
  g.transA = p.transA;
  g.transB = p.transB;
  g.m = p.m;
  g.k = p.k;
  g.n = p.n;
  g.lda = a[1];
  g.ldb = b[1];
  g.ldd = g.n;
  g.alpha = p.alpha;
  const double beta = p.beta;
  const bool hasC = p.hasC && beta != 0;

  auto gk = std::make_unique<GemmKernel>();
  gk->dtype = g.dtype;
  gk->numel = g.m * g.n;
  gk->beta = beta;
  gk->hasC = hasC;
  if (g.m == 0 || g.n == 0) {
    kernel = std::move(gk);
    return Status::ok();
  }
  if (hasC) {
    const Shape mn = {g.m, g.n};
    TPC_RETURN_IF_ERROR(
        makeStridedCopy(dtypeSize(g.dtype), mn, cpu::denseStrides(mn), 0,
                        cpu::broadcastStrides(in[2].shape, mn), 0, gk->seed));
    gk->seedC = true;
  }
  if (g.k == 0) {
    gk->emptyK = true;
    kernel = std::move(gk);
    return Status::ok();
  }
  if (hasC && beta == 1.0) {
    const std::vector<int64_t> cs = cpu::broadcastStrides(in[2].shape, {g.m, g.n});
    if (cs[0] == 0 && cs[1] == 1) {
      GemmShape biased = g;
      biased.bias = true;
      biased.beta = 0;
      // No bias algorithm is not an error: the general path remains.
      if (!LtGemm::create(ctx, biased, gk->withBias))
        gk->withBias.reset();
    }
  }
  g.beta = hasC ? beta : 0.0;
  TPC_RETURN_IF_ERROR(LtGemm::create(ctx, g, gk->plain));
  kernel = std::move(gk);
  return Status::ok();
}

} // namespace

void addMatMulKernels(KernelTable &t) {
  t.push_back({"MatMul", "numpy matmul with batch broadcasting (cuBLASLt)",
               prepareMatMul});
  t.push_back({"Gemm", "alpha * op(A) op(B) + beta * C (cuBLASLt)",
               prepareGemm});
}

} // namespace tpc::cuda
