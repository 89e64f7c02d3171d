//===- MatMulKernels.cpp - MatMul and Gemm adapters -----------------------===//
//
// f32 and bf16 products run on the GEMM kernels that pack a bound weight;
// the other types on matMulKernel / gemmKernel.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/MatMul.h"
#include "kernels/cpu/MatMulHalf.h"

namespace tpc::cpu {
namespace {

void runMatMul(const MatMulParams &p, const void *const *i, void *const *o,
               const ExecContext &ctx) {
  matMulKernel(p, i[0], i[1], o[0], ctx.numThreads);
}

void runGemm(const GemmParams &p, const void *const *i, void *const *o,
             const ExecContext &ctx) {
  gemmKernel(p, i[0], i[1], p.hasC ? i[2] : nullptr, o[0], ctx.numThreads);
}

/// f32 and bf16 on the kernels that pack a bound weight, the other types
/// through `Run`.
template <auto Run, class Params>
std::unique_ptr<PreparedKernel> bindProduct(const Params &p, const Operands &) {
  const bool f32 = p.dtype == DType::F32;
  if (!f32 && p.dtype != DType::BF16)
    return bindRun<Run>(p);
  if constexpr (std::is_same_v<Params, MatMulParams>)
    return f32 ? makeMatMulF32Kernel(p) : makeMatMulBf16Kernel(p);
  else
    return f32 ? makeGemmF32Kernel(p) : makeGemmBf16Kernel(p);
}

} // namespace

void addMatMulKernels(KernelTable &t) {
  t.push_back(
      {"MatMul", "numpy matmul with batch broadcasting",
       prepareBound<makeMatMulParams, bindProduct<runMatMul, MatMulParams>>});
  t.push_back({"Gemm", "alpha * op(A) op(B) + beta * C",
               prepareBound<makeGemmParams, bindProduct<runGemm, GemmParams>>});
}

} // namespace tpc::cpu
