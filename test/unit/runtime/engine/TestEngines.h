//===- TestEngines.h - The engines runtime tests run ------------*- C++ -*-===//
//
// y = Relu(x @ W + b), as one rank and split across two ranks the ways a
// tensor-parallel compiler splits a projection. Every variant computes the
// same y, which the tests compare with a float64 reference.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_TEST_UNIT_RUNTIME_ENGINE_TESTENGINES_H
#define TPC_TEST_UNIT_RUNTIME_ENGINE_TESTENGINES_H

#include "EngineBuilder.h"

#include <vector>

namespace tpc::test {

struct MlpCase {
  int64_t m = 2, k = 4, n = 5;
  std::vector<float> x, w, b;
  /// Relu(x @ W + b) in float64.
  std::vector<double> expected;
  TensorDesc xDesc() const { return {DType::F32, {m, k}}; }
  TensorDesc yDesc() const { return {DType::F32, {m, n}}; }
};

MlpCase mlpCase(int64_t m = 2, int64_t k = 4, int64_t n = 5);

/// One rank: MatMul, Add, Relu.
EngineBuilder mlpEngine(const MlpCase &c);

/// Two ranks, W split by rows (k): each rank slices its part of x,
/// multiplies, and the partial products are summed by an AllReduce.
/// `kSplit` is rank 0's share of k.
EngineBuilder rowParallelEngine(const MlpCase &c, int64_t kSplit);

/// Two ranks, W and b split by columns (n): each rank computes its columns
/// of y, then an AllGather along axis 1 concatenates them. `nSplit` is rank
/// 0's share of n; unequal shares are passed as the `sizes` attribute.
EngineBuilder columnParallelEngine(const MlpCase &c, int64_t nSplit);

/// Two ranks, W split by rows as in rowParallelEngine, but the partial
/// products are reduce-scattered along `axis` (rank 0 keeping `split` of
/// it), biased and activated per shard, and all-gathered back.
EngineBuilder reduceScatterEngine(const MlpCase &c, int64_t kSplit, int axis,
                                  int64_t split);

/// Compares a float32 result with the float64 reference.
void expectClose(const float *actual, const std::vector<double> &expected,
                 double tolerance = 1e-5);

} // namespace tpc::test

#endif // TPC_TEST_UNIT_RUNTIME_ENGINE_TESTENGINES_H
