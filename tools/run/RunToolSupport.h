//===- RunToolSupport.h - Pieces shared by the run modes --------*- C++ -*-===//
//
// Internal to `tpc run`: reading the input files against engine.json, and
// the one loop of forwards with its report, which every backend and
// communicator runs.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_TOOLS_RUN_RUNTOOLSUPPORT_H
#define TPC_TOOLS_RUN_RUNTOOLSUPPORT_H

#include "runtime/engine/Profile.h"
#include "runtime/engine/Runner.h"
#include "runtime/io/Npy.h"
#include "tools/run/Tools.h"

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace tpc::runtime {

struct NamedArray {
  std::string name;
  NpyArray array;
  /// Made by --random-inputs, not read from a file.
  bool generated = false;
};

/// Reads the --input files and checks them against the engine's inputs:
/// every input given exactly once, each with the engine's dtype and shape.
Status readInputs(const EngineManifest &manifest,
                  const RunToolOptions &options,
                  std::vector<NamedArray> &out);

/// With --random-inputs and an output folder: writes the generated inputs
/// to DIR/inputs/<name>.npy, so that the run can be repeated (or checked)
/// on them.
Status saveGeneratedInputs(const RunToolOptions &options,
                           const std::vector<NamedArray> &inputs);

/// Sets every input on `runner`.
Status setInputs(EngineRunner &runner, const std::vector<NamedArray> &inputs);

/// Checks ranks x threads against the cores of this machine.
Status checkThreads(int ranksOnHost, const RunToolOptions &options);

/// Writes the runner's outputs to `dir` (nothing when it is empty). Each
/// file written is listed on `listing` unless it is null; notes go to
/// `err`.
Status writeOutputs(const EngineRunner &runner, const std::string &dir,
                    std::ostream *listing, std::ostream &err);

/// Statistics over per-iteration times in milliseconds (percentiles by the
/// nearest-rank rule; all 0 when there is none).
struct LatencyStats {
  double mean = 0, median = 0, p90 = 0, p99 = 0, min = 0, max = 0;
  /// Forwards per second at the mean latency.
  double throughput = 0;
};
LatencyStats latencyStats(std::vector<double> millis);
/// The statistics as text: "mean 1.234 ms, median ..., 810.4 forwards/s".
std::string formatLatency(const LatencyStats &s);
/// The statistics as a JSON object {mean, median, p90, p99, min, max}.
nlohmann::json latencyJson(const LatencyStats &s);
/// Milliseconds since `start`, for load times.
inline double millisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// The forwards of `tpc run` on a loaded runner whose inputs are set, and
/// their report. Runs options.warmup + options.iterations forwards; under
/// MPI `comm` is the job's communicator and each forward starts after a
/// barrier on it. Then, in process or on rank 0: the outputs, the latency
/// (wall, and device time on a GPU), the load time and, with --profile, the
/// trace of every rank. Returns the exit status.
int runForwards(EngineRunner &runner, Communicator *comm,
                const RunToolOptions &options,
                const std::vector<NamedArray> &inputs, double loadMillis,
                std::ostream &out, std::ostream &err);

/// Prints "tpc run: error: MSG" and returns 1.
int toolError(std::ostream &err, const std::string &msg);
/// The tool toolError() names ("tpc run" unless set).
void setToolName(const char *name);

#ifdef TPC_HAVE_MPI
/// The MPI mode: this process is one rank.
int runMpiTool(const RunToolOptions &options, std::ostream &out,
               std::ostream &err);
#endif

} // namespace tpc::runtime

#endif // TPC_TOOLS_RUN_RUNTOOLSUPPORT_H
