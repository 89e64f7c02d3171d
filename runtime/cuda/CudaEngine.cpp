//===- CudaEngine.cpp - Running an engine's ranks on GPUs -----------------===//
#include "runtime/cuda/CudaEngine.h"

#include "kernels/cuda/Check.h"
#include "runtime/cuda/EmulatedComm.h"
#ifdef TPC_HAVE_NCCL
#include "runtime/comm/NcclComm.h"
#endif

#include <algorithm>
#include <cstring>
#include <thread>

namespace tpc::runtime {

using cuda::cudaResult;

Status CudaEngine::deviceCount(int &count) {
  count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
    return Status::error(std::string("no CUDA device: ") +
                         cudaGetErrorName(err) + " (" +
                         cudaGetErrorString(err) + ")");
  }
  if (count == 0)
    return Status::error("no CUDA device: cudaGetDeviceCount found none");
  return Status::ok();
}

namespace {

CudaRankOptions rankOptions(const CudaEngineOptions &options) {
  CudaRankOptions ro;
  ro.gemmWorkspaceBytes = options.gemmWorkspaceBytes;
  ro.allowTf32 = options.allowTf32;
  return ro;
}

/// Loads the host side of ranks `ranks` (plans, mapped weights, validated
/// collectives) in parallel; the lowest failing rank is reported.
Status loadHostEngines(const EngineManifest &manifest,
                       const std::vector<int> &ranks,
                       std::vector<std::unique_ptr<RankEngine>> &out) {
  RankEngineOptions opts;
  opts.hostExecution = false;
  TPC_RETURN_IF_ERROR(RankEngine::loadRanks(manifest, ranks, opts, out));
  // The CUDA steps are prepared (and captured as graphs) for one shape.
  const RankPlan &plan = out[0]->plan();
  if (!plan.symbols.empty()) {
    std::string ranges;
    for (const PlanSymbol &s : plan.symbols)
      ranges += (ranges.empty() ? "" : ", ") + s.name + " " +
                std::to_string(s.min) + ".." + std::to_string(s.max);
    return Status::unimplemented(
        "the engine has run-time dimensions (" + ranges +
        "), which the CUDA backend does not run yet: run it on the CPU, or "
        "compile it with static shapes for --backend cuda");
  }
  return Status::ok();
}

} // namespace

Status CudaEngine::createStreams(const std::vector<int> &devices) {
  for (int d : devices) {
    if (std::find(streamDevices_.begin(), streamDevices_.end(), d) !=
        streamDevices_.end())
      continue;
    TPC_RETURN_IF_ERROR(cudaResult(cudaSetDevice(d), "cudaSetDevice(" +
                                                         std::to_string(d) +
                                                         ")"));
    cudaStream_t s = nullptr;
    TPC_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    streams_.push_back(s);
    streamDevices_.push_back(d);
    cudaEvent_t a = nullptr, b = nullptr;
    TPC_CUDA_CHECK(cudaEventCreate(&a));
    startEvents_.push_back(a);
    TPC_CUDA_CHECK(cudaEventCreate(&b));
    stopEvents_.push_back(b);
  }
  return Status::ok();
}

Status CudaEngine::load(const std::string &dir,
                        const CudaEngineOptions &options,
                        std::unique_ptr<CudaEngine> &out) {
  out.reset();
  std::unique_ptr<CudaEngine> e(new CudaEngine());
  e->options_ = options;
  TPC_RETURN_IF_ERROR(
      EngineManifest::load(dir, e->manifest_, /*holdFolder=*/true));
  FolderRelease release(e->manifest_);
  int count = 0;
  TPC_RETURN_IF_ERROR(deviceCount(count));
  const int tp = e->manifest_.tp;
  const bool oneDevice = options.emulateRanks || tp == 1;
  if (options.device < 0 || options.device >= count)
    return Status::error("CUDA device " + std::to_string(options.device) +
                         " does not exist (" + std::to_string(count) +
                         " device" + (count == 1 ? "" : "s") + ")");
  if (!oneDevice && options.device + tp > count)
    return Status::error("the engine has tp " + std::to_string(tp) +
                         " and needs " + std::to_string(tp) +
                         " GPUs from device " + std::to_string(options.device) +
                         ", but there are " + std::to_string(count) +
                         "; pass --emulate-ranks to run every rank on one GPU");
  std::vector<int> ranks, devices;
  for (int r = 0; r < tp; ++r) {
    ranks.push_back(r);
    devices.push_back(oneDevice ? options.device : options.device + r);
  }
  TPC_RETURN_IF_ERROR(loadHostEngines(e->manifest_, ranks, e->hostEngines_));
  TPC_RETURN_IF_ERROR(e->createStreams(devices));

  if (tp > 1 && oneDevice) {
    std::unique_ptr<EmulatedGroup> g;
    TPC_RETURN_IF_ERROR(EmulatedGroup::create(tp, e->streams_[0], g));
    e->group_ = std::move(g);
  } else if (tp > 1) {
#ifdef TPC_HAVE_NCCL
    NcclOptions no;
    no.timeout = options.commTimeout;
    std::unique_ptr<NcclGroup> g;
    TPC_RETURN_IF_ERROR(NcclGroup::createLocal(devices, e->streams_, no, g));
    e->group_ = std::move(g);
#else
    return Status::error("this tpc was built without NCCL, so ranks cannot "
                         "run on separate GPUs; pass --emulate-ranks");
#endif
  }
  for (int r = 0; r < tp; ++r) {
    const size_t s = oneDevice ? 0 : size_t(r);
    std::unique_ptr<CudaRank> rank;
    TPC_RETURN_IF_ERROR(CudaRank::create(*e->hostEngines_[size_t(r)],
                                         devices[size_t(r)], e->streams_[s],
                                         rankOptions(options), rank));
    e->ranks_.push_back(std::move(rank));
  }
  TPC_RETURN_IF_ERROR(e->finishLoad());
  out = std::move(e);
  return Status::ok();
}

Status CudaEngine::loadRank(const EngineManifest &manifest, int rank,
                            int device, const CudaEngineOptions &options,
                            GroupFactory makeGroup, void *ctx,
                            std::unique_ptr<CudaEngine> &out) {
  out.reset();
  std::unique_ptr<CudaEngine> e(new CudaEngine());
  e->options_ = options;
  e->manifest_ = manifest;
  int count = 0;
  TPC_RETURN_IF_ERROR(deviceCount(count));
  if (device < 0 || device >= count)
    return Status::error("rank " + std::to_string(rank) + ": CUDA device " +
                         std::to_string(device) + " does not exist (" +
                         std::to_string(count) + " devices)");
  // The communicator first: its set-up waits for every rank (with a
  // timeout), and a rank that fails later still leaves its peers free.
  TPC_RETURN_IF_ERROR(e->createStreams({device}));
  if (manifest.tp > 1) {
    if (!makeGroup)
      return Status::error("rank " + std::to_string(rank) +
                           ": no communicator for an engine with tp " +
                           std::to_string(manifest.tp));
    TPC_RETURN_IF_ERROR(makeGroup(ctx, e->streams_[0], e->group_));
    if (!e->group_ || e->group_->localRanks() != 1 ||
        e->group_->comm(0).rank() != rank ||
        e->group_->comm(0).size() != manifest.tp)
      return Status::error("rank " + std::to_string(rank) +
                           ": the communicator does not match the engine");
  }
  // From here on the peers have a communicator with this rank in it: a
  // failure aborts it, so that they fail too instead of waiting for this
  // rank's collectives until their timeout.
  auto failed = [&](Status st) {
    if (e->group_)
      e->group_->abort("rank " + std::to_string(rank) +
                       " failed to load: " + st.message());
    return st;
  };
  if (Status st = loadHostEngines(manifest, {rank}, e->hostEngines_); !st)
    return failed(st);
  std::unique_ptr<CudaRank> r;
  if (Status st = CudaRank::create(*e->hostEngines_[0], device, e->streams_[0],
                                   rankOptions(options), r);
      !st)
    return failed(st);
  e->ranks_.push_back(std::move(r));
  if (Status st = e->finishLoad(); !st)
    return failed(st);
  out = std::move(e);
  return Status::ok();
}

Status CudaEngine::finishLoad() {
  // Lockstep needs every rank to meet the same number of collectives.
  for (const auto &r : ranks_)
    if (r->numCollectives() != ranks_[0]->numCollectives())
      return Status::error("rank " + std::to_string(r->rank()) + " has " +
                           std::to_string(r->numCollectives()) +
                           " collective steps but rank " +
                           std::to_string(ranks_[0]->rank()) + " has " +
                           std::to_string(ranks_[0]->numCollectives()));
  const RankEngine &first = ranks_[0]->engine();
  TPC_RETURN_IF_ERROR(io_.bind(first, ""));
  inputPinned_.assign(io_.inputs().size(), nullptr);
  for (size_t i = 0; i < io_.inputs().size(); ++i)
    if (size_t bytes = io_.inputs()[i].desc.bytes())
      TPC_CUDA_CHECK(cudaMallocHost(&inputPinned_[i], bytes));
  outputPinned_.assign(io_.outputs().size(), nullptr);
  for (size_t i = 0; i < io_.outputs().size(); ++i) {
    GraphIo::Output &o = io_.outputs()[i];
    if (size_t bytes = o.desc.bytes()) {
      TPC_CUDA_CHECK(cudaMallocHost(&outputPinned_[i], bytes));
      // The forward's last copy lands here; output() hands it out as it is
      // (no second copy per forward).
      o.external = outputPinned_[i];
      std::vector<uint8_t>().swap(o.data);
    }
  }
  return Status::ok();
}

CudaEngine::~CudaEngine() {
  // Nothing may be freed while queued work can still use it.
  for (size_t i = 0; i < streams_.size(); ++i) {
    (void)cudaSetDevice(streamDevices_[i]);
    (void)cudaStreamSynchronize(streams_[i]);
  }
  for (cudaGraphExec_t g : graphs_)
    (void)cudaGraphExecDestroy(g);
  for (cudaGraph_t g : graphGraphs_)
    (void)cudaGraphDestroy(g);
  ranks_.clear();
  group_.reset();
  for (void *p : inputPinned_)
    if (p)
      (void)cudaFreeHost(p);
  for (void *p : outputPinned_)
    if (p)
      (void)cudaFreeHost(p);
  for (size_t i = 0; i < streams_.size(); ++i) {
    (void)cudaSetDevice(streamDevices_[i]);
    if (startEvents_.size() > i && startEvents_[i])
      (void)cudaEventDestroy(startEvents_[i]);
    if (stopEvents_.size() > i && stopEvents_[i])
      (void)cudaEventDestroy(stopEvents_[i]);
    (void)cudaStreamDestroy(streams_[i]);
  }
  (void)cudaGetLastError();
}

Status CudaEngine::setInput(const std::string &name, const TensorDesc &desc,
                            const void *data) {
  return io_.setInput(name, desc, data);
}

Status CudaEngine::enqueueForward() {
  const size_t n = ranks_.size();
  for (const auto &r : ranks_) {
    TPC_RETURN_IF_ERROR(cudaResult(cudaSetDevice(r->device()), "cudaSetDevice"));
    for (size_t i = 0; i < io_.inputs().size(); ++i)
      if (const GraphIo::Input &in = io_.inputs()[i]; in.desc.bytes())
        TPC_RETURN_IF_ERROR(
            cudaResult(cudaMemcpyAsync(r->bufferData(in.buffer),
                                       inputPinned_[i], in.desc.bytes(),
                                       cudaMemcpyHostToDevice, r->stream()),
                       "copying input '" + in.name + "' to rank " +
                           std::to_string(r->rank())));
  }
  std::vector<size_t> pos(n, 0);
  while (true) {
    for (size_t i = 0; i < n; ++i) {
      TPC_RETURN_IF_ERROR(
          cudaResult(cudaSetDevice(ranks_[i]->device()), "cudaSetDevice"));
      TPC_RETURN_IF_ERROR(
          ranks_[i]->enqueueKernels(pos[i], options_.syncEachStep));
    }
    const bool done = pos[0] == ranks_[0]->numSteps();
    for (size_t i = 1; i < n; ++i)
      if ((pos[i] == ranks_[i]->numSteps()) != done)
        return Status::error("ranks reached the end of their plans at "
                             "different collectives");
    if (done)
      break;
    for (size_t i = 0; i < n; ++i) {
      TPC_RETURN_IF_ERROR(
          cudaResult(cudaSetDevice(ranks_[i]->device()), "cudaSetDevice"));
      TPC_RETURN_IF_ERROR(ranks_[i]->collectiveBefore(pos[i]));
    }
    Status st;
    if (group_)
      st = group_->beginRound();
    for (size_t i = 0; i < n && st; ++i) {
      st = cudaResult(cudaSetDevice(ranks_[i]->device()), "cudaSetDevice");
      if (st)
        st = ranks_[i]->collectiveCommunicate(
            pos[i], group_ ? &group_->comm(int(i)) : nullptr);
    }
    // A begun round is always ended, even after a failed call.
    if (group_) {
      Status end = group_->endRound();
      if (st)
        st = end;
    }
    TPC_RETURN_IF_ERROR(st);
    for (size_t i = 0; i < n; ++i) {
      TPC_RETURN_IF_ERROR(
          cudaResult(cudaSetDevice(ranks_[i]->device()), "cudaSetDevice"));
      TPC_RETURN_IF_ERROR(ranks_[i]->collectiveAfter(pos[i]));
      if (options_.syncEachStep)
        TPC_RETURN_IF_ERROR(
            cudaResult(cudaStreamSynchronize(ranks_[i]->stream()),
                       "the collective")
                .withContext(ranks_[i]->where(pos[i])));
      ++pos[i];
    }
  }
  // Outputs come from the first local rank (every rank computes them all).
  CudaRank &r0 = *ranks_[0];
  TPC_RETURN_IF_ERROR(cudaResult(cudaSetDevice(r0.device()), "cudaSetDevice"));
  for (size_t i = 0; i < io_.outputs().size(); ++i)
    if (const GraphIo::Output &o = io_.outputs()[i]; outputPinned_[i])
      TPC_RETURN_IF_ERROR(cudaResult(
          cudaMemcpyAsync(outputPinned_[i], r0.bufferData(o.buffer),
                          o.desc.bytes(), cudaMemcpyDeviceToHost, r0.stream()),
          "copying output '" + o.name + "' from the device"));
  return Status::ok();
}

Status CudaEngine::capture() {
  const size_t n = streams_.size();
  size_t begun = 0;
  Status st;
  for (; begun < n && st; ++begun) {
    st = cudaResult(cudaSetDevice(streamDevices_[begun]), "cudaSetDevice");
    if (st)
      st = cudaResult(cudaStreamBeginCapture(streams_[begun],
                                             cudaStreamCaptureModeThreadLocal),
                      "cudaStreamBeginCapture");
    if (!st)
      break;
  }
  if (st)
    st = enqueueForward();
  // Every begun capture must be ended, whatever failed.
  std::vector<cudaGraph_t> graphs(n, nullptr);
  for (size_t i = 0; i < begun; ++i) {
    (void)cudaSetDevice(streamDevices_[i]);
    Status end = cudaResult(cudaStreamEndCapture(streams_[i], &graphs[i]),
                            "cudaStreamEndCapture");
    if (st)
      st = end;
  }
  std::vector<cudaGraphExec_t> execs(n, nullptr);
  for (size_t i = 0; i < n && st; ++i) {
    (void)cudaSetDevice(streamDevices_[i]);
    st = cudaResult(cudaGraphInstantiate(&execs[i], graphs[i], 0),
                    "cudaGraphInstantiate");
  }
  if (!st) {
    for (cudaGraphExec_t g : execs)
      if (g)
        (void)cudaGraphExecDestroy(g);
    for (cudaGraph_t g : graphs)
      if (g)
        (void)cudaGraphDestroy(g);
    (void)cudaGetLastError(); // capture errors are not sticky
    return st;
  }
  graphGraphs_ = std::move(graphs);
  graphs_ = std::move(execs);
  return Status::ok();
}

Status CudaEngine::launchGraphs() {
  for (size_t i = 0; i < graphs_.size(); ++i) {
    TPC_RETURN_IF_ERROR(
        cudaResult(cudaSetDevice(streamDevices_[i]), "cudaSetDevice"));
    TPC_RETURN_IF_ERROR(cudaResult(cudaGraphLaunch(graphs_[i], streams_[i]),
                                   "cudaGraphLaunch"));
  }
  return Status::ok();
}

Status CudaEngine::waitForward() {
  const std::string hint =
      options_.syncEachStep
          ? std::string()
          : " (run with --sync-steps to find the step that failed)";
  // Ranks on separate GPUs may wait for each other inside NCCL: poll, so
  // that a failed or missing peer ends in an error instead of a hang.
  const bool poll = group_ && !options_.emulateRanks;
  if (!poll) {
    for (size_t i = 0; i < streams_.size(); ++i) {
      TPC_RETURN_IF_ERROR(
          cudaResult(cudaSetDevice(streamDevices_[i]), "cudaSetDevice"));
      cudaError_t err = cudaStreamSynchronize(streams_[i]);
      if (err != cudaSuccess)
        return cuda::cudaStatus(err, "the forward failed on device " +
                                         std::to_string(streamDevices_[i]) +
                                         hint);
    }
    return Status::ok();
  }
  const auto deadline =
      std::chrono::steady_clock::now() + options_.commTimeout;
  std::vector<bool> finished(streams_.size(), false);
  size_t left = streams_.size();
  while (left) {
    for (size_t i = 0; i < streams_.size(); ++i) {
      if (finished[i])
        continue;
      (void)cudaSetDevice(streamDevices_[i]);
      cudaError_t err = cudaStreamQuery(streams_[i]);
      if (err == cudaSuccess) {
        finished[i] = true;
        --left;
      } else if (err != cudaErrorNotReady) {
        return cuda::cudaStatus(err, "the forward failed on device " +
                                         std::to_string(streamDevices_[i]) +
                                         hint);
      }
    }
    if (!left)
      break;
    TPC_RETURN_IF_ERROR(group_->poll());
    if (std::chrono::steady_clock::now() > deadline) {
      const std::string msg =
          "the forward did not finish within " +
          std::to_string(options_.commTimeout.count()) +
          " ms (a rank may be stuck in a collective); the communicators "
          "were aborted";
      group_->abort(msg);
      return Status::error(msg);
    }
    std::this_thread::yield();
  }
  return Status::ok();
}

Status CudaEngine::fail(const Status &st) {
  broken_ = true;
  if (group_)
    group_->abort(st.message());
  return st;
}

Status CudaEngine::resetState() {
  if (broken_)
    return Status::error("a previous forward failed; this engine cannot run "
                         "again");
  for (const auto &r : ranks_)
    TPC_RETURN_IF_ERROR(r->resetState());
  return Status::ok();
}

Status CudaEngine::run() {
  if (broken_)
    return Status::error("a previous forward failed; this engine cannot run "
                         "again");
  TPC_RETURN_IF_ERROR(io_.checkInputsSet());
  io_.beginRun();
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < io_.inputs().size(); ++i)
    if (const GraphIo::Input &in = io_.inputs()[i]; in.desc.bytes())
      std::memcpy(inputPinned_[i], in.data, in.desc.bytes());

  const bool wantGraph = options_.cudaGraph && !options_.syncEachStep &&
                         !graphFailed_ && forwards_ >= 1;
  for (size_t i = 0; i < streams_.size(); ++i) {
    (void)cudaSetDevice(streamDevices_[i]);
    if (Status st = cudaResult(cudaEventRecord(startEvents_[i], streams_[i]),
                               "cudaEventRecord");
        !st)
      return fail(st);
  }
  if (wantGraph && graphs_.empty()) {
    if (Status st = capture(); !st) {
      graphFailed_ = true;
      notes_.push_back("CUDA graph capture failed, forwards run eagerly: " +
                       st.message());
      if (broken_ || (group_ && !group_->poll()))
        return fail(st);
    }
  }
  Status st = graphs_.empty() ? enqueueForward() : launchGraphs();
  for (size_t i = 0; i < streams_.size() && st; ++i) {
    (void)cudaSetDevice(streamDevices_[i]);
    st = cudaResult(cudaEventRecord(stopEvents_[i], streams_[i]),
                    "cudaEventRecord");
  }
  if (st)
    st = waitForward();
  if (!st) {
    // Abort the communicators first: a rank whose stream failed leaves its
    // peers' NCCL kernels waiting for it, and draining their streams would
    // then never return. Then drain what was queued before reporting.
    broken_ = true;
    if (group_)
      group_->abort(st.message());
    for (size_t i = 0; i < streams_.size(); ++i) {
      (void)cudaSetDevice(streamDevices_[i]);
      (void)cudaStreamSynchronize(streams_[i]);
    }
    return fail(st);
  }
  // Indices out of range read zeros on the GPU: report them as the CPU
  // does. The forward itself completed, so the engine can run again.
  for (auto &rank : ranks_) {
    (void)cudaSetDevice(rank->device());
    if (Status is = rank->checkIndices(); !is)
      return is;
  }
  lastGpuMillis_ = 0;
  for (size_t i = 0; i < streams_.size(); ++i) {
    float ms = 0;
    (void)cudaSetDevice(streamDevices_[i]);
    if (cudaEventElapsedTime(&ms, startEvents_[i], stopEvents_[i]) ==
        cudaSuccess)
      lastGpuMillis_ = std::max(lastGpuMillis_, double(ms));
  }
  (void)cudaGetLastError();
  ++forwards_;
  io_.markRun();
  lastRunMillis_ = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  return Status::ok();
}

std::string CudaEngine::describe() const {
  std::string s;
  for (int d : streamDevices_) {
    cudaDeviceProp prop{};
    std::string name = cudaGetDeviceProperties(&prop, d) == cudaSuccess
                           ? std::string(prop.name)
                           : std::string("unknown GPU");
    s += (s.empty() ? "" : ", ") + name + " (device " + std::to_string(d) +
         ")";
  }
  (void)cudaGetLastError();
  if (group_)
    s += "; communicator: " + group_->describe();
  return s;
}

} // namespace tpc::runtime
