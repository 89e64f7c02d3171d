//===- CpuRunner.h - Engines on the CPU behind EngineRunner -----*- C++ -*-===//
//
// The CPU backend's runners: every rank of an engine in this process (ranks
// on threads, an in-process communicator), or one rank of it with the
// caller's communicator (MPI, one rank per process).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_CPURUNNER_H
#define TPC_RUNTIME_ENGINE_CPURUNNER_H

#include "runtime/comm/Communicator.h"
#include "runtime/engine/EngineManifest.h"
#include "runtime/engine/LocalEngine.h"
#include "runtime/engine/Runner.h"

#include <memory>

namespace tpc::runtime {

/// The options of every rank in this process (numThreads: kernel threads
/// per rank; profile: EngineRunner::lastStepTimes()). Under MPI only the
/// Session's apply: the communicator has its own timeout.
struct CpuRunOptions : LocalEngineOptions {
  /// Start the ranks' forwards together (a barrier first), so that a
  /// timed forward does not include waiting for a peer still finishing the
  /// previous one. Costs one barrier per forward; off for decoding.
  bool alignStarts = false;
};

/// Loads every rank of the engine in `dir` in this process.
Status createCpuRunner(const std::string &dir, const CpuRunOptions &options,
                       std::unique_ptr<EngineRunner> &out);

/// Loads rank comm.rank() of `manifest`; `comm` (of the engine's world
/// size) must outlive the runner.
Status createCpuRankRunner(const EngineManifest &manifest, Communicator &comm,
                           const CpuRunOptions &options,
                           std::unique_ptr<EngineRunner> &out);

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_CPURUNNER_H
