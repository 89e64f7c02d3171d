//===- ReduceKernels.cpp - Adapters of reductions, TopK and CumSum --------===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Reduce.h"

#include <iterator>
#include <utility>

namespace tpc::cpu {
namespace {

template <int I>
Status prepareReduce(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  ReduceParams p;
  TPC_RETURN_IF_ERROR(
      makeReduceParams(kReduceKernels[I].op, in, out, attrs, p));
  kernel =
      makeKernel([p](const void *const *i, void *const *o,
                     const ExecContext &) { reduceKernel(p, i[0], o[0]); });
  return Status::ok();
}

template <bool IsMax>
Status prepareArgReduce(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        std::unique_ptr<PreparedKernel> &kernel) {
  ArgReduceParams p;
  TPC_RETURN_IF_ERROR(makeArgReduceParams(IsMax, in, out, attrs, p));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        argReduceKernel(p, i[0], static_cast<int64_t *>(o[0]));
      });
  return Status::ok();
}

Status prepareTopK(const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  TopKParams p;
  TPC_RETURN_IF_ERROR(makeTopKParams(in, out, attrs, p));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        topKKernel(p, i[0], o[0], static_cast<int64_t *>(o[1]));
      });
  return Status::ok();
}

Status prepareCumSum(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  CumSumParams p;
  TPC_RETURN_IF_ERROR(makeCumSumParams(in, out, attrs, p));
  kernel =
      makeKernel([p](const void *const *i, void *const *o,
                     const ExecContext &) { cumSumKernel(p, i[0], o[0]); });
  return Status::ok();
}

} // namespace

void addReduceKernels(KernelTable &t) {
  addListed<kReduceKernels>(
      t, [](auto i) { return prepareReduce<decltype(i)::value>; });
  addFamily(t, kAxisKernels,
            {prepareArgReduce<true>, prepareArgReduce<false>, prepareTopK,
             prepareCumSum});
}

} // namespace tpc::cpu
