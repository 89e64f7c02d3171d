//===- NormKernels.cpp - Softmax, LayerNormalization, RMSNormalization ---===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Norm.h"
#include "kernels/cpu/Parallel.h"

namespace tpc::cpu {
namespace {

template <bool Log>
Status prepareSoftmax(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      std::unique_ptr<PreparedKernel> &kernel) {
  SoftmaxParams p;
  TPC_RETURN_IF_ERROR(makeSoftmaxParams(Log, in, out, attrs, p));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &ctx) {
        const int64_t block = p.axis * p.inner * int64_t(dtypeSize(p.dtype));
        parallelFor(ctx.numThreads, p.outer, 2 * block,
                    [&](int64_t r0, int64_t r1) {
                      SoftmaxParams q = p;
                      q.outer = r1 - r0;
                      softmaxKernel(q, byteOffset(i[0], r0 * block),
                                    byteOffset(o[0], r0 * block));
                    });
      });
  return Status::ok();
}

/// LayerNormalization (X, Scale, optional B -> Y, optional Mean and
/// InvStdDev) and RMSNormalization (X, Scale -> Y).
template <bool Rms>
Status prepareNorm(const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  NormParams p;
  TPC_RETURN_IF_ERROR(makeNormParams(Rms, in, out, attrs, p));
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &ctx) {
    const int64_t row = p.norm * int64_t(dtypeSize(p.dtype));
    const int64_t stat = int64_t(dtypeSize(p.dtype));
    // Rows are independent: each thread normalizes a block of them.
    parallelFor(ctx.numThreads, p.outer, 2 * row, [&](int64_t r0, int64_t r1) {
      NormParams q = p;
      q.outer = r1 - r0;
      normKernel(q, byteOffset(i[0], r0 * row), i[1],
                 p.hasBias ? i[2] : nullptr, byteOffset(o[0], r0 * row),
                 p.wantMean ? byteOffset(o[1], r0 * stat) : nullptr,
                 p.wantInvStdDev ? byteOffset(o[2], r0 * stat) : nullptr);
    });
  });
  return Status::ok();
}

} // namespace

void addNormKernels(KernelTable &t) {
  addFamily(t, kNormKernels,
            {prepareSoftmax<false>, prepareSoftmax<true>, prepareNorm<false>,
             prepareNorm<true>});
}

} // namespace tpc::cpu
