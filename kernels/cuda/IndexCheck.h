//===- IndexCheck.h - What CUDA kernels that read indices check -*- C++ -*-===//
//
// The CUDA twin of the CPU kernels' index rule
// (kernels/cpu/MovementKernels.cpp): after a Gather, GatherElements, GatherND,
// ScatterND or ScatterElements step, a small kernel scans its indices and
// records the smallest element outside [-dim, dim) in the KernelContext's index
// record; the runtime reads the record after each forward and fails the run
// naming the step, as on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CUDA_INDEXCHECK_H
#define TPC_KERNELS_CUDA_INDEXCHECK_H

#include "kernels/Types.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tpc::cuda {

/// Dims an index tuple may have (GatherND/ScatterND depth).
constexpr int kMaxIndexDepth = 8;

/// What a kernel that reads indices checks after it runs (the CPU kernels'
/// rule: every index within [-dim, dim), dim cycling through `dims`).
struct IndexCheck {
  int64_t slot = -1;
  /// The operand holding the indices, and how many there are.
  size_t input = 0;
  int64_t count = 0;
  DType indexType = DType::I64;
  int depth = 1;
  int64_t dims[kMaxIndexDepth] = {};
};

/// Enqueues the scan of `indices` that `check` describes, recording into
/// `record` (KernelContext::indexRecord) unless an earlier kernel of the
/// forward already did.
cudaError_t checkIndicesKernel(const IndexCheck &check, const void *indices,
                               int64_t *record, cudaStream_t stream);

} // namespace tpc::cuda

#endif // TPC_KERNELS_CUDA_INDEXCHECK_H
