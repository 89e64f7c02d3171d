//===- Tools.h - The runtime's command-line tools ---------------*- C++ -*-===//
//
// What `tpc run` and `tpc inspect` do, as library functions that take their
// options already parsed and write to the streams given, so that tests can
// drive them without a process. The tpc driver only maps flags onto these
// options.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_TOOLS_RUN_TOOLS_H
#define TPC_TOOLS_RUN_TOOLS_H

#include "kernels/Types.h"
#include "runtime/backend/Backend.h"
#include "runtime/engine/Generate.h"

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace tpc::runtime {

enum class CommMode {
  /// MPI when the process was started by mpirun (OMPI_COMM_WORLD_SIZE, PMI
  /// or PMIx variables), in-process otherwise.
  Auto,
  /// Every rank a thread of this process.
  InProcess,
  /// This process is one rank of an MPI job.
  Mpi,
};

struct RunToolOptions {
  std::string engineDir;
  /// (input name, .npy path) pairs.
  std::vector<std::pair<std::string, std::string>> inputs;
  /// .npz archives, each holding inputs by name (numpy.savez).
  std::vector<std::string> inputArchives;
  /// Where rank 0's outputs are written as <name>.npy; nothing is written
  /// when empty.
  std::string outputDir;
  int threadsPerRank = 1;
  int warmup = 0;
  int iterations = 1;
  bool json = false;
  CommMode comm = CommMode::Auto;
  /// How long a rank waits for its peers in a collective before the run
  /// fails (in process and under MPI).
  int commTimeoutSeconds = 60;
  /// Under MPI, check before every collective that all ranks make the same
  /// call (one small extra all-reduce each).
  bool checkCollectives = true;
  /// Where to write a Chrome trace of every step of every rank over the
  /// timed runs ("" for none); a table of the slowest steps is printed.
  std::string profilePath;
  /// Allow ranks x threads to exceed the cores this process may use.
  bool oversubscribe = false;
  /// Inputs without an --input file are generated: integer ids uniform
  /// below the table they index (engine.json's options.input_bounds), other
  /// integers 1, floats standard normal, booleans true; from `seed`.
  bool randomInputs = false;
  uint64_t seed = 0;
  /// Where the kernels run; the GPU options apply to Backend::Cuda.
  Backend backend = Backend::Cpu;
  GpuRunOptions gpu;
};

/// `tpc run`: loads the engine, runs warmup + iterations forwards, writes the
/// outputs and prints the latency. Errors are one line on `err`, "tpc run:
/// error: ...". Returns the exit status.
int runTool(const RunToolOptions &options, std::ostream &out,
            std::ostream &err);

/// `tpc inspect`. Returns the exit status.
int inspectTool(const std::string &engineDir, bool json, bool verifyWeights,
                std::ostream &out, std::ostream &err);

/// Splits "NAME=FILE.npy".
Status parseInputSpec(const std::string &spec, std::string &name,
                      std::string &file);
/// Parses "inprocess" or "mpi".
Status parseCommMode(const std::string &text, CommMode &out);
/// Parses a decimal integer in [minValue, maxValue]; `flag` names it in the
/// message.
Status parseIntFlag(const std::string &flag, const std::string &text,
                    int minValue, int maxValue, int &out);

struct GenerateToolOptions {
  std::string engineDir;
  std::vector<int64_t> prompt;
  GenerateOptions generate;
  int threadsPerRank = 1;
  int commTimeoutSeconds = 60;
  Backend backend = Backend::Cpu;
  GpuRunOptions gpu;
};

/// tpc generate under mpirun: this process runs its rank's engine and the
/// generation loop; every rank feeds rank 0's token. On rank 0 `report` is
/// called with the result. Returns the process's exit status (setup errors
/// are agreed on, so every rank exits 1 and one prints).
int generateUnderMpi(const GenerateToolOptions &options,
                     const std::function<void(const GenerateResult &,
                                              double loadMillis)> &report,
                     std::ostream &err);

/// Whether this process was started by mpirun (Open MPI, MPICH, PMIx).
bool launchedByMpi();
/// Refuses a launch by torchrun, which would run the whole engine in each
/// of its processes, saying how to launch instead.
Status checkTorchrunLaunch();
/// The output file name for graph output `name`: characters that cannot
/// appear in a file name ('/', NUL, leading dots) become '_'.
std::string outputFileName(const std::string &name);

} // namespace tpc::runtime

#endif // TPC_TOOLS_RUN_TOOLS_H
