//===- NcclComm.cpp - NCCL communicators of ranks on GPUs -----------------===//
#include "runtime/comm/NcclComm.h"

#include <cstring>
#include <thread>
#include <utility>

namespace tpc {

namespace {

/// The NCCL type of every dtype that NCCL sums or moves as itself.
constexpr std::pair<DType, ncclDataType_t> kNcclTypes[] = {
    {DType::F32, ncclFloat32}, {DType::F64, ncclFloat64},
    {DType::F16, ncclFloat16}, {DType::BF16, ncclBfloat16},
    {DType::I32, ncclInt32},   {DType::I64, ncclInt64},
    {DType::I8, ncclInt8},     {DType::U32, ncclUint32},
    {DType::U64, ncclUint64},  {DType::U8, ncclUint8},
    {DType::Bool, ncclUint8}};

Status ncclDataType(DType t, ncclDataType_t &out) {
  for (const auto &[dtype, type] : kNcclTypes)
    if (dtype == t) {
      out = type;
      return Status::ok();
    }
  if (t == DType::I16 || t == DType::U16)
    return Status::error(std::string("NCCL has no ") + dtypeName(t) +
                         " type to sum or move");
  // float8 and 4-/2-bit integers move as their bytes (never summed).
  if (isStorageOnlyDType(t)) {
    out = ncclUint8;
    return Status::ok();
  }
  return Status::error("invalid dtype for NCCL");
}

Status cudaFailure(cudaError_t err, const std::string &what) {
  return Status::error(what + ": " + cudaGetErrorName(err) + " (" +
                       cudaGetErrorString(err) + ")");
}

} // namespace

/// One rank's communicator: NCCL calls on its stream.
class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(NcclGroup &group, ncclComm_t comm, int rank, int size,
                   int device, cudaStream_t stream)
      : group_(group), comm_(comm), rank_(rank), size_(size),
        device_(device), stream_(stream) {}
  ~NcclCommunicator() override {
    if (barrierBuf_) {
      (void)cudaSetDevice(device_);
      (void)cudaFree(barrierBuf_);
    }
  }

  ncclComm_t handle() const { return comm_; }
  int device() const { return device_; }
  void forgetHandle() { comm_ = nullptr; }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status allReduce(const void *send, void *recv, size_t count,
                   DType dtype) override {
    ncclDataType_t t;
    TPC_RETURN_IF_ERROR(summable("allReduce", count, dtype, t));
    return group_.settle(
        ncclAllReduce(send, recv, count, t, ncclSum, comm_, stream_), comm_,
        describeCall("ncclAllReduce", count, dtype));
  }

  Status allGather(const void *send, void *recv, size_t count,
                   DType dtype) override {
    TPC_RETURN_IF_ERROR(usable("allGather"));
    // Gathering moves bytes: any dtype goes as uint8.
    const size_t bytes = count * dtypeSize(dtype);
    return group_.settle(
        ncclAllGather(send, recv, bytes, ncclUint8, comm_, stream_), comm_,
        describeCall("ncclAllGather", count, dtype));
  }

  Status allGatherV(const void *send, void *recv,
                    const std::vector<size_t> &counts, DType dtype) override {
    TPC_RETURN_IF_ERROR(usable("allGatherV"));
    if (counts.size() != size_t(size_))
      return Status::error("allGatherV needs one count per rank");
    // NCCL has no all-gather of unequal blocks: one broadcast per rank,
    // grouped so that they proceed together (nested inside the runtime's
    // round when there is one).
    const size_t es = dtypeSize(dtype);
    ncclResult_t r = ncclGroupStart();
    size_t offset = 0;
    for (int q = 0; q < size_ && r == ncclSuccess; ++q) {
      char *dst = static_cast<char *>(recv) + offset;
      const void *src = q == rank_ ? send : dst;
      r = ncclBroadcast(src, dst, counts[size_t(q)] * es, ncclUint8, q, comm_,
                        stream_);
      offset += counts[size_t(q)] * es;
    }
    ncclResult_t end = ncclGroupEnd();
    if (r == ncclSuccess)
      r = end;
    return group_.settle(r, comm_, "allGatherV (grouped ncclBroadcast)");
  }

  Status reduceScatter(const void *send, void *recv, size_t count,
                       DType dtype) override {
    ncclDataType_t t;
    TPC_RETURN_IF_ERROR(summable("reduceScatter", count, dtype, t));
    return group_.settle(
        ncclReduceScatter(send, recv, count, t, ncclSum, comm_, stream_),
        comm_, describeCall("ncclReduceScatter", count, dtype));
  }

  /// A one-element all-reduce, waited for. Only for a group with one local
  /// rank: with several, one thread cannot wait for each in turn.
  Status barrier() override {
    TPC_RETURN_IF_ERROR(usable("barrier"));
    if (group_.localRanks() != 1)
      return Status::error("barrier() of an NCCL group with several local "
                           "ranks is not supported");
    cudaError_t err = cudaSetDevice(device_);
    if (err == cudaSuccess && !barrierBuf_)
      err = cudaMalloc(&barrierBuf_, sizeof(int32_t));
    if (err != cudaSuccess)
      return cudaFailure(err, "NCCL barrier");
    TPC_RETURN_IF_ERROR(group_.settle(
        ncclAllReduce(barrierBuf_, barrierBuf_, 1, ncclInt32, ncclSum, comm_,
                      stream_),
        comm_, "barrier (ncclAllReduce)"));
    // Poll rather than block, so that a missing peer times out.
    const auto deadline =
        std::chrono::steady_clock::now() + group_.options().timeout;
    while (true) {
      err = cudaStreamQuery(stream_);
      if (err == cudaSuccess)
        return Status::ok();
      if (err != cudaErrorNotReady)
        return cudaFailure(err, "NCCL barrier");
      TPC_RETURN_IF_ERROR(group_.poll());
      if (std::chrono::steady_clock::now() > deadline) {
        const std::string msg =
            "rank " + std::to_string(rank_) +
            ": barrier did not complete within " +
            std::to_string(group_.options().timeout.count()) + " ms";
        group_.abort(msg);
        return Status::error(msg);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  void abort(const std::string &reason) override { group_.abort(reason); }

private:
  Status usable(const char *op) const {
    if (group_.aborted())
      return Status::error(std::string(op) +
                           ": the NCCL communicator was aborted: " +
                           group_.abortReason());
    return Status::ok();
  }

  /// For a summing call: usable(), a dtype that can be summed, and its NCCL
  /// type in `type`.
  Status summable(const char *op, size_t count, DType dtype,
                  ncclDataType_t &type) const {
    TPC_RETURN_IF_ERROR(usable(op));
    if (!isReducibleDType(dtype))
      return Status::error(describeCall(op, count, dtype) +
                           ": cannot sum this dtype");
    return ncclDataType(dtype, type);
  }

  NcclGroup &group_;
  ncclComm_t comm_;
  int rank_, size_, device_;
  cudaStream_t stream_;
  void *barrierBuf_ = nullptr;
};

Status NcclGroup::createLocal(const std::vector<int> &devices,
                              const std::vector<cudaStream_t> &streams,
                              const NcclOptions &options,
                              std::unique_ptr<NcclGroup> &out) {
  out.reset();
  if (devices.empty() || devices.size() != streams.size())
    return Status::error("NCCL group: one stream per device is needed");
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  ncclResult_t r =
      ncclCommInitAll(comms.data(), int(devices.size()), devices.data());
  if (r != ncclSuccess)
    return Status::error(std::string("ncclCommInitAll over ") +
                         std::to_string(devices.size()) +
                         " devices: " + ncclGetErrorString(r));
  std::unique_ptr<NcclGroup> g(new NcclGroup());
  g->options_ = options;
  const int n = int(devices.size());
  for (int i = 0; i < n; ++i)
    g->comms_.push_back(std::make_unique<NcclCommunicator>(
        *g, comms[size_t(i)], i, n, devices[size_t(i)], streams[size_t(i)]));
  out = std::move(g);
  return Status::ok();
}

Status NcclGroup::newUniqueId(std::vector<uint8_t> &bytes) {
  ncclUniqueId id;
  ncclResult_t r = ncclGetUniqueId(&id);
  if (r != ncclSuccess)
    return Status::error(std::string("ncclGetUniqueId: ") +
                         ncclGetErrorString(r));
  bytes.assign(reinterpret_cast<const uint8_t *>(&id),
               reinterpret_cast<const uint8_t *>(&id) + sizeof id);
  return Status::ok();
}

Status NcclGroup::createRank(const std::vector<uint8_t> &idBytes, int nranks,
                             int rank, int device, cudaStream_t stream,
                             const NcclOptions &options,
                             std::unique_ptr<NcclGroup> &out) {
  out.reset();
  ncclUniqueId id;
  if (idBytes.size() != sizeof id)
    return Status::error("an ncclUniqueId has " + std::to_string(sizeof id) +
                         " bytes, got " + std::to_string(idBytes.size()));
  std::memcpy(&id, idBytes.data(), sizeof id);
  if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess)
    return cudaFailure(err, "NCCL rank " + std::to_string(rank));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  std::unique_ptr<NcclGroup> g(new NcclGroup());
  g->options_ = options;
  ncclResult_t r = ncclCommInitRankConfig(&comm, nranks, id, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    // NCCL's own reason (ncclGetLastError ignores its argument).
    std::string detail = ncclGetLastError(comm);
    if (comm)
      (void)ncclCommAbort(comm);
    return Status::error(
        "ncclCommInitRankConfig (rank " + std::to_string(rank) + " of " +
        std::to_string(nranks) + "): " + ncclGetErrorString(r) +
        (detail.empty() ? "" : " (" + detail + ")"));
  }
  g->comms_.push_back(
      std::make_unique<NcclCommunicator>(*g, comm, rank, nranks, device,
                                         stream));
  // Initialisation completes in the background; wait for it with the
  // timeout (the group aborts the communicator when it expires).
  TPC_RETURN_IF_ERROR(g->settle(r, comm, "ncclCommInitRankConfig (rank " +
                                             std::to_string(rank) + " of " +
                                             std::to_string(nranks) + ")"));
  out = std::move(g);
  return Status::ok();
}

NcclGroup::~NcclGroup() {
  if (aborted_) {
    releaseComms(); // a no-op unless a round was left open
    return;
  }
  // Finalize every communicator (grouped: one thread may own several),
  // wait for that with the timeout, then free them; any failure aborts.
  bool ok = ncclGroupStart() == ncclSuccess;
  for (auto &c : comms_) {
    if (!ok)
      break;
    (void)cudaSetDevice(c->device());
    ncclResult_t r = ncclCommFinalize(c->handle());
    ok = r == ncclSuccess || r == ncclInProgress;
  }
  ncclResult_t end = ncclGroupEnd();
  ok = ok && (end == ncclSuccess || end == ncclInProgress);
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  for (auto &c : comms_) {
    ncclResult_t state = ncclInProgress;
    while (ok && state == ncclInProgress) {
      if (ncclCommGetAsyncError(c->handle(), &state) != ncclSuccess ||
          std::chrono::steady_clock::now() > deadline)
        ok = false;
      else if (state == ncclInProgress)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ok = ok && state == ncclSuccess;
  }
  for (auto &c : comms_) {
    (void)cudaSetDevice(c->device());
    if (!ok || ncclCommDestroy(c->handle()) != ncclSuccess)
      (void)ncclCommAbort(c->handle());
    c->forgetHandle();
  }
}

Communicator &NcclGroup::comm(int index) { return *comms_[size_t(index)]; }

Status NcclGroup::settle(ncclResult_t r, ncclComm_t comm,
                         const std::string &what) {
  if (r == ncclSuccess)
    return Status::ok();
  if (r == ncclInProgress) {
    const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress) {
      if (ncclCommGetAsyncError(comm, &state) != ncclSuccess)
        break;
      if (state != ncclInProgress)
        break;
      if (std::chrono::steady_clock::now() > deadline) {
        const std::string msg = what + " did not complete within " +
                                std::to_string(options_.timeout.count()) +
                                " ms";
        abort(msg);
        return Status::error(msg + "; the NCCL communicator was aborted");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (state == ncclSuccess)
      return Status::ok();
    r = state;
  }
  std::string detail = comm ? ncclGetLastError(comm) : "";
  Status st = Status::error(what + ": " + ncclGetErrorString(r) +
                            (detail.empty() ? "" : " (" + detail + ")"));
  abort(st.message());
  return st;
}

Status NcclGroup::waitInProgress(const std::string &what) {
  for (auto &c : comms_)
    TPC_RETURN_IF_ERROR(settle(ncclInProgress, c->handle(), what));
  return Status::ok();
}

Status NcclGroup::beginRound() {
  if (aborted_)
    return Status::error("the NCCL communicator was aborted: " + abortReason_);
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess)
    return Status::error(std::string("ncclGroupStart: ") +
                         ncclGetErrorString(r));
  ++roundDepth_;
  return Status::ok();
}

Status NcclGroup::endRound() {
  if (roundDepth_ == 0)
    return Status::error("NCCL group: endRound() without beginRound()");
  --roundDepth_;
  ncclResult_t r = ncclGroupEnd();
  if (aborted_) {
    // A call of this round failed (or a peer aborted): the group is closed
    // now, so the communicators can be released safely.
    if (roundDepth_ == 0)
      releaseComms();
    return Status::error("the NCCL communicator was aborted: " + abortReason_);
  }
  if (r == ncclInProgress)
    return waitInProgress("ncclGroupEnd");
  if (r != ncclSuccess) {
    Status st =
        Status::error(std::string("ncclGroupEnd: ") + ncclGetErrorString(r));
    abort(st.message());
    return st;
  }
  return Status::ok();
}

Status NcclGroup::poll() {
  if (aborted_)
    return Status::error("the NCCL communicator was aborted: " + abortReason_);
  for (auto &c : comms_) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(c->handle(), &state);
    if (r != ncclSuccess)
      state = r;
    if (state != ncclSuccess && state != ncclInProgress) {
      std::string msg = "rank " + std::to_string(c->rank()) +
                        ": NCCL reported an asynchronous error: " +
                        ncclGetErrorString(state);
      abort(msg);
      return Status::error(msg);
    }
  }
  return Status::ok();
}

void NcclGroup::abort(const std::string &reason) {
  if (!aborted_) {
    aborted_ = true;
    abortReason_ = reason;
  }
  // Inside ncclGroupStart/End the communicators are still referenced by the
  // open group: ncclGroupEnd() would touch freed state. endRound() releases
  // them once the group is closed.
  if (roundDepth_ > 0)
    return;
  releaseComms();
}

void NcclGroup::releaseComms() {
  for (auto &c : comms_) {
    if (!c->handle())
      continue;
    (void)cudaSetDevice(c->device());
    (void)ncclCommAbort(c->handle());
    c->forgetHandle();
  }
}

std::string NcclGroup::describe() const {
  int version = 0;
  (void)ncclGetVersion(&version);
  return "NCCL " + std::to_string(version) + " (" +
         std::to_string(comms_.size()) + " local rank" +
         (comms_.size() == 1 ? "" : "s") + ")";
}

} // namespace tpc
