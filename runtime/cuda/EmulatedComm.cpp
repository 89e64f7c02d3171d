//===- EmulatedComm.cpp - Ranks emulated on one GPU -----------------------===//
#include "runtime/cuda/EmulatedComm.h"

#include "kernels/cuda/Check.h"
#include "kernels/cuda/Kernels.h"

namespace tpc {

namespace {

const char *opName(EmulatedGroup::Op op) {
  switch (op) {
  case EmulatedGroup::Op::AllReduce: return "allReduce";
  case EmulatedGroup::Op::AllGather: return "allGather";
  case EmulatedGroup::Op::AllGatherV: return "allGatherV";
  case EmulatedGroup::Op::ReduceScatter: return "reduceScatter";
  case EmulatedGroup::Op::Barrier: return "barrier";
  case EmulatedGroup::Op::None: break;
  }
  return "none";
}

class EmulatedComm final : public Communicator {
public:
  EmulatedComm(EmulatedGroup &group, int rank, int size)
      : group_(group), rank_(rank), size_(size) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status allReduce(const void *send, void *recv, size_t count,
                   DType dtype) override {
    return call(EmulatedGroup::Op::AllReduce, send, recv, count, {}, dtype);
  }
  Status allGather(const void *send, void *recv, size_t count,
                   DType dtype) override {
    return call(EmulatedGroup::Op::AllGather, send, recv, count, {}, dtype);
  }
  Status allGatherV(const void *send, void *recv,
                    const std::vector<size_t> &counts, DType dtype) override {
    return call(EmulatedGroup::Op::AllGatherV, send, recv, 0, counts, dtype);
  }
  Status reduceScatter(const void *send, void *recv, size_t count,
                       DType dtype) override {
    return call(EmulatedGroup::Op::ReduceScatter, send, recv, count, {},
                dtype);
  }
  Status barrier() override {
    return call(EmulatedGroup::Op::Barrier, nullptr, nullptr, 0, {},
                DType::F32);
  }
  void abort(const std::string &reason) override { group_.abort(reason); }

private:
  Status call(EmulatedGroup::Op op, const void *send, void *recv, size_t count,
              std::vector<size_t> counts, DType dtype) {
    EmulatedGroup::Call c;
    c.op = op;
    c.send = send;
    c.recv = recv;
    c.count = count;
    c.counts = std::move(counts);
    c.dtype = dtype;
    return group_.record(rank_, std::move(c));
  }

  EmulatedGroup &group_;
  int rank_, size_;
};

} // namespace

Status EmulatedGroup::create(int size, cudaStream_t stream,
                             std::unique_ptr<EmulatedGroup> &out) {
  out.reset();
  if (size < 1 || size > kMaxRanks)
    return Status::error("cannot emulate " + std::to_string(size) +
                         " ranks on one GPU (1 to " +
                         std::to_string(kMaxRanks) + ")");
  std::unique_ptr<EmulatedGroup> g(new EmulatedGroup());
  g->stream_ = stream;
  for (int r = 0; r < size; ++r)
    g->comms_.push_back(std::make_unique<EmulatedComm>(*g, r, size));
  g->calls_.resize(size_t(size));
  out = std::move(g);
  return Status::ok();
}

EmulatedGroup::~EmulatedGroup() = default;

Status EmulatedGroup::beginRound() {
  if (aborted_)
    return Status::error("the emulated communicator was aborted: " +
                         abortReason_);
  for (Call &c : calls_)
    c = Call();
  inRound_ = true;
  return Status::ok();
}

Status EmulatedGroup::record(int rank, Call call) {
  if (aborted_)
    return Status::error("the emulated communicator was aborted: " +
                         abortReason_);
  if (!inRound_) {
    // A lone call (outside the runtime's rounds) is a round of its own,
    // which only a world of one completes.
    if (comms_.size() != 1)
      return Status::error(std::string(opName(call.op)) +
                           " called outside a round of the emulated group");
    TPC_RETURN_IF_ERROR(beginRound());
    calls_[0] = std::move(call);
    return endRound();
  }
  if (calls_[size_t(rank)].op != Op::None)
    return Status::error("rank " + std::to_string(rank) +
                         " made two collective calls in one round");
  calls_[size_t(rank)] = std::move(call);
  return Status::ok();
}

Status EmulatedGroup::endRound() {
  inRound_ = false;
  Status st = launch();
  if (!st)
    abort(st.message());
  return st;
}

Status EmulatedGroup::launch() {
  const Call &c0 = calls_[0];
  const int n = int(calls_.size());
  for (int r = 0; r < n; ++r) {
    const Call &c = calls_[size_t(r)];
    if (c.op == Op::None)
      return Status::error("rank " + std::to_string(r) +
                           " made no collective call in the round");
    if (c.op != c0.op || c.count != c0.count || c.dtype != c0.dtype ||
        c.counts != c0.counts)
      return Status::error(
          "ranks disagree on the collective: rank 0 called " +
          describeCall(opName(c0.op), c0.count, c0.dtype) + ", rank " +
          std::to_string(r) + " " + describeCall(opName(c.op), c.count, c.dtype));
  }
  if (c0.op == Op::Barrier)
    return Status::ok();
  if (!isValidDType(int32_t(c0.dtype)))
    return Status::error("invalid dtype in a collective");
  const size_t es = dtypeSize(c0.dtype);
  const bool reduces = c0.op == Op::AllReduce || c0.op == Op::ReduceScatter;
  if (reduces && !isReducibleDType(c0.dtype))
    return Status::error(describeCall(opName(c0.op), c0.count, c0.dtype) +
                         ": cannot sum this dtype");
  if (c0.op == Op::AllGatherV && c0.counts.size() != size_t(n))
    return Status::error("allGatherV needs one count per rank");

  const void *srcs[kMaxRanks];
  void *dsts[kMaxRanks];
  switch (c0.op) {
  case Op::AllReduce: {
    for (int r = 0; r < n; ++r) {
      srcs[r] = calls_[size_t(r)].send;
      dsts[r] = calls_[size_t(r)].recv;
    }
    cudaError_t err =
        cuda::sumAcross(c0.dtype, c0.count, srcs, n, dsts, n, stream_);
    if (err != cudaSuccess)
      return cuda::cudaStatus(err, "emulated allReduce");
    return Status::ok();
  }
  case Op::ReduceScatter: {
    // Rank r's block of every rank, summed into rank r's output. Blocks of
    // different r never overlap, so an in-place output is safe.
    for (int r = 0; r < n; ++r) {
      for (int q = 0; q < n; ++q)
        srcs[q] = static_cast<const char *>(calls_[size_t(q)].send) +
                  size_t(r) * c0.count * es;
      void *dst = calls_[size_t(r)].recv;
      cudaError_t err =
          cuda::sumAcross(c0.dtype, c0.count, srcs, n, &dst, 1, stream_);
      if (err != cudaSuccess)
        return cuda::cudaStatus(err, "emulated reduceScatter");
    }
    return Status::ok();
  }
  case Op::AllGather:
  case Op::AllGatherV: {
    std::vector<size_t> counts =
        c0.op == Op::AllGather ? std::vector<size_t>(size_t(n), c0.count)
                               : c0.counts;
    size_t offset = 0;
    for (int q = 0; q < n; ++q) {
      const size_t bytes = counts[size_t(q)] * es;
      for (int r = 0; r < n && bytes; ++r) {
        char *dst = static_cast<char *>(calls_[size_t(r)].recv) + offset;
        // In place: rank q's block already holds its contribution.
        if (dst == calls_[size_t(q)].send)
          continue;
        TPC_CUDA_CHECK(cudaMemcpyAsync(dst, calls_[size_t(q)].send, bytes,
                                       cudaMemcpyDeviceToDevice, stream_));
      }
      offset += bytes;
    }
    return Status::ok();
  }
  default:
    return Status::error("unknown collective");
  }
}

Status EmulatedGroup::poll() {
  if (aborted_)
    return Status::error("the emulated communicator was aborted: " +
                         abortReason_);
  return Status::ok();
}

void EmulatedGroup::abort(const std::string &reason) {
  if (!aborted_) {
    aborted_ = true;
    abortReason_ = reason;
  }
}

} // namespace tpc
