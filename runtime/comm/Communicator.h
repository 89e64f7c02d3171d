//===- Communicator.h - Collectives of tensor-parallel ranks ----*- C++ -*-===//
//
// Every rank of a tensor-parallel engine runs its own plan and exchanges
// activations with its peers through these collectives. All ranks must call
// the same collectives in the same order with matching arguments, like MPI
// and NCCL. Buffers are host memory; the buffers of different ranks must not
// overlap one another.
//
// Implementations: InProcessComm.h (ranks are threads of one process) and
// MpiComm.h (ranks are MPI processes).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_COMM_COMMUNICATOR_H
#define TPC_RUNTIME_COMM_COMMUNICATOR_H

#include "kernels/Types.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tpc {

class Communicator {
public:
  virtual ~Communicator();

  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// Sum-reduces `count` elements of `dtype` (f32, f64, f16, bf16, i32, i64)
  /// across ranks; every rank receives the same bits. `send` may equal `recv`
  /// (in place); otherwise they must not overlap. f16 and bf16 are
  /// accumulated in float where the implementation allows it.
  virtual Status allReduce(const void *send, void *recv, size_t count,
                           DType dtype) = 0;

  /// Each rank contributes `count` elements; `recv` receives size() * count
  /// elements, rank-ordered. In place: `send` may point at this rank's block
  /// of `recv` (recv + rank() * count elements). Any dtype.
  virtual Status allGather(const void *send, void *recv, size_t count,
                           DType dtype) = 0;

  /// Like allGather, but rank r contributes counts[r] elements (shards of a
  /// dimension that does not divide evenly). `counts` must be identical on
  /// every rank and have size() entries; `recv` receives sum(counts) elements
  /// with rank r's block at offset counts[0] + ... + counts[r-1]. In place:
  /// `send` may point at this rank's block of `recv`.
  virtual Status allGatherV(const void *send, void *recv,
                            const std::vector<size_t> &counts, DType dtype) = 0;

  /// Gathers a tensor split along a middle axis: rank r contributes `outer`
  /// rows of counts[r] elements, and `recv` receives `outer` rows of
  /// sum(counts) elements, each the ranks' rows concatenated in rank order.
  /// `counts` and `outer` must be identical on every rank; `send` and `recv`
  /// must not overlap. This default gathers the ranks' blocks contiguously
  /// into `scratch` (outer * sum(counts) elements) with allGatherV and
  /// interleaves them, a second pass over the result; a communicator that
  /// reads its peers' buffers places every row directly and leaves
  /// `scratch` alone.
  virtual Status allGatherRows(const void *send, void *recv, size_t outer,
                               const std::vector<size_t> &counts, DType dtype,
                               void *scratch);

  /// Whether allGatherRows places every row directly and never touches its
  /// `scratch` (which may then be null).
  virtual bool gathersRowsInPlace() const { return false; }

  /// `send` holds size() * count elements; rank r receives in `recv` the sum
  /// over ranks of their r-th block of `count` elements. In place: `recv` may
  /// point at this rank's block of `send` (send + rank() * count elements).
  virtual Status reduceScatter(const void *send, void *recv, size_t count,
                               DType dtype) = 0;

  /// Returns once every rank has entered the barrier.
  virtual Status barrier() = 0;

  /// Makes every pending and future collective on every rank fail promptly
  /// with `reason`. A communicator cannot be used again after an abort.
  virtual void abort(const std::string &reason) = 0;
};

/// Whether collectives can sum-reduce `dtype`.
bool isReducibleDType(DType dtype);

/// dst[i] = a[i] + b[i] for `count` elements of a reducible `dtype`; dst may
/// alias a or b. Integer sums wrap around instead of being undefined on
/// overflow; f16 and bf16 round once per addition.
void addElements(const void *a, const void *b, void *dst, size_t count,
                 DType dtype);

/// Human-readable description of a collective call, for error messages:
/// "allReduce(count=100, f32)".
std::string describeCall(const char *op, size_t count, DType dtype);

} // namespace tpc

#endif // TPC_RUNTIME_COMM_COMMUNICATOR_H
