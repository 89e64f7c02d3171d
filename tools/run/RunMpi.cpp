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
#include "runtime/engine/CpuRunner.h"
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

/// This process's index among the job's processes on this host, from the
/// launcher's environment (0 when it sets none).
int localRankFromEnv() {
  for (const char *var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                          "SLURM_LOCALID", "PMI_LOCAL_RANK"})
    if (const char *v = std::getenv(var); v && *v)
      return std::max(0, std::atoi(v));
  return 0;
}

/// Rank 0's NCCL id on every rank, for --backend cuda. Every rank calls
/// this together; rank 0 made `id` (empty elsewhere).
Status shareNcclId(Communicator &comm, const std::vector<uint8_t> &id,
                   std::vector<uint8_t> &rootId) {
  // A fixed-size block per rank: a 4-byte length and rank 0's id.
  constexpr size_t kIdBlock = 512;
  if (id.size() > kIdBlock - 4)
    return Status::error("the NCCL id does not fit its exchange block");
  std::vector<uint8_t> block(kIdBlock, 0);
  const uint32_t len = uint32_t(id.size());
  std::memcpy(block.data(), &len, 4);
  if (len)
    std::memcpy(block.data() + 4, id.data(), len);
  std::vector<uint8_t> all(kIdBlock * size_t(comm.size()));
  TPC_RETURN_IF_ERROR(
      comm.allGather(block.data(), all.data(), kIdBlock, DType::U8));
  uint32_t rootLen = 0;
  std::memcpy(&rootLen, all.data(), 4);
  rootId.assign(all.begin() + 4,
                all.begin() + 4 + std::min<uint32_t>(rootLen, kIdBlock - 4));
  return Status::ok();
}

/// This process's rank of the engine on `backend`: the manifest, the world
/// size, the request checked by `checkRequest`, the agreement on failures
/// and on the engine, then the runner. Returns -1 with `runner` made, or the
/// exit status (every rank exits together; one prints).
int loadRank(const std::string &engineDir, Backend backend,
             const GpuRunOptions &gpu, const CpuRunOptions &cpu,
             Communicator &comm,
             const std::function<Status(const EngineManifest &)> &checkRequest,
             EngineManifest &manifest, std::unique_ptr<EngineRunner> &runner,
             std::ostream &err) {
  const int rank = comm.rank();
  Status setup = EngineManifest::load(engineDir, manifest, /*holdFolder=*/true);
  // Every rank file is open once the rank is loaded.
  FolderRelease release(manifest);
  if (setup)
    setup = checkWorldSize(comm, manifest);
  if (setup && backend == Backend::Cuda && gpu.emulateRanks)
    setup = Status::error("--emulate-ranks runs every rank in one process; "
                          "use it without mpirun");
  if (setup)
    setup = checkRequest(manifest);
  std::vector<uint8_t> id;
  if (setup && backend == Backend::Cuda && rank == 0 && manifest.tp > 1)
    setup = newNcclId(id);
  if (setup && backend == Backend::Cpu)
    setup = createCpuRankRunner(manifest, comm, cpu, runner);
  // Every rank learns which ranks failed, so that all stop here together
  // instead of the healthy ones waiting in the first collective.
  if (int r = agreeOnFailure(comm, setup, err); r >= 0)
    return r;
  if (int r = agreeOnEngine(comm, manifest, err); r >= 0)
    return r;
  if (backend == Backend::Cpu)
    return -1;
  // Rank 0's NCCL id reaches every rank before the GPU ranks are made.
  std::vector<uint8_t> rootId;
  if (Status st = shareNcclId(comm, id, rootId); !st)
    return toolError(err, "rank " + std::to_string(rank) + ": " + st.message());
  Status made = createCudaRankRunner(
      manifest, rank, gpu.device + localRankFromEnv(), rootId, gpu, runner);
  if (int r = agreeOnFailure(comm, made, err); r >= 0)
    return r;
  return -1;
}

/// tpc run under mpirun, on either backend: one rank per process, its GPU
/// device + local rank with --backend cuda.
int runRank(const RunToolOptions &o, Communicator &comm, std::ostream &out,
            std::ostream &err) {
  auto loadStart = std::chrono::steady_clock::now();
  CpuRunOptions cpu;
  cpu.numThreads = o.threadsPerRank;
  cpu.profile = !o.profilePath.empty();
  EngineManifest manifest;
  std::vector<NamedArray> inputs;
  std::unique_ptr<EngineRunner> runner;
  auto check = [&](const EngineManifest &m) -> Status {
    TPC_RETURN_IF_ERROR(readInputs(m, o, inputs));
    if (o.backend == Backend::Cpu)
      TPC_RETURN_IF_ERROR(checkThreads(ranksSharingCores(), o));
    return Status::ok();
  };
  if (int r = loadRank(o.engineDir, o.backend, o.gpu, cpu, comm, check,
                       manifest, runner, err);
      r >= 0)
    return r;
  if (int r = agreeOnFailure(comm, setInputs(*runner, inputs), err); r >= 0)
    return r;
  return runForwards(*runner, &comm, o, inputs, millisSince(loadStart), out,
                     err);
}

/// tpc generate under mpirun: this process's rank runs the generation;
/// every rank feeds rank 0's tokens.
int generateRank(const GenerateToolOptions &o, Communicator &comm,
                 const std::function<void(const GenerateResult &, double)> &report,
                 std::ostream &err) {
  const int rank = comm.rank();
  auto loadStart = std::chrono::steady_clock::now();
  CpuRunOptions cpu;
  cpu.numThreads = o.threadsPerRank;
  EngineManifest manifest;
  std::unique_ptr<EngineRunner> runner;
  auto check = [&](const EngineManifest &m) {
    return checkGenerateRequest(m.generation, o.prompt, o.generate);
  };
  if (int r = loadRank(o.engineDir, o.backend, o.gpu, cpu, comm, check,
                       manifest, runner, err);
      r >= 0)
    return r;
  const double loadMillis = millisSince(loadStart);
  GenerateResult result;
  // A failing forward aborts the job from inside run().
  if (Status gs = generate(*runner, &comm, manifest.generation, o.prompt,
                           o.generate, result);
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
      mo, [&](Communicator &comm) { return runRank(options, comm, out, err); },
      err);
}

} // namespace tpc::runtime
