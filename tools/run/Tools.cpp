//===- Tools.cpp - tpc run (in-process) and tpc inspect -------------------===//
#include "tools/run/Tools.h"

#include "runtime/engine/Inspect.h"
#include "runtime/engine/LocalEngine.h"
#include "runtime/engine/Profile.h"
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
  if (text == "inprocess")
    out = CommMode::InProcess;
  else if (text == "mpi")
    out = CommMode::Mpi;
  else
    return Status::error("--comm must be 'inprocess' or 'mpi', got '" + text +
                         "'");
  return Status::ok();
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

int runInProcess(const RunToolOptions &o, std::ostream &out,
                 std::ostream &err) {
  EngineManifest manifest;
  if (Status st = EngineManifest::load(o.engineDir, manifest); !st)
    return toolError(err, st.message());
  std::vector<NamedArray> inputs;
  if (Status st = readInputs(manifest, o, inputs); !st)
    return toolError(err, st.message());
  if (Status st = checkThreads(manifest.tp, o); !st)
    return toolError(err, st.message());

  LocalEngineOptions lo;
  lo.threadsPerRank = o.threadsPerRank;
  lo.commTimeout = std::chrono::seconds(o.commTimeoutSeconds);
  lo.profile = !o.profilePath.empty();
  std::unique_ptr<LocalEngine> engine;
  auto loadStart = std::chrono::steady_clock::now();
  if (Status st = LocalEngine::load(o.engineDir, lo, engine); !st)
    return toolError(err, st.message());
  const double loadMillis = millisSince(loadStart);
  const int tp = engine->tp();
  for (int r = 0; r < tp; ++r)
    if (Status st = setInputs(engine->session(r), inputs); !st)
      return toolError(err, st.message());

  std::vector<std::vector<double>> times(
      size_t(tp), std::vector<double>(size_t(o.iterations), 0.0));
  std::vector<RankRuns> profiles(static_cast<size_t>(tp));
  Status st = engine->forEachRank([&](int r) -> Status {
    Session &session = engine->session(r);
    Communicator *comm = tp > 1 ? engine->communicator(r) : nullptr;
    for (int i = 0; i < o.warmup + o.iterations; ++i) {
      // Start every timed forward together, so that no rank's time includes
      // waiting for a peer that is still finishing the previous one.
      if (comm)
        TPC_RETURN_IF_ERROR(comm->barrier().withContext(
            "rank " + std::to_string(r) + ": "));
      TPC_RETURN_IF_ERROR(session.run());
      if (i >= o.warmup) {
        times[size_t(r)][size_t(i - o.warmup)] = session.lastRunMillis();
        if (lo.profile)
          profiles[size_t(r)].push_back(session.stepTimes());
      }
    }
    return Status::ok();
  });
  if (!st && engine->abandoned()) {
    // A rank's thread is still inside the engine: end the process now
    // rather than wait for it (destroying the engine would pull its memory
    // from under that thread).
    toolError(err, st.message());
    err.flush();
    std::fflush(nullptr);
    std::_Exit(1);
  }
  if (!st)
    return toolError(err, st.message());

  // A forward takes as long as its slowest rank.
  std::vector<double> latency(size_t(o.iterations), 0.0);
  for (int r = 0; r < tp; ++r)
    for (size_t i = 0; i < latency.size(); ++i)
      latency[i] = std::max(latency[i], times[size_t(r)][i]);
  if (Status ws = saveGeneratedInputs(o, inputs); !ws)
    return toolError(err, ws.message());
  if (Status ws = writeOutputs(engine->session(0), o.outputDir,
                               o.json ? nullptr : &out, err);
      !ws)
    return toolError(err, ws.message());
  printLatency(latency, loadMillis, tp, o, out);
  if (lo.profile) {
    std::vector<std::string> events;
    for (int r = 0; r < tp; ++r)
      events.push_back(traceEventsJson(engine->rankEngine(r).plan(), r,
                                       profiles[size_t(r)]));
    if (Status ws = writeChromeTrace(o.profilePath, events); !ws)
      return toolError(err, ws.message());
    printProfileSummary(engine->rankEngine(0).plan(), profiles[0], o, out);
  }
  return 0;
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
    return options.backend == Backend::Cuda ? runGpuTool(options, out, err)
                                            : runInProcess(options, out, err);
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
