//===- Collectives.h - The collective steps of a plan -----------*- C++ -*-===//
//
// A plan exchanges activations between ranks with three steps:
//
//   AllReduce      one input, one output of the same shape: the sum over
//                  ranks.
//   AllGather      attribute `axis`; every rank's input is its shard of the
//                  output along `axis`, concatenated in rank order. Shards
//                  may differ in size (a dimension that does not divide by
//                  tp): attribute `sizes` then lists every rank's extent.
//                  An attribute `parts` may name the axis as one part;
//                  several parts (a fused projection) are refused at load.
//   ReduceScatter  attribute `axis` (and `sizes` likewise): the sum over
//                  ranks of the input, of which each rank keeps its shard.
//
// The communicator moves contiguous rank-ordered blocks, so a shard along an
// inner axis goes through a scratch buffer that is packed or unpacked around
// the transfer. Like kernels, collectives are checked and bound to their
// shapes when the engine loads.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_COLLECTIVES_H
#define TPC_RUNTIME_ENGINE_COLLECTIVES_H

#include "runtime/comm/Communicator.h"
#include "runtime/engine/RankPlan.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpc::runtime {

/// Where a collective step's bytes go, as prepare() bound them: all that a
/// backend performing the collective itself needs (see
/// PreparedCollective::run() for how it is used).
struct CollectiveGeometry {
  StepKind kind = StepKind::AllReduce;
  DType dtype = DType::F32;
  size_t elemSize = 4;
  /// This rank, of worldSize.
  int rank = 0, worldSize = 1;
  /// Whether the input and output bytes overlap in the arena.
  bool overlap = false;
  /// Tensor bytes the step moves per forward (the unsharded tensor).
  uint64_t tensorBytes = 0;
  /// AllReduce: elements of the tensor.
  size_t count = 0;
  /// AllGather / ReduceScatter: the full tensor is outer x axisTotal x inner,
  /// and rank r's shard holds sizes[r] of axisTotal from starts[r].
  size_t outer = 1, inner = 1, axisTotal = 0;
  std::vector<int64_t> sizes, starts;
  bool equalShards = true;
};

class PreparedCollective {
public:
  /// Checks the operand descriptions and attributes of collective `step` on
  /// rank `rank` of `worldSize`. `overlap` says whether the input and output
  /// bytes overlap in the arena (they are then staged through scratch
  /// memory, except for an exactly in-place AllReduce).
  static Status prepare(const PlanStep &step, const TensorDesc &in,
                        const TensorDesc &out, bool overlap, int rank,
                        int worldSize, PreparedCollective &result);

  /// Scratch bytes run() needs. With `rowsInPlace` (a communicator that
  /// gathers rows in place, Communicator::gathersRowsInPlace), an AllGather
  /// along a middle axis needs none for the gathered blocks.
  size_t scratchBytes(bool rowsInPlace = false) const {
    return scratchBytes_ - (rowsInPlace ? rowsScratchBytes_ : 0);
  }
  const CollectiveGeometry &geometry() const { return geometry_; }

  /// Performs the collective. `comm` may be null only for a world of one
  /// rank. `scratch` holds at least scratchBytes().
  Status run(Communicator *comm, const void *in, void *out,
             void *scratch) const;

private:
  Status runAllReduce(Communicator *comm, const void *in, void *out) const;
  Status runAllGather(Communicator *comm, const void *in, void *out,
                      uint8_t *scratch) const;
  Status runReduceScatter(Communicator *comm, const void *in, void *out,
                          uint8_t *scratch) const;

  CollectiveGeometry geometry_;
  size_t scratchBytes_ = 0;
  /// The part of scratchBytes_ that holds the gathered blocks of an
  /// AllGather along a middle axis.
  size_t rowsScratchBytes_ = 0;
};

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_COLLECTIVES_H
