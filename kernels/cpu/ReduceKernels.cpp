//===- ReduceKernels.cpp - Adapters of reductions, TopK and CumSum --------===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Reduce.h"

namespace tpc::cpu {
namespace {

void runReduce(const ReduceParams &p, const void *const *i, void *const *o,
               const ExecContext &) {
  reduceKernel(p, i[0], o[0]);
}

void runArgReduce(const ArgReduceParams &p, const void *const *i,
                  void *const *o, const ExecContext &) {
  argReduceKernel(p, i[0], static_cast<int64_t *>(o[0]));
}

void runTopK(const TopKParams &p, const void *const *i, void *const *o,
             const ExecContext &) {
  topKKernel(p, i[0], o[0], static_cast<int64_t *>(o[1]));
}

void runCumSum(const CumSumParams &p, const void *const *i, void *const *o,
               const ExecContext &) {
  cumSumKernel(p, i[0], o[0]);
}

} // namespace

void addReduceKernels(KernelTable &t) {
  addListed<kReduceKernels>(t, [](auto i) {
    return prepareWith<makeReduceParams, runReduce,
                       kReduceKernels[decltype(i)::value].op>;
  });
  addFamily(
      t, kAxisKernels,
      {{AxisOp::ArgMax, prepareWith<makeArgReduceParams, runArgReduce, true>},
       {AxisOp::ArgMin, prepareWith<makeArgReduceParams, runArgReduce, false>},
       {AxisOp::TopK, prepareWith<makeTopKParams, runTopK>},
       {AxisOp::CumSum, prepareWith<makeCumSumParams, runCumSum>}});
}

} // namespace tpc::cpu
