//===- CudaRank.h - One rank of an engine on a GPU --------------*- C++ -*-===//
//
// The device state of one rank: its weights copied once from the mapped
// safetensors file, its arena and collective scratch, a cuBLASLt context,
// and every step prepared as a CUDA kernel or a DeviceCollective with its
// device operand addresses. Everything that can fail is done at creation;
// enqueueing a step only launches work on the rank's stream.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_CUDA_CUDARANK_H
#define TPC_RUNTIME_CUDA_CUDARANK_H

#include "kernels/cuda/Registry.h"
#include "runtime/cuda/DeviceCollective.h"
#include "runtime/engine/PreparedStep.h"
#include "runtime/engine/RankEngine.h"

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tpc::runtime {

struct CudaRankOptions {
  size_t gemmWorkspaceBytes = cuda::KernelContext::kDefaultWorkspaceBytes;
  bool allowTf32 = false;
};

/// Memory of the current device (cudaMalloc: 256-byte aligned), zeroed.
struct DeviceMemory {
  static Status acquire(size_t bytes, const std::string &what, uint8_t *&out);
  static void release(uint8_t *data);
};
using DeviceBuffer = OwnedBuffer<DeviceMemory>;

class CudaRank {
public:
  /// Builds rank `engine.rank()` on `device` (made current), with its work
  /// on `stream` (not owned). `engine` must outlive the rank.
  static Status create(RankEngine &engine, int device, cudaStream_t stream,
                       const CudaRankOptions &options,
                       std::unique_ptr<CudaRank> &out);
  ~CudaRank();

  int rank() const { return engine_.rank(); }
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  RankEngine &engine() const { return engine_; }
  size_t numSteps() const { return steps_.size(); }
  bool isCollective(size_t i) const { return !steps_[i].kernel; }
  /// Collective steps of the plan, in order.
  size_t numCollectives() const { return numCollectives_; }
  uint64_t deviceBytes() const {
    uint64_t n = weights_.size() + arena_.size() + scratch_.size();
    for (const auto &[id, st] : states_)
      n += st.size();
    return n;
  }
  /// Zeroes the engine state (KV caches) on the device.
  Status resetState();

  /// Enqueues the kernel steps from `pos` up to the next collective step
  /// or the end; `pos` is left there. With `syncEachStep`, waits for each
  /// step so that a fault is reported by the step that caused it.
  Status enqueueKernels(size_t &pos, bool syncEachStep);

  /// The phases of collective step `i` (see DeviceCollective).
  Status collectiveBefore(size_t i);
  Status collectiveCommunicate(size_t i, Communicator *comm);
  Status collectiveAfter(size_t i);

  /// Device address of plan buffer `id`.
  uint8_t *bufferData(uint32_t id) const { return bufferPtrs_[id]; }

  /// "rank R: step N (Kernel, node '...'): " for messages.
  std::string where(size_t step) const;

  /// After a forward has finished on the stream: the first index out of
  /// range that an index-reading step found, as the CPU reports it
  /// ("indices (input 1) element 3 is 100000, outside [-512, 512)", with the
  /// step); the record is cleared for the next forward.
  Status checkIndices();

private:
  using Step = PreparedStep<cuda::PreparedKernel, DeviceCollective>;

  CudaRank(RankEngine &engine) : engine_(engine) {}
  Status uploadWeights();
  Status prepareSteps();

  RankEngine &engine_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  CudaRankOptions options_;
  std::unique_ptr<cuda::KernelContext> context_;
  DeviceBuffer weights_, arena_, scratch_;
  /// The plan's state buffers (KV caches), zeroed, by buffer id.
  std::map<uint32_t, DeviceBuffer> states_;
  std::vector<uint8_t *> bufferPtrs_;
  std::vector<Step> steps_;
  size_t numCollectives_ = 0;
};

} // namespace tpc::runtime

#endif // TPC_RUNTIME_CUDA_CUDARANK_H
