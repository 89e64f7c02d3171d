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

class PreparedCollective {
public:
  /// Checks the operand descriptions and attributes of collective `step` on
  /// rank `rank` of `worldSize`. `overlap` says whether the input and output
  /// bytes overlap in the arena (they are then staged through scratch
  /// memory, except for an exactly in-place AllReduce).
  static Status prepare(const PlanStep &step, const TensorDesc &in,
                        const TensorDesc &out, bool overlap, int rank,
                        int worldSize, PreparedCollective &result);

  /// Scratch bytes run() needs.
  size_t scratchBytes() const { return scratchBytes_; }
  /// Tensor bytes the step moves per forward (the unsharded tensor), for
  /// reports.
  uint64_t tensorBytes() const { return tensorBytes_; }

  /// The bound geometry, for backends that perform the collective
  /// themselves (see run() for how it is used).
  StepKind kind() const { return kind_; }
  DType dtype() const { return dtype_; }
  size_t elemSize() const { return elemSize_; }
  int rank() const { return rank_; }
  int worldSize() const { return worldSize_; }
  bool overlap() const { return overlap_; }
  size_t count() const { return count_; }
  size_t outer() const { return outer_; }
  size_t inner() const { return inner_; }
  size_t axisTotal() const { return axisTotal_; }
  const std::vector<int64_t> &sizes() const { return sizes_; }
  const std::vector<int64_t> &starts() const { return starts_; }
  bool equalShards() const { return equalShards_; }

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
  /// Element offset of rank r's shard along the axis.
  size_t shardStart(int r) const { return size_t(starts_[size_t(r)]); }

  StepKind kind_ = StepKind::AllReduce;
  DType dtype_ = DType::F32;
  size_t elemSize_ = 4;
  int rank_ = 0;
  int worldSize_ = 1;
  bool overlap_ = false;
  /// AllReduce: elements of the tensor.
  size_t count_ = 0;
  /// AllGather / ReduceScatter: the full tensor is outer x axisTotal x inner.
  size_t outer_ = 1, inner_ = 1, axisTotal_ = 0;
  std::vector<int64_t> sizes_, starts_;
  bool equalShards_ = true;
  size_t scratchBytes_ = 0;
  uint64_t tensorBytes_ = 0;
};

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_COLLECTIVES_H
