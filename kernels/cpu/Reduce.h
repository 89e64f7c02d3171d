//===- Reduce.h - Reductions, arg-reductions, TopK and CumSum ---*- C++ -*-===//
#ifndef TPC_KERNELS_CPU_REDUCE_H
#define TPC_KERNELS_CPU_REDUCE_H

#include "kernels/Reduce.h"
#include "kernels/cpu/Support.h"

namespace tpc::cpu {

// The params and their builders are backend-neutral (kernels/Reduce.h).
using tpc::ArgReduceParams;
using tpc::CumSumParams;
using tpc::makeArgReduceParams;
using tpc::makeCumSumParams;
using tpc::makeReduceParams;
using tpc::makeTopKParams;
using tpc::ReduceOp;
using tpc::ReduceParams;
using tpc::TopKParams;
using tpc::topKBefore;

/// Max/Min propagate NaN; reducing an empty set gives the identity (0 for
/// sums, 1 for Prod, -inf/+inf or the integer limits for Max/Min, NaN for
/// Mean of floats).
void reduceKernel(const ReduceParams &p, const void *in, void *out);

void argReduceKernel(const ArgReduceParams &p, const void *in, int64_t *out);

void topKKernel(const TopKParams &p, const void *in, void *values,
                int64_t *indices);

void cumSumKernel(const CumSumParams &p, const void *in, void *out);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_REDUCE_H
