//===- Movement.h - Data-movement kernels -----------------------*- C++ -*-===//
//
// The CPU kernels of the movement family; their params and the builders
// that validate operands and attributes are backend-neutral
// (kernels/Movement.h).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_MOVEMENT_H
#define TPC_KERNELS_CPU_MOVEMENT_H

#include "kernels/Movement.h"
#include "kernels/cpu/Support.h"

namespace tpc::cpu {

/// On up to numThreads threads when there are enough bytes.
void stridedCopy(const StridedCopyParams &p, const void *in, void *out,
                 int numThreads = 1);

/// Rows are copied on up to numThreads threads when there are enough bytes.
void concatKernel(const ConcatParams &p, const void *const *inputs, void *out,
                  int numThreads = 1);
/// Outputs that are nullptr (absent) are skipped.
void splitKernel(const ConcatParams &p, const void *in, void *const *outputs,
                 int numThreads = 1);

/// An index outside [-dim, dim) gives a zero row.
void gatherKernel(const GatherParams &p, const void *data, const void *indices,
                  void *out);

/// An index outside [-dim, dim) gives a zero element.
void gatherElementsKernel(const GatherElementsParams &p, const void *data,
                          const void *indices, void *out);

/// A tuple with an entry outside its range gives a zero slice.
void gatherNDKernel(const GatherNDParams &p, const void *data,
                    const void *indices, void *out);

/// A tuple still out of range is skipped (its slice of out keeps data).
/// `out` may be `data`.
void scatterNDKernel(const ScatterNDParams &p, const void *data,
                     const void *indices, const void *updates, void *out);

/// An element whose index is out of range is skipped. `out` may be `data`.
void scatterElementsKernel(const ScatterElementsParams &p, const void *data,
                           const void *indices, const void *updates,
                           void *out);

void triluKernel(const TriluParams &p, const void *in, void *out);

/// Copies the update into the state at `position`, which the caller has
/// checked to lie in [0, length - n]; the state's rows outside are kept
/// (copied first when `out` is not the state's own buffer).
void cacheWriteKernel(const CacheWriteParams &p, const void *state,
                      const void *update, int64_t position, void *out);

/// Fills `numel` elements of `elemSize` bytes with the pattern at `value`.
void fillKernel(size_t elemSize, int64_t numel, const void *value, void *out);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_MOVEMENT_H
