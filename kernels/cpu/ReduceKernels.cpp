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

template <size_t... I>
void addReduce(KernelTable &t, std::index_sequence<I...>) {
  (t.push_back({kReduceKernels[I].name, kReduceKernels[I].summary,
                prepareReduce<int(I)>}),
   ...);
}

} // namespace

void addReduceKernels(KernelTable &t) {
  addReduce(t, std::make_index_sequence<std::size(kReduceKernels)>());
  t.push_back({"ArgMax", "index of the max along attr axis -> i64",
               prepareArgReduce<true>});
  t.push_back({"ArgMin", "index of the min along attr axis -> i64",
               prepareArgReduce<false>});
  t.push_back({"TopK",
               "k largest (attr largest = 0: smallest) along attr axis, "
               "sorted; values and i64 indices",
               prepareTopK});
  t.push_back({"CumSum",
               "running sums along attr axis (attrs exclusive, reverse)",
               prepareCumSum});
}

} // namespace tpc::cpu
