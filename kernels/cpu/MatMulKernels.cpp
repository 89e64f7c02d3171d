//===- MatMulKernels.cpp - MatMul and Gemm adapters -----------------------===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/MatMul.h"
#include "kernels/cpu/MatMulHalf.h"

namespace tpc::cpu {
namespace {

Status prepareMatMul(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &,
                     std::unique_ptr<PreparedKernel> &kernel) {
  MatMulParams p;
  TPC_RETURN_IF_ERROR(makeMatMulParams(in, out, p));
  if (p.dtype == DType::F32) {
    kernel = makeMatMulF32Kernel(p);
    return Status::ok();
  }
  if (p.dtype == DType::BF16) {
    kernel = makeMatMulBf16Kernel(p);
    return Status::ok();
  }
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &ctx) {
        matMulKernel(p, i[0], i[1], o[0], ctx.numThreads);
      });
  return Status::ok();
}

Status prepareGemm(const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  GemmParams p;
  TPC_RETURN_IF_ERROR(makeGemmParams(in, out, attrs, p));
  if (p.dtype == DType::F32) {
    kernel = makeGemmF32Kernel(p);
    return Status::ok();
  }
  if (p.dtype == DType::BF16) {
    kernel = makeGemmBf16Kernel(p);
    return Status::ok();
  }
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &ctx) {
    gemmKernel(p, i[0], i[1], p.hasC ? i[2] : nullptr, o[0], ctx.numThreads);
  });
  return Status::ok();
}

} // namespace

void addMatMulKernels(KernelTable &t) {
  t.push_back(
      {"MatMul", "numpy matmul with batch broadcasting", prepareMatMul});
  t.push_back({"Gemm", "alpha * op(A) op(B) + beta * C", prepareGemm});
}

} // namespace tpc::cpu
