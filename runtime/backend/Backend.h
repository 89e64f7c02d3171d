//===- Backend.h - Engines on the GPU backend -------------------*- C++ -*-===//
//
// The GPU backend's EngineRunner factories (runtime/engine/Runner.h), so
// that the CPU build needs no CUDA header. They open the CUDA backend
// module (CudaModule.h) on first use; in a build without CUDA they fail
// with "this tpc was built without CUDA".
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_BACKEND_BACKEND_H
#define TPC_RUNTIME_BACKEND_BACKEND_H

#include "kernels/Types.h"
#include "runtime/comm/Communicator.h"
#include "runtime/engine/EngineManifest.h"
#include "runtime/engine/Runner.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace tpc::runtime {

enum class Backend { Cpu, Cuda };

/// Parses "cpu" or "cuda".
Status parseBackend(const std::string &text, Backend &out);

struct GpuRunOptions {
  /// Capture the forward into CUDA graphs after the first one, and replay
  /// them.
  bool cudaGraph = true;
  /// Every rank on one GPU, with the on-device communicator.
  bool emulateRanks = false;
  /// The first GPU (rank r uses device + r unless emulated).
  int device = 0;
  /// Wait for each step (eager only), so that a fault names its step.
  bool syncEachStep = false;
  /// Let f32 GEMMs use TF32 tensor cores (off: f32 parity with the CPU).
  bool allowTf32 = false;
  /// How long a forward of several ranks may wait for collectives before
  /// the communicators are aborted.
  std::chrono::milliseconds commTimeout{60000};
};

/// Loads every rank of the engine in `dir` on GPUs.
Status createCudaRunner(const std::string &dir, const GpuRunOptions &options,
                        std::unique_ptr<EngineRunner> &out);

/// A fresh NCCL id (on rank 0 of a multi-process job), as bytes that the
/// caller sends to every rank (over MPI).
Status newNcclId(std::vector<uint8_t> &bytes);

/// Loads rank `rank` of `manifest` on GPU `device`, for one rank per
/// process; with tp > 1 the ranks' NCCL communicators join the job of
/// `ncclId` (rank 0's newNcclId). Communicator set-up comes first, and
/// times out after options.commTimeout if a rank never joins.
Status createCudaRankRunner(const EngineManifest &manifest, int rank,
                            int device, const std::vector<uint8_t> &ncclId,
                            const GpuRunOptions &options,
                            std::unique_ptr<EngineRunner> &out);

} // namespace tpc::runtime

#endif // TPC_RUNTIME_BACKEND_BACKEND_H
