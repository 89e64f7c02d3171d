//===- RunMpi.cpp - tpc run under mpirun ----------------------------------===//
//
// Each MPI process runs one rank. Setup failures (a bad engine, a wrong
// input, a world size that is not tp) are agreed on collectively, so every
// process exits with status 1 and only one prints the error. A failure
// during a forward aborts the MPI job from the failing rank.
//
//===----------------------------------------------------------------------===//
#include "base/Cores.h"
#include "runtime/comm/MpiComm.h"
#include "runtime/engine/Generate.h"
#include "tools/run/RunToolSupport.h"
#include "tools/run/Tools.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <unistd.h>

namespace tpc::runtime {

namespace {

/// MPI processes on this host that share this process's cores. A launcher
/// that binds each process to its own cores (OpenMPI does by default) has
/// already split them: then only this process's threads count.
int ranksSharingCores() {
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0 && usableCores() < online)
    return 1;
  for (const char *var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char *v = std::getenv(var); v && std::atoi(v) > 0)
      return std::atoi(v);
  return 1;
}

/// mpirun must start one process per rank of the engine.
Status checkWorldSize(const Communicator &comm, const EngineManifest &m) {
  if (comm.size() == m.tp)
    return Status::ok();
  return Status::error("mpirun started " + std::to_string(comm.size()) +
                       " process(es), but the engine has tp " +
                       std::to_string(m.tp) + ": run it with -np " +
                       std::to_string(m.tp));
}

/// Initialises MPI, runs `fn` on the world communicator and finalises
/// MPI; `fn`'s exit status, or 1 when MPI fails.
int withMpiWorld(const MpiOptions &mo,
                 const std::function<int(Communicator &)> &fn,
                 std::ostream &err) {
  if (Status st = initMpi(nullptr, nullptr); !st)
    return toolError(err, st.message());
  int result = 1;
  {
    std::unique_ptr<MpiCommunicator> comm;
    if (Status st = MpiCommunicator::createWorld(comm, mo); !st)
      result = toolError(err, st.message());
    else
      result = fn(*comm);
  }
  if (Status st = finalizeMpi(); !st && result == 0)
    result = toolError(err, st.message());
  return result;
}

struct RankState {
  EngineManifest manifest;
  std::vector<NamedArray> inputs;
  std::unique_ptr<RankEngine> engine;
  std::unique_ptr<Session> session;
};

Status setUp(const RunToolOptions &o, Communicator &comm, RankState &s) {
  TPC_RETURN_IF_ERROR(
      EngineManifest::load(o.engineDir, s.manifest, /*holdFolder=*/true));
  FolderRelease release(s.manifest);
  TPC_RETURN_IF_ERROR(checkWorldSize(comm, s.manifest));
  TPC_RETURN_IF_ERROR(readInputs(s.manifest, o, s.inputs));
  TPC_RETURN_IF_ERROR(checkThreads(ranksSharingCores(), o));
  TPC_RETURN_IF_ERROR(RankEngine::load(s.manifest, comm.rank(), s.engine));
  SessionOptions so;
  so.numThreads = o.threadsPerRank;
  so.profile = !o.profilePath.empty();
  TPC_RETURN_IF_ERROR(Session::create(*s.engine, &comm, so, s.session));
  return setInputs(*s.session, s.inputs);
}

/// Every rank learns which ranks failed `st`. Returns -1 when none did;
/// otherwise the exit status, the lowest failing rank printing its error.
int agreeOnFailure(Communicator &comm, const Status &st, std::ostream &err) {
  const int rank = comm.rank(), world = comm.size();
  std::vector<int32_t> failed(size_t(world), 0);
  failed[size_t(rank)] = st ? 0 : 1;
  if (Status as = comm.allReduce(failed.data(), failed.data(), failed.size(),
                                 DType::I32);
      !as)
    return toolError(err, "rank " + std::to_string(rank) + ": " + as.message());
  for (int r = 0; r < world; ++r) {
    if (!failed[size_t(r)])
      continue;
    // The lowest failing rank speaks for all; the failure is often the same
    // on every rank (a bad engine folder, a missing input).
    if (r == rank)
      return toolError(err, (world > 1 ? "rank " + std::to_string(rank) + ": "
                                       : std::string()) +
                                st.message());
    return 1;
  }
  return -1;
}

/// Every rank's `text`, in rank order, on every rank (lengths first, then
/// the bytes).
Status gatherText(Communicator &comm, const std::string &text,
                  std::vector<std::string> &out) {
  const int world = comm.size();
  std::vector<int64_t> lengths(size_t(world), 0);
  int64_t mine = int64_t(text.size());
  TPC_RETURN_IF_ERROR(comm.allGather(&mine, lengths.data(), 1, DType::I64));
  std::vector<size_t> counts(lengths.begin(), lengths.end());
  size_t total = 0;
  for (size_t c : counts)
    total += c;
  std::vector<char> all(total);
  TPC_RETURN_IF_ERROR(
      comm.allGatherV(text.data(), all.data(), counts, DType::U8));
  out.clear();
  size_t at = 0;
  for (size_t c : counts) {
    out.emplace_back(all.data() + at, c);
    at += c;
  }
  return Status::ok();
}

/// Every rank must run the same compile: ranks compare their engine ids
/// (engine.json's digest), so that per-rank folders of two different compiles
/// fail before the first collective instead of mixing models, deadlocking on
/// mismatched collectives or corrupting memory. Returns -1 when all agree,
/// the exit status otherwise (every rank reports its own mismatch).
int agreeOnEngine(Communicator &comm, const EngineManifest &manifest,
                  std::ostream &err) {
  const int rank = comm.rank(), world = comm.size();
  constexpr size_t kIdBytes = 64;
  std::string mine = manifest.engineId;
  mine.resize(kIdBytes, '0');
  std::vector<uint8_t> all(kIdBytes * size_t(world));
  if (Status st = comm.allGather(mine.data(), all.data(), kIdBytes, DType::U8);
      !st)
    return toolError(err, "rank " + std::to_string(rank) + ": " + st.message());
  auto idOf = [&](int r) {
    return std::string(reinterpret_cast<const char *>(all.data()) +
                           size_t(r) * kIdBytes,
                       kIdBytes);
  };
  for (int r = 0; r < world; ++r)
    if (idOf(r) != idOf(0)) {
      if (rank != r && rank != 0)
        return 1;
      return toolError(
          err, "rank " + std::to_string(rank) + ": rank " + std::to_string(r) +
                   " loaded a different engine than rank 0 (engine ids " +
                   idOf(r).substr(0, 12) + "... and " + idOf(0).substr(0, 12) +
                   "...: their engine.json files differ); every rank of a "
                   "job must run the same compile");
    }
  return -1;
}

int runRank(const RunToolOptions &o, Communicator &comm, std::ostream &out,
            std::ostream &err) {
  const int rank = comm.rank(), world = comm.size();
  RankState state;
  auto loadStart = std::chrono::steady_clock::now();
  Status setup = setUp(o, comm, state);
  const double loadMillis = millisSince(loadStart);

  // Every rank learns which ranks failed, so that all stop here together
  // instead of the healthy ones waiting in the first collective.
  if (int r = agreeOnFailure(comm, setup, err); r >= 0)
    return r;
  if (int r = agreeOnEngine(comm, state.manifest, err); r >= 0)
    return r;

  std::vector<double> times;
  RankRuns profile;
  for (int i = 0; i < o.warmup + o.iterations; ++i) {
    if (Status st = comm.barrier(); !st)
      return toolError(err, "rank " + std::to_string(rank) + ": " +
                                st.message());
    // A failing forward aborts the job (MPI_Abort) from inside run(); the
    // message is printed before.
    if (Status st = state.session->run(); !st)
      return toolError(err, st.message());
    if (i >= o.warmup) {
      times.push_back(state.session->lastRunMillis());
      if (!o.profilePath.empty())
        profile.push_back(state.session->stepTimes());
    }
  }
  std::vector<std::string> events;
  if (!o.profilePath.empty())
    if (Status st = gatherText(comm,
                               traceEventsJson(state.engine->plan(), rank,
                                               profile),
                               events);
        !st)
      return toolError(err, "rank " + std::to_string(rank) + ": " +
                                st.message());
  if (rank != 0)
    return 0;
  if (Status st = saveGeneratedInputs(o, state.inputs); !st)
    return toolError(err, st.message());
  if (Status st = writeOutputs(*state.session, o.outputDir,
                               o.json ? nullptr : &out, err);
      !st)
    return toolError(err, st.message());
  printLatency(times, loadMillis, world, o, out);
  if (!o.profilePath.empty()) {
    if (Status st = writeChromeTrace(o.profilePath, events); !st)
      return toolError(err, st.message());
    printProfileSummary(state.engine->plan(), profile, o, out);
  }
  return 0;
}


/// This process's index among the job's processes on this host, from the
/// launcher's environment (0 when it sets none).
int localRankFromEnv() {
  for (const char *var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                          "SLURM_LOCALID", "PMI_LOCAL_RANK"})
    if (const char *v = std::getenv(var); v && *v)
      return std::max(0, std::atoi(v));
  return 0;
}

/// --backend cuda under mpirun: one rank per process on GPU device +
/// local rank, NCCL between them. Rank 0's NCCL id reaches every rank over
/// MPI together with the agreement on set-up failures.
int runRankGpu(const RunToolOptions &o, Communicator &comm, std::ostream &out,
               std::ostream &err) {
  const int rank = comm.rank(), world = comm.size();
  auto loadStart = std::chrono::steady_clock::now();
  EngineManifest manifest;
  std::vector<NamedArray> inputs;
  Status setup = EngineManifest::load(o.engineDir, manifest);
  if (setup)
    setup = checkWorldSize(comm, manifest);
  if (setup && o.gpu.emulateRanks)
    setup = Status::error("--emulate-ranks runs every rank in one process; "
                          "use it without mpirun");
  if (setup)
    setup = readInputs(manifest, o, inputs);
  // A fixed-size block per rank: a 4-byte length and rank 0's id.
  constexpr size_t kIdBlock = 512;
  std::vector<uint8_t> id, block(kIdBlock, 0);
  if (setup && rank == 0 && manifest.tp > 1)
    setup = newNcclId(id);
  if (setup && id.size() > kIdBlock - 4)
    setup = Status::error("the NCCL id does not fit its exchange block");
  if (int r = agreeOnFailure(comm, setup, err); r >= 0)
    return r;
  if (int r = agreeOnEngine(comm, manifest, err); r >= 0)
    return r;
  const uint32_t len = uint32_t(id.size());
  std::memcpy(block.data(), &len, 4);
  if (len)
    std::memcpy(block.data() + 4, id.data(), len);
  std::vector<uint8_t> all(kIdBlock * size_t(world));
  if (Status st = comm.allGather(block.data(), all.data(), kIdBlock, DType::U8);
      !st)
    return toolError(err, "rank " + std::to_string(rank) + ": " + st.message());
  uint32_t rootLen = 0;
  std::memcpy(&rootLen, all.data(), 4);
  const std::vector<uint8_t> rootId(all.begin() + 4,
                                    all.begin() + 4 + std::min<uint32_t>(
                                                          rootLen,
                                                          kIdBlock - 4));

  std::unique_ptr<BackendRunner> runner;
  Status made = createCudaRankRunner(manifest, rank,
                                     o.gpu.device + localRankFromEnv(), rootId,
                                     o.gpu, runner);
  for (size_t i = 0; made && i < inputs.size(); ++i)
    made = runner->setInput(inputs[i].name, inputs[i].array.desc,
                            inputs[i].array.data.data());
  if (int r = agreeOnFailure(comm, made, err); r >= 0)
    return r;
  const double gpuLoadMillis = millisSince(loadStart);

  std::vector<double> times;
  for (int i = 0; i < o.warmup + o.iterations; ++i) {
    if (Status st = comm.barrier(); !st)
      return toolError(err, "rank " + std::to_string(rank) + ": " +
                                st.message());
    if (Status st = runner->run(); !st)
      return toolError(err, "rank " + std::to_string(rank) + ": " +
                                st.message());
    if (i >= o.warmup)
      times.push_back(runner->lastRunMillis());
  }
  if (rank != 0)
    return 0;
  for (const std::string &note : runner->notes())
    err << "tpc run: note: " << note << "\n";
  if (Status st = saveGeneratedInputs(o, inputs); !st)
    return toolError(err, st.message());
  if (Status st = writeOutputs(
          runner->outputNames(),
          [&](const std::string &name, TensorDesc &desc, const void *&data) {
            return runner->output(name, desc, data);
          },
          o.outputDir, o.json ? nullptr : &out, err);
      !st)
    return toolError(err, st.message());
  printLatency(times, gpuLoadMillis, world, o, out);
  return 0;
}

} // namespace

namespace {

/// This process's rank of a decode engine; tokens are rank 0's.
class MpiStepRunner final : public StepRunner {
public:
  MpiStepRunner(RankEngine &engine, Session &session, Communicator &comm)
      : engine_(engine), session_(session), comm_(comm) {}
  Status reset() override {
    engine_.resetState();
    return Status::ok();
  }
  Status setInput(const std::string &name, const TensorDesc &desc,
                  const void *data) override {
    return session_.setInput(name, desc, data);
  }
  Status run() override { return session_.run(); }
  Status logits(const std::string &name, const float *&data) override {
    return sessionLogits(session_, name, data);
  }
  Status agree(int64_t &token) override {
    int64_t mine = comm_.rank() == 0 ? token : 0;
    TPC_RETURN_IF_ERROR(comm_.allReduce(&mine, &token, 1, DType::I64));
    return Status::ok();
  }

private:
  RankEngine &engine_;
  Session &session_;
  Communicator &comm_;
};

int generateRank(const GenerateToolOptions &o, Communicator &comm,
                 const std::function<void(const GenerateResult &, double)> &report,
                 std::ostream &err) {
  const int rank = comm.rank();
  EngineManifest manifest;
  std::unique_ptr<RankEngine> engine;
  std::unique_ptr<Session> session;
  auto loadStart = std::chrono::steady_clock::now();
  auto setup = [&]() -> Status {
    TPC_RETURN_IF_ERROR(
        EngineManifest::load(o.engineDir, manifest, /*holdFolder=*/true));
    FolderRelease release(manifest);
    TPC_RETURN_IF_ERROR(checkWorldSize(comm, manifest));
    TPC_RETURN_IF_ERROR(
        checkGenerateRequest(manifest.generation, o.prompt, o.generate));
    TPC_RETURN_IF_ERROR(RankEngine::load(manifest, rank, engine));
    SessionOptions so;
    so.numThreads = o.threadsPerRank;
    return Session::create(*engine, &comm, so, session);
  };
  Status st = setup();
  const double loadMillis = millisSince(loadStart);
  if (int r = agreeOnFailure(comm, st, err); r >= 0)
    return r;
  if (int r = agreeOnEngine(comm, manifest, err); r >= 0)
    return r;
  MpiStepRunner runner(*engine, *session, comm);
  GenerateResult result;
  // A failing forward aborts the job from inside run().
  if (Status gs = generate(runner, manifest.generation, o.prompt, o.generate,
                           result);
      !gs)
    return toolError(err, "rank " + std::to_string(rank) + ": " +
                              gs.message());
  if (rank == 0)
    report(result, loadMillis);
  return 0;
}

} // namespace

int generateUnderMpi(const GenerateToolOptions &options,
                     const std::function<void(const GenerateResult &, double)> &report,
                     std::ostream &err) {
  setToolName("tpc generate");
  MpiOptions mo;
  mo.timeout = std::chrono::seconds(options.commTimeoutSeconds);
  mo.validateCalls = true;
  return withMpiWorld(
      mo,
      [&](Communicator &comm) {
        return generateRank(options, comm, report, err);
      },
      err);
}

int runMpiTool(const RunToolOptions &options, std::ostream &out,
               std::ostream &err) {
  MpiOptions mo;
  mo.timeout = std::chrono::seconds(options.commTimeoutSeconds);
  // One small extra all-reduce per collective: ranks that disagree on the
  // collective, its dtype or its count fail with both calls named instead
  // of hanging or corrupting memory.
  mo.validateCalls = options.checkCollectives;
  return withMpiWorld(
      mo,
      [&](Communicator &comm) {
        return options.backend == Backend::Cuda
                   ? runRankGpu(options, comm, out, err)
                   : runRank(options, comm, out, err);
      },
      err);
}

} // namespace tpc::runtime
