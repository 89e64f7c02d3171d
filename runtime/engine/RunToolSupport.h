//===- RunToolSupport.h - Pieces shared by the run modes --------*- C++ -*-===//
//
// Internal to `tpc run`: reading the input files against engine.json,
// writing outputs and reporting latency, used by both the in-process and
// the MPI mode.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_RUNTOOLSUPPORT_H
#define TPC_RUNTIME_ENGINE_RUNTOOLSUPPORT_H

#include "runtime/engine/Session.h"
#include "runtime/engine/Tools.h"
#include "runtime/io/Npy.h"

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace tpc::runtime {

struct NamedArray {
  std::string name;
  NpyArray array;
};

/// Reads the --input files and checks them against the engine's inputs:
/// every input given exactly once, each with the engine's dtype and shape.
Status readInputs(const EngineManifest &manifest,
                  const RunToolOptions &options,
                  std::vector<NamedArray> &out);

/// Sets every input on `session`.
Status setInputs(Session &session, const std::vector<NamedArray> &inputs);

/// Checks ranks x threads against the cores of this machine.
Status checkThreads(int ranksOnHost, const RunToolOptions &options);

/// Writes the session's outputs to `dir` (nothing when it is empty). Each
/// file written is listed on `listing` unless it is null; notes go to
/// `err`.
Status writeOutputs(const Session &session, const std::string &dir,
                    std::ostream *listing, std::ostream &err);

/// Looks up a graph output: its description and host data.
using OutputLookup =
    std::function<bool(const std::string &, TensorDesc &, const void *&)>;

/// writeOutputs for outputs that do not come from a Session (a GPU
/// backend's runner).
Status writeOutputs(const std::vector<std::string> &names,
                    const OutputLookup &lookup, const std::string &dir,
                    std::ostream *listing, std::ostream &err);

/// Prints the latency over `millis` (one entry per timed iteration): as one
/// JSON object with options.json, as text otherwise.
void printLatency(const std::vector<double> &millis, int tp,
                  const RunToolOptions &options, std::ostream &out);

/// Prints "tpc run: error: MSG" and returns 1.
int toolError(std::ostream &err, const std::string &msg);

/// `tpc run --backend cuda` with every rank in this process.
int runGpuTool(const RunToolOptions &options, std::ostream &out,
               std::ostream &err);

#ifdef TPC_HAVE_MPI
/// The MPI mode: this process is one rank.
int runMpiTool(const RunToolOptions &options, std::ostream &out,
               std::ostream &err);
#endif

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_RUNTOOLSUPPORT_H
