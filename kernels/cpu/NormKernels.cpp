//===- NormKernels.cpp - Softmax, LayerNormalization, RMSNormalization ---===//
//
// Rows are independent: each thread normalizes a block of them.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Norm.h"
#include "kernels/cpu/Parallel.h"

namespace tpc::cpu {
namespace {

void runSoftmax(const SoftmaxParams &p, const void *const *i, void *const *o,
                const ExecContext &ctx) {
  const int64_t block = p.axis * p.inner * int64_t(dtypeSize(p.dtype));
  parallelRows<&SoftmaxParams::outer>(
      ctx.numThreads, p, 2 * block, [&](const SoftmaxParams &q, int64_t r0) {
        softmaxKernel(q, byteOffset(i[0], r0 * block),
                      byteOffset(o[0], r0 * block));
      });
}

/// LayerNormalization (X, Scale, optional B -> Y, optional Mean and
/// InvStdDev) and RMSNormalization (X, Scale -> Y).
void runNorm(const NormParams &p, const void *const *i, void *const *o,
             const ExecContext &ctx) {
  const int64_t stat = int64_t(dtypeSize(p.dtype));
  const int64_t row = p.norm * stat;
  parallelRows<&NormParams::outer>(
      ctx.numThreads, p, 2 * row, [&](const NormParams &q, int64_t r0) {
        normKernel(q, byteOffset(i[0], r0 * row), i[1],
                   p.hasBias ? i[2] : nullptr, byteOffset(o[0], r0 * row),
                   p.wantMean ? byteOffset(o[1], r0 * stat) : nullptr,
                   p.wantInvStdDev ? byteOffset(o[2], r0 * stat) : nullptr);
      });
}

} // namespace

void addNormKernels(KernelTable &t) {
  addFamily(
      t, kNormKernels,
      {{NormOp::Softmax, prepareWith<makeSoftmaxParams, runSoftmax, false>},
       {NormOp::LogSoftmax, prepareWith<makeSoftmaxParams, runSoftmax, true>},
       {NormOp::LayerNormalization,
        prepareWith<makeNormParams, runNorm, false>},
       {NormOp::RMSNormalization, prepareWith<makeNormParams, runNorm, true>}});
}

} // namespace tpc::cpu
