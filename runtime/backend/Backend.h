//===- Backend.h - Running engines on a backend other than the CPU -*- C++ -*-===//
//
// `tpc run --backend cuda` goes through this interface, so that the CPU
// build needs no CUDA header. The factories below open the CUDA backend
// module (CudaModule.h) on first use; in a build without CUDA they fail
// with "this tpc was built without CUDA".
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_BACKEND_BACKEND_H
#define TPC_RUNTIME_BACKEND_BACKEND_H

#include "kernels/Types.h"
#include "runtime/comm/Communicator.h"
#include "runtime/engine/EngineManifest.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace tpc::runtime {

enum class Backend { Cpu, Cuda };

/// Parses "cpu" or "cuda".
Status parseBackend(const std::string &text, Backend &out);

struct GpuRunOptions {
  /// Replay the forward as CUDA graphs after the first one.
  bool cudaGraph = true;
  /// Every rank on one GPU, with the on-device communicator.
  bool emulateRanks = false;
  /// The first GPU (rank r uses device + r unless emulated).
  int device = 0;
  /// Synchronise after every step so that a fault names its step.
  bool syncEachStep = false;
  /// Let f32 GEMMs use TF32 tensor cores.
  bool allowTf32 = false;
  std::chrono::milliseconds commTimeout{60000};
};

/// The ranks of an engine that this process runs on a GPU backend.
class BackendRunner {
public:
  virtual ~BackendRunner() = default;
  virtual int tp() const = 0;
  /// Sets an input of every local rank; `data` stays valid until run()
  /// returns.
  virtual Status setInput(const std::string &name, const TensorDesc &desc,
                          const void *data) = 0;
  /// One forward of every local rank.
  virtual Status run() = 0;
  /// Wall time of the last run() and device time of its forward, in ms.
  virtual double lastRunMillis() const = 0;
  virtual double lastDeviceMillis() const = 0;
  /// Graph output `name` of the last run, in host memory.
  virtual bool output(const std::string &name, TensorDesc &desc,
                      const void *&data) const = 0;
  virtual std::vector<std::string> outputNames() const = 0;
  /// Notes worth showing the user (a fallback taken).
  virtual std::vector<std::string> notes() const = 0;
  /// The devices and the communicator, for reports.
  virtual std::string describe() const = 0;
};

/// Loads every rank of the engine in `dir` on GPUs.
Status createCudaRunner(const std::string &dir, const GpuRunOptions &options,
                        std::unique_ptr<BackendRunner> &out);

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
                            std::unique_ptr<BackendRunner> &out);

} // namespace tpc::runtime

#endif // TPC_RUNTIME_BACKEND_BACKEND_H
