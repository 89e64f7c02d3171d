//===- DeviceCollective.h - A plan's collective step on a GPU ---*- C++ -*-===//
//
// The device twin of PreparedCollective::run(), split in three phases so
// that one thread can drive several ranks: before() packs (or stages) on the
// rank's stream, communicate() makes the rank's communicator call (inside
// the group's round), after() unpacks. Packing moves rank-ordered blocks
// with 2-D device copies; nothing is allocated or synchronised.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_CUDA_DEVICECOLLECTIVE_H
#define TPC_RUNTIME_CUDA_DEVICECOLLECTIVE_H

#include "runtime/engine/Collectives.h"

#include <cuda_runtime_api.h>

namespace tpc::runtime {

class DeviceCollective {
public:
  /// Binds to the geometry that the loader validated.
  void init(const PreparedCollective &host);

  /// Device scratch bytes the phases need.
  size_t scratchBytes() const { return scratchBytes_; }

  Status before(const void *in, void *out, void *scratch,
                cudaStream_t stream) const;
  /// Nothing to do for a world of one (before() copied).
  Status communicate(Communicator *comm, const void *in, void *out,
                     void *scratch) const;
  Status after(const void *in, void *out, void *scratch,
               cudaStream_t stream) const;

private:
  const PreparedCollective *host_ = nullptr;
  size_t scratchBytes_ = 0;
  /// AllReduce with partly overlapping operands: stage the input.
  bool stageAllReduce_ = false;
};

} // namespace tpc::runtime

#endif // TPC_RUNTIME_CUDA_DEVICECOLLECTIVE_H
