//===- CudaEngine.h - Running an engine's ranks on GPUs ---------*- C++ -*-===//
//
// Every rank that this process runs, on GPUs, driven by one host thread in
// lockstep: each rank's kernels up to its next collective are enqueued on
// its stream, then the collective's packing, the ranks' communicator calls
// (one round of the DeviceCommGroup) and the unpacking, and so on. A forward
// is thus one stream per rank with no host synchronisation until its end;
// after a first eager forward (which reports any launch error by step) the
// second is captured into CUDA graphs, one per stream, and later forwards
// replay them. Inputs are staged through pinned host buffers and copied
// in, rank 0's outputs copied out, inside the graph.
//
// Layouts: every rank on its own GPU (NCCL, ncclCommInitAll), every rank on
// one GPU and one stream (emulateRanks: the on-device communicator), or the
// one rank of this process of a multi-process job (loadRank with a group,
// NCCL over MPI).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_CUDA_CUDAENGINE_H
#define TPC_RUNTIME_CUDA_CUDAENGINE_H

#include "runtime/backend/Backend.h"
#include "runtime/comm/DeviceComm.h"
#include "runtime/cuda/CudaRank.h"
#include "runtime/engine/GraphIo.h"

#include <memory>
#include <string>
#include <vector>

namespace tpc::runtime {

/// The run options of Backend.h (`device` is the first GPU: rank r runs on
/// device + r, or on device when emulated) and what only the engine sets.
struct CudaEngineOptions : GpuRunOptions {
  size_t gemmWorkspaceBytes = cuda::KernelContext::kDefaultWorkspaceBytes;
};

class CudaEngine {
public:
  /// "no CUDA device: ..." when there is none; otherwise the count.
  static Status deviceCount(int &count);

  /// Loads every rank of the engine in `dir`.
  static Status load(const std::string &dir, const CudaEngineOptions &options,
                     std::unique_ptr<CudaEngine> &out);

  /// Loads rank `rank` only, on `device`, with `group` holding its
  /// communicator (null for tp 1); for one rank per process.
  /// `makeGroup(stream, group)` is called once the rank's stream exists.
  using GroupFactory = Status (*)(void *ctx, cudaStream_t stream,
                                  std::unique_ptr<DeviceCommGroup> &group);
  static Status loadRank(const EngineManifest &manifest, int rank, int device,
                         const CudaEngineOptions &options,
                         GroupFactory makeGroup, void *ctx,
                         std::unique_ptr<CudaEngine> &out);

  ~CudaEngine();
  CudaEngine(const CudaEngine &) = delete;
  CudaEngine &operator=(const CudaEngine &) = delete;

  const EngineManifest &manifest() const { return manifest_; }
  /// Ranks of the engine (tp) and ranks run by this process.
  int tp() const { return manifest_.tp; }
  int localRanks() const { return int(ranks_.size()); }

  /// Sets graph input `name` for every local rank; `data` (host memory)
  /// must stay valid until run() returns.
  Status setInput(const std::string &name, const TensorDesc &desc,
                  const void *data);
  /// One forward of every local rank.
  Status run();
  /// Zeroes every local rank's engine state (a decode engine's KV caches).
  Status resetState();

  /// Graph output `name` of the last run (the first local rank's), in host
  /// memory; nullptr data before a run. False if there is no such output.
  bool output(const std::string &name, TensorDesc &desc,
              const void *&data) const {
    return io_.output(name, desc, data);
  }
  std::vector<std::string> outputNames() const { return io_.outputNames(); }

  /// Wall time of the last run() and GPU time of its forward (the slowest
  /// rank's, between events on the streams), in milliseconds.
  double lastRunMillis() const { return lastRunMillis_; }
  double lastGpuMillis() const { return lastGpuMillis_; }
  /// Whether forwards now replay CUDA graphs.
  bool graphActive() const { return !graphs_.empty(); }
  /// Notes for the user (a graph capture that fell back to eager runs).
  const std::vector<std::string> &notes() const { return notes_; }
  /// "NVIDIA H200 (device 0)", the communicator, for reports.
  std::string describe() const;

private:
  CudaEngine() = default;
  Status createStreams(const std::vector<int> &devices);
  Status finishLoad();
  Status enqueueForward();
  Status capture();
  Status launchGraphs();
  Status waitForward();
  Status fail(const Status &st);

  EngineManifest manifest_;
  CudaEngineOptions options_;
  std::vector<std::unique_ptr<RankEngine>> hostEngines_;
  /// One stream per distinct device used (ranks on one device share it).
  std::vector<cudaStream_t> streams_;
  std::vector<int> streamDevices_;
  std::vector<cudaEvent_t> startEvents_, stopEvents_;
  std::unique_ptr<DeviceCommGroup> group_;
  std::vector<std::unique_ptr<CudaRank>> ranks_;
  GraphIo io_;
  /// Pinned host staging of each input and output (io_'s order), nullptr
  /// for an empty one.
  std::vector<void *> inputPinned_, outputPinned_;
  std::vector<cudaGraph_t> graphGraphs_;
  std::vector<cudaGraphExec_t> graphs_;
  int forwards_ = 0;
  bool graphFailed_ = false;
  bool broken_ = false;
  std::vector<std::string> notes_;
  double lastRunMillis_ = 0, lastGpuMillis_ = 0;
};

} // namespace tpc::runtime

#endif // TPC_RUNTIME_CUDA_CUDAENGINE_H
