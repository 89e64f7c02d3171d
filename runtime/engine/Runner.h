//===- Runner.h - The ranks of an engine that this process runs -*- C++ -*-===//
//
// One interface over every way tpc runs an engine: the CPU or a GPU backend,
// every rank in this process or one rank per process (MPI). `tpc run`,
// `tpc generate` and the Python API drive an EngineRunner and nothing else,
// so one loop serves every (backend x communicator) pair. The CPU runners
// are made by CpuRunner.h, the GPU ones by runtime/backend/Backend.h.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_RUNNER_H
#define TPC_RUNTIME_ENGINE_RUNNER_H

#include "kernels/Types.h"

#include <string>
#include <vector>

namespace tpc::runtime {

struct RankPlan;
struct StepTime;

/// The step times of one rank's last forward (profiled CPU runs).
struct RankStepTimes {
  /// The rank in the engine.
  int rank = 0;
  const RankPlan *plan = nullptr;
  const std::vector<StepTime> *steps = nullptr;
};

class EngineRunner {
public:
  virtual ~EngineRunner() = default;
  /// The engine's tensor-parallel degree (not only the ranks run here).
  virtual int tp() const = 0;
  /// Sets graph input `name` on every rank run here; `data` (host memory)
  /// stays valid until run() returns.
  virtual Status setInput(const std::string &name, const TensorDesc &desc,
                          const void *data) = 0;
  /// One forward of every rank run here.
  virtual Status run() = 0;
  /// Zeroes the engine state (a decode engine's KV caches): a new sequence
  /// starts.
  virtual Status resetState() = 0;
  /// Wall time of the last run(), in ms: for several ranks, the slowest.
  virtual double lastRunMillis() const = 0;
  /// Device time of the last forward, in ms; the wall time on the CPU.
  virtual double lastDeviceMillis() const { return lastRunMillis(); }
  /// Graph output `name` of the last run (the lowest local rank's), in host
  /// memory that holds it until the next run starts (copy it to keep it);
  /// nullptr data before a run and after a failed one. False if there is no
  /// such output.
  virtual bool output(const std::string &name, TensorDesc &desc,
                      const void *&data) const = 0;
  virtual std::vector<std::string> outputNames() const = 0;
  /// Per rank run here, the times of every step of the last run; empty
  /// unless the runner was made to profile.
  virtual std::vector<RankStepTimes> lastStepTimes() const { return {}; }
  /// Whether a failed run left a rank stuck on a thread that still uses the
  /// engine: the runner must then be neither run nor destroyed, and the
  /// process should end.
  virtual bool abandoned() const { return false; }
  /// Notes worth showing the user (a fallback taken).
  virtual std::vector<std::string> notes() const { return {}; }
  /// The devices and the communicator, for reports.
  virtual std::string describe() const = 0;
};

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_RUNNER_H
