//===- EmulatedComm.h - Ranks emulated on one GPU ---------------*- C++ -*-===//
//
// `tpc run --emulate-ranks`: every rank of an engine on one GPU and one
// stream. Each rank's call only records its buffers; endRound() checks that
// the ranks agree and enqueues the whole collective: a kernel that sums the
// ranks' buffers element by element in rank order (so every rank receives
// the same bits) for AllReduce and ReduceScatter, device copies for
// AllGather. No host synchronisation is involved, so a forward of every rank
// captures into one CUDA graph.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_CUDA_EMULATEDCOMM_H
#define TPC_RUNTIME_CUDA_EMULATEDCOMM_H

#include "runtime/comm/DeviceComm.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

namespace tpc {

class EmulatedGroup final : public DeviceCommGroup {
public:
  /// Most ranks one group emulates (the sum kernel's operand limit).
  static constexpr int kMaxRanks = 16;

  /// A group of `size` ranks whose collectives go on `stream` (not owned).
  static Status create(int size, cudaStream_t stream,
                       std::unique_ptr<EmulatedGroup> &out);
  ~EmulatedGroup() override;

  int localRanks() const override { return int(comms_.size()); }
  Communicator &comm(int index) override { return *comms_[size_t(index)]; }
  Status beginRound() override;
  Status endRound() override;
  Status poll() override;
  void abort(const std::string &reason) override;
  std::string describe() const override {
    return "on-device (" + std::to_string(comms_.size()) +
           " ranks emulated on one GPU)";
  }

  enum class Op { None, AllReduce, AllGather, AllGatherV, ReduceScatter,
                  Barrier };
  /// One rank's call in the current round.
  struct Call {
    Op op = Op::None;
    const void *send = nullptr;
    void *recv = nullptr;
    size_t count = 0;
    std::vector<size_t> counts;
    DType dtype = DType::F32;
  };
  /// Records rank `rank`'s call (used by the group's communicators).
  Status record(int rank, Call call);

private:
  EmulatedGroup() = default;
  Status launch();

  cudaStream_t stream_ = nullptr;
  std::vector<std::unique_ptr<Communicator>> comms_;
  std::vector<Call> calls_;
  bool inRound_ = false;
  bool aborted_ = false;
  std::string abortReason_;
};

} // namespace tpc

#endif // TPC_RUNTIME_CUDA_EMULATEDCOMM_H
