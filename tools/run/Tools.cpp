//===- Tools.cpp - tpc run (in-process) and tpc inspect -------------------===//
#include "tools/run/Tools.h"

#include "runtime/engine/CpuRunner.h"
#include "runtime/engine/Inspect.h"
#include "runtime/support/ParseChoice.h"
#include "tools/run/RunToolSupport.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace tpc::runtime {

Status parseInputSpec(const std::string &spec, std::string &name,
                      std::string &file) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    return Status::error("malformed --input '" + spec +
                         "' (expected NAME=FILE.npy)");
  name = spec.substr(0, eq);
  file = spec.substr(eq + 1);
  return Status::ok();
}

Status parseCommMode(const std::string &text, CommMode &out) {
  return parseChoice(
      "--comm", text,
      {{"inprocess", CommMode::InProcess}, {"mpi", CommMode::Mpi}}, out);
}

Status parseIntFlag(const std::string &flag, const std::string &text,
                    int minValue, int maxValue, int &out) {
  errno = 0;
  char *end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < minValue ||
      v > maxValue)
    return Status::error(flag + " must be an integer between " +
                         std::to_string(minValue) + " and " +
                         std::to_string(maxValue) + ", got '" + text + "'");
  out = int(v);
  return Status::ok();
}

std::string outputFileName(const std::string &name) {
  std::string s = name.empty() ? "_" : name;
  for (char &c : s)
    if (c == '/' || c == '\0' || c == '\\')
      c = '_';
  // No hidden files, and never "." or "..".
  if (s[0] == '.')
    s[0] = '_';
  return s;
}

bool launchedByMpi() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK",
                          "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (const char *v = std::getenv(var); v && *v)
      return true;
  return false;
}

namespace {

Status checkOptions(const RunToolOptions &o) {
  if (o.engineDir.empty())
    return Status::error("no engine folder given");
  if (o.threadsPerRank < 1)
    return Status::error("--threads must be at least 1");
  if (o.iterations < 1)
    return Status::error("--iterations must be at least 1");
  if (o.warmup < 0)
    return Status::error("--warmup must not be negative");
  if (o.backend == Backend::Cpu && o.gpu.emulateRanks)
    return Status::error("--emulate-ranks needs --backend cuda");
  if (o.backend == Backend::Cpu && o.gpu.syncEachStep)
    return Status::error("--sync-steps needs --backend cuda");
  if (o.backend == Backend::Cuda && !o.profilePath.empty())
    return Status::error("--profile times CPU steps; with --backend cuda use "
                         "Nsight Systems (nsys profile tpc run ...)");
  return Status::ok();
}

/// Every rank in this process: threads on the CPU, or this process's GPUs.
int runLocal(const RunToolOptions &o, std::ostream &out, std::ostream &err) {
  EngineManifest manifest;
  if (Status st = EngineManifest::load(o.engineDir, manifest); !st)
    return toolError(err, st.message());
  std::vector<NamedArray> inputs;
  if (Status st = readInputs(manifest, o, inputs); !st)
    return toolError(err, st.message());
  std::unique_ptr<EngineRunner> runner;
  auto loadStart = std::chrono::steady_clock::now();
  if (o.backend == Backend::Cpu) {
    if (Status st = checkThreads(manifest.tp, o); !st)
      return toolError(err, st.message());
    CpuRunOptions co;
    co.numThreads = o.threadsPerRank;
    co.profile = !o.profilePath.empty();
    co.alignStarts = true;
    co.commTimeout = std::chrono::seconds(o.commTimeoutSeconds);
    if (Status st = createCpuRunner(o.engineDir, co, runner); !st)
      return toolError(err, st.message());
  } else {
    if (o.gpu.emulateRanks && manifest.tp == 1)
      err << "tpc run: note: --emulate-ranks has no effect on an engine with "
             "tp 1\n";
    if (Status st = createCudaRunner(o.engineDir, o.gpu, runner); !st)
      return toolError(err, st.message());
  }
  const double loadMillis = millisSince(loadStart);
  if (Status st = setInputs(*runner, inputs); !st)
    return toolError(err, st.message());
  return runForwards(*runner, nullptr, o, inputs, loadMillis, out, err);
}

} // namespace

/// torchrun (and torch.distributed.launch) start WORLD_SIZE processes with
/// RANK and WORLD_SIZE set. tpc's ranks are threads of one process or MPI
/// processes, so each of those processes would run the whole engine:
/// refuse, saying how to launch instead.
Status checkTorchrunLaunch() {
  const char *world = std::getenv("WORLD_SIZE");
  const char *rank = std::getenv("RANK");
  if (!world || !rank || launchedByMpi())
    return Status::ok();
  char *end = nullptr;
  long w = std::strtol(world, &end, 10);
  if (*end != '\0' || w <= 1)
    return Status::ok();
  return Status::error(
      std::string("this process looks started by torchrun (RANK=") + rank +
      ", WORLD_SIZE=" + world +
      "), which would make each of its processes run the whole engine; tpc's "
      "ranks are threads of one process or MPI processes: run `tpc run "
      "ENGINE` once (every rank in this process) or `mpirun -np TP tpc run "
      "ENGINE` (one rank per process)");
}

int runTool(const RunToolOptions &options, std::ostream &out,
            std::ostream &err) {
  if (Status st = checkOptions(options); !st)
    return toolError(err, st.message());
  if (Status st = checkTorchrunLaunch(); !st)
    return toolError(err, st.message());
  CommMode mode = options.comm;
  if (mode == CommMode::Auto)
    mode = launchedByMpi() ? CommMode::Mpi : CommMode::InProcess;
  if (mode == CommMode::InProcess)
    return runLocal(options, out, err);
#ifdef TPC_HAVE_MPI
  return runMpiTool(options, out, err);
#else
  return toolError(err, "this tpc was built without MPI; run with --comm "
                        "inprocess (ranks as threads of one process)");
#endif
}

#ifndef TPC_HAVE_MPI
int generateUnderMpi(const GenerateToolOptions &,
                     const std::function<void(const GenerateResult &, double)> &,
                     std::ostream &err) {
  return toolError(err, "this tpc was built without MPI; run tpc generate "
                        "without mpirun (every rank in this process)");
}
#endif

int inspectTool(const std::string &engineDir, bool json, bool verifyWeights,
                std::ostream &out, std::ostream &err) {
  EngineSummary summary;
  if (Status st = inspectEngine(engineDir, summary, verifyWeights); !st) {
    err << "tpc inspect: error: " << st.message() << "\n";
    return 1;
  }
  out << (json ? formatSummaryJson(summary) + "\n"
               : formatSummaryText(summary));
  out.flush();
  return 0;
}

} // namespace tpc::runtime
