//===- InProcessComm.cpp --------------------------------------------------===//
//
// Protocol of one collective on rank r:
//  1. describe the call in this collective's slot (slots alternate between
//     two arrays by sequence number, so a fast rank posting collective n+1
//     never overwrites a slot that a slow rank still reads for collective n);
//  2. barrier; then every rank checks all the posted calls, identically, so
//     a mismatch is reported on all ranks with the same message;
//  3. data phases, separated by barriers, then a final barrier after which
//     no rank touches another rank's buffers.
// A rank is "busy" from the barrier that starts a data phase until it enters
// the next barrier. A rank that fails first waits until no rank is busy, so
// that when the error reaches the caller nobody still uses its buffers.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/InProcessComm.h"

#include "kernels/Half.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>

namespace tpc {
namespace detail {

enum class Op {
  AllReduce,
  AllGather,
  AllGatherV,
  AllGatherRows,
  ReduceScatter,
  Barrier
};

const char *opName(Op op) {
  switch (op) {
  case Op::AllReduce: return "allReduce";
  case Op::AllGather: return "allGather";
  case Op::AllGatherV: return "allGatherV";
  case Op::AllGatherRows: return "allGatherRows";
  case Op::ReduceScatter: return "reduceScatter";
  case Op::Barrier: return "barrier";
  }
  return "?";
}

/// One rank's description of the collective it called.
struct Call {
  Op op = Op::Barrier;
  DType dtype = DType::F32;
  /// Elements; allGatherV: this rank's share; allGatherRows: the rows.
  size_t count = 0;
  std::vector<size_t> counts; // allGatherV and allGatherRows only.
  const char *send = nullptr;
  char *recv = nullptr;
  /// Set when this rank's own arguments are invalid.
  std::string localError;

  std::string describe() const {
    if (op == Op::Barrier)
      return "barrier()";
    if (op != Op::AllGatherV && op != Op::AllGatherRows)
      return describeCall(opName(op), count, dtype);
    std::string s = std::string(opName(op)) + "(";
    if (op == Op::AllGatherRows)
      s += "rows=" + std::to_string(count) + ", ";
    s += "counts=[";
    for (size_t i = 0; i < counts.size(); ++i)
      s += (i ? "," : "") + std::to_string(counts[i]);
    return s + "], " +
           (isValidDType(int32_t(dtype)) ? dtypeName(dtype) : "invalid") + ")";
  }

  /// Whether two ranks' calls belong to the same collective. For
  /// allGatherV `count` is the rank's own share, so only `counts` must agree.
  bool matches(const Call &o) const {
    if (op != o.op)
      return false;
    if (op == Op::Barrier)
      return true;
    if (op == Op::AllGatherV)
      return dtype == o.dtype && counts == o.counts;
    if (op == Op::AllGatherRows)
      return dtype == o.dtype && counts == o.counts && count == o.count;
    return dtype == o.dtype && count == o.count;
  }
};

/// A few microseconds of polling before a barrier sleeps.
constexpr int kSpinIterations = 256;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class InProcessState {
public:
  InProcessState(int size, const InProcessOptions &options)
      : size(size), options(options), arrivedFlags(size_t(size), 0),
        busy(size_t(size), 0), taken(size_t(size), 0) {
    calls[0].resize(size_t(size));
    calls[1].resize(size_t(size));
  }

  void abort(const std::string &reason) {
    std::lock_guard<std::mutex> lock(mu);
    abortLocked(reason);
  }

  /// Barrier. When `dataFollows`, every rank is marked busy as the barrier
  /// completes. Fails if the group is or becomes aborted, or on timeout
  /// (which aborts the group).
  Status wait(int rank, bool dataFollows) {
    std::unique_lock<std::mutex> lock(mu);
    busy[size_t(rank)] = 0;
    if (aborted) {
      cv.notify_all(); // A draining rank may be waiting for `busy` to clear.
      return Status::aborted(abortReason);
    }
    const uint64_t gen = generation.load(std::memory_order_relaxed);
    arrivedFlags[size_t(rank)] = 1;
    if (++arrived == size) {
      arrived = 0;
      std::fill(arrivedFlags.begin(), arrivedFlags.end(), 0);
      if (dataFollows)
        std::fill(busy.begin(), busy.end(), 1);
      generation.fetch_add(1, std::memory_order_release);
      cv.notify_all();
      return Status::ok();
    }
    // Ranks on cores of their own usually arrive within microseconds of
    // each other: spin a little before sleeping on the condition variable,
    // whose wake-up costs tens of microseconds per barrier. Not when ranks
    // outnumber the cores, where spinning only delays the missing rank.
    if (spinBeforeSleep) {
      lock.unlock();
      for (int i = 0; i < kSpinIterations &&
                      generation.load(std::memory_order_acquire) == gen &&
                      !abortedFlag.load(std::memory_order_relaxed);
           ++i)
        cpuRelax();
      lock.lock();
    }
    auto deadline = std::chrono::steady_clock::now() + options.timeout;
    for (;;) {
      // Completion wins over a concurrent abort: the barrier did complete,
      // and the caller's next step will notice the abort.
      if (generation.load(std::memory_order_relaxed) != gen)
        return Status::ok();
      if (aborted)
        return Status::aborted(abortReason);
      if (cv.wait_until(lock, deadline) == std::cv_status::timeout &&
          generation.load(std::memory_order_relaxed) == gen && !aborted) {
        std::string missing;
        for (int r = 0; r < size; ++r)
          if (!arrivedFlags[size_t(r)])
            missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        abortLocked("rank " + std::to_string(rank) + " timed out after " +
                    std::to_string(options.timeout.count()) +
                    " ms waiting for rank(s) " + missing);
        return Status::deadlineExceeded(abortReason);
      }
    }
  }

  /// Called by a rank on its way out with an error: waits until no peer is
  /// in a data phase. Data phases never block, so this wait is short.
  void drain(int rank) {
    std::unique_lock<std::mutex> lock(mu);
    busy[size_t(rank)] = 0;
    cv.notify_all();
    cv.wait(lock, [&] {
      return std::none_of(busy.begin(), busy.end(), [](char b) { return b; });
    });
  }

  const int size;
  const InProcessOptions options;
  std::mutex mu;
  std::condition_variable cv;
  bool aborted = false;
  std::string abortReason;
  int arrived = 0;
  /// Written under `mu`; also read without it while spinning.
  std::atomic<uint64_t> generation{0};
  std::atomic<bool> abortedFlag{false};
  const bool spinBeforeSleep =
      size > 1 && unsigned(size) <= std::thread::hardware_concurrency();
  std::vector<char> arrivedFlags;
  std::vector<char> busy;
  std::vector<char> taken;
  /// Posted calls, indexed by sequence number parity, then rank.
  std::vector<Call> calls[2];

private:
  void abortLocked(const std::string &reason) {
    if (!aborted) {
      aborted = true;
      abortedFlag.store(true, std::memory_order_relaxed);
      abortReason = reason;
    }
    cv.notify_all();
  }
};

} // namespace detail

namespace {

using detail::Call;
using detail::Op;

/// Sums `n` source arrays element-wise, in source order, into dst. `dst` may
/// alias a source: each block is accumulated in a local buffer first.
template <typename T, typename A, A (*Load)(T), T (*Store)(A)>
void sumSources(const char *const *srcs, int n, char *dst, size_t count) {
  constexpr size_t kBlock = 512;
  A acc[kBlock];
  for (size_t base = 0; base < count; base += kBlock) {
    size_t m = std::min(kBlock, count - base);
    size_t offset = base * sizeof(T);
    for (size_t i = 0; i < m; ++i) {
      T v;
      std::memcpy(&v, srcs[0] + offset + i * sizeof(T), sizeof(T));
      acc[i] = Load(v);
    }
    for (int k = 1; k < n; ++k)
      for (size_t i = 0; i < m; ++i) {
        T v;
        std::memcpy(&v, srcs[k] + offset + i * sizeof(T), sizeof(T));
        acc[i] += Load(v);
      }
    for (size_t i = 0; i < m; ++i) {
      T v = Store(acc[i]);
      std::memcpy(dst + offset + i * sizeof(T), &v, sizeof(T));
    }
  }
}

template <typename T> T identity(T v) { return v; }

/// Dispatches on dtype. Half types accumulate in float and round once, so
/// the result does not depend on how many ranks there are beyond the
/// float's own rounding.
void sumSources(const char *const *srcs, int n, char *dst, size_t count,
                DType dtype) {
  switch (dtype) {
  case DType::F32:
    return sumSources<float, float, identity, identity>(srcs, n, dst, count);
  case DType::F64:
    return sumSources<double, double, identity, identity>(srcs, n, dst, count);
  case DType::I32: // Unsigned: wraps on overflow instead of undefined.
    return sumSources<uint32_t, uint32_t, identity, identity>(srcs, n, dst,
                                                              count);
  case DType::I64:
    return sumSources<uint64_t, uint64_t, identity, identity>(srcs, n, dst,
                                                              count);
  case DType::F16:
    return sumSources<uint16_t, float, halfToFloat, floatToHalf>(srcs, n, dst,
                                                                 count);
  case DType::BF16:
    return sumSources<uint16_t, float, bf16ToFloat, floatToBf16>(srcs, n, dst,
                                                                 count);
  default: return;
  }
}

bool overlaps(const char *a, size_t aBytes, const char *b, size_t bBytes) {
  if (!a || !b || aBytes == 0 || bBytes == 0)
    return false;
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bBytes && y < x + aBytes;
}

/// a * b, or false on overflow.
bool checkedMul(size_t a, size_t b, size_t &out) {
  if (b != 0 && a > std::numeric_limits<size_t>::max() / b)
    return false;
  out = a * b;
  return true;
}

class InProcessComm final : public Communicator {
public:
  InProcessComm(std::shared_ptr<detail::InProcessState> state, int rank)
      : state_(std::move(state)), rank_(rank) {}

  ~InProcessComm() override {
    state_->abort("rank " + std::to_string(rank_) +
                  " left the group (its communicator was destroyed)");
  }

  int rank() const override { return rank_; }
  int size() const override { return state_->size; }

  Status allReduce(const void *send, void *recv, size_t count,
                   DType dtype) override {
    return run(makeCall(Op::AllReduce, send, recv, count, dtype, {}));
  }
  Status allGather(const void *send, void *recv, size_t count,
                   DType dtype) override {
    return run(makeCall(Op::AllGather, send, recv, count, dtype, {}));
  }
  Status allGatherV(const void *send, void *recv,
                    const std::vector<size_t> &counts, DType dtype) override {
    size_t own = size_t(rank_) < counts.size() ? counts[size_t(rank_)] : 0;
    return run(makeCall(Op::AllGatherV, send, recv, own, dtype, counts));
  }
  /// Every rank copies each peer's rows straight from the peer's send
  /// buffer to their place in its own recv: one pass, no scratch.
  Status allGatherRows(const void *send, void *recv, size_t outer,
                       const std::vector<size_t> &counts, DType dtype,
                       void * /*scratch*/) override {
    return run(makeCall(Op::AllGatherRows, send, recv, outer, dtype, counts));
  }
  bool gathersRowsInPlace() const override { return true; }
  Status reduceScatter(const void *send, void *recv, size_t count,
                       DType dtype) override {
    return run(makeCall(Op::ReduceScatter, send, recv, count, dtype, {}));
  }
  Status barrier() override { return run(Call()); }

  void abort(const std::string &reason) override {
    state_->abort("rank " + std::to_string(rank_) + " aborted: " + reason);
  }

private:
  Call makeCall(Op op, const void *send, void *recv, size_t count, DType dtype,
                std::vector<size_t> counts) const;
  std::string checkArguments(const Call &c) const;
  std::string checkCalls(const std::vector<Call> &calls) const;
  Status run(Call call);
  Status fail(const std::string &what, const std::string &msg,
              StatusCode code = StatusCode::InvalidArgument) {
    state_->drain(rank_);
    return Status::error(code, "in-process communicator, rank " +
                                   std::to_string(rank_) + " of " +
                                   std::to_string(size()) + ", " + what +
                                   ": " + msg);
  }

  std::shared_ptr<detail::InProcessState> state_;
  int rank_;
  uint64_t sequence_ = 0;
};

Call InProcessComm::makeCall(Op op, const void *send, void *recv, size_t count,
                             DType dtype, std::vector<size_t> counts) const {
  Call c;
  c.op = op;
  c.dtype = dtype;
  c.count = count;
  c.counts = std::move(counts);
  c.send = static_cast<const char *>(send);
  c.recv = static_cast<char *>(recv);
  c.localError = checkArguments(c);
  return c;
}

std::string InProcessComm::checkArguments(const Call &c) const {
  if (c.op == Op::Barrier)
    return "";
  if (!isValidDType(int32_t(c.dtype)))
    return "invalid dtype " + std::to_string(int32_t(c.dtype));
  bool reduces = c.op == Op::AllReduce || c.op == Op::ReduceScatter;
  if (reduces && !isReducibleDType(c.dtype))
    return std::string("cannot sum-reduce ") + dtypeName(c.dtype);
  size_t elem = dtypeSize(c.dtype);
  size_t n = size_t(size());
  size_t sendBytes = 0, recvBytes = 0, ownOffset = 0;
  bool ok = true;
  switch (c.op) {
  case Op::AllReduce:
    ok = checkedMul(c.count, elem, sendBytes);
    recvBytes = sendBytes;
    break;
  case Op::AllGather:
  case Op::ReduceScatter: {
    // One side is this rank's block of count elements, the other holds
    // every rank's block in rank order.
    size_t &block = c.op == Op::AllGather ? sendBytes : recvBytes;
    size_t &all = c.op == Op::AllGather ? recvBytes : sendBytes;
    ok = checkedMul(c.count, elem, block) && checkedMul(block, n, all);
    ownOffset = block * size_t(rank_);
    break;
  }
  case Op::AllGatherV:
  case Op::AllGatherRows: {
    if (c.counts.size() != n)
      return "counts has " + std::to_string(c.counts.size()) + " entries for " +
             std::to_string(n) + " ranks";
    size_t total = 0;
    for (size_t r = 0; r < n; ++r) {
      if (r == size_t(rank_))
        ownOffset = total;
      ok = ok && total <= std::numeric_limits<size_t>::max() - c.counts[r];
      total += c.counts[r];
    }
    if (c.op == Op::AllGatherRows) {
      // count is the rows; every row holds counts[rank] elements here.
      size_t rowBytes = 0;
      ok = ok && checkedMul(c.counts[size_t(rank_)], elem, rowBytes) &&
           checkedMul(rowBytes, c.count, sendBytes) &&
           checkedMul(total, elem, recvBytes) &&
           checkedMul(recvBytes, c.count, recvBytes);
      break;
    }
    ok = ok && checkedMul(c.count, elem, sendBytes) &&
         checkedMul(total, elem, recvBytes) &&
         checkedMul(ownOffset, elem, ownOffset);
    break;
  }
  case Op::Barrier: break;
  }
  if (!ok)
    return "element count overflows";
  if (sendBytes > 0 && !c.send)
    return "send buffer is null";
  if (recvBytes > 0 && !c.recv)
    return "recv buffer is null";
  // The in-place forms are safe (see the data phases); any other overlap of
  // send and recv would let a peer read data this rank already overwrote.
  if (!overlaps(c.send, sendBytes, c.recv, recvBytes))
    return "";
  switch (c.op) {
  case Op::AllReduce:
    if (c.send == c.recv)
      return "";
    return "send and recv overlap without being equal";
  case Op::AllGather:
  case Op::AllGatherV:
    if (c.send == c.recv + ownOffset)
      return "";
    return "send overlaps recv but is not this rank's block of it";
  case Op::AllGatherRows:
    return "send and recv overlap";
  case Op::ReduceScatter:
    if (c.recv == c.send + ownOffset)
      return "";
    return "recv overlaps send but is not this rank's block of it";
  case Op::Barrier: break;
  }
  return "";
}

std::string InProcessComm::checkCalls(const std::vector<Call> &calls) const {
  std::string errors;
  for (size_t r = 0; r < calls.size(); ++r)
    if (!calls[r].localError.empty())
      errors += (errors.empty() ? "" : "; ") + std::string("rank ") +
                std::to_string(r) + " called " + calls[r].describe() +
                " with invalid arguments: " + calls[r].localError;
  if (!errors.empty())
    return errors;
  bool same = std::all_of(calls.begin(), calls.end(),
                          [&](const Call &c) { return c.matches(calls[0]); });
  if (same)
    return "";
  std::string msg = "ranks called mismatched collectives:";
  for (size_t r = 0; r < calls.size(); ++r)
    msg += (r ? ", rank " : " rank ") + std::to_string(r) + " " +
           calls[r].describe();
  return msg;
}

Status InProcessComm::run(Call call) {
  detail::InProcessState &st = *state_;
  uint64_t seq = sequence_++;
  std::string what =
      call.describe() + " (collective #" + std::to_string(seq) + ")";
  std::vector<Call> &calls = st.calls[seq & 1];
  calls[size_t(rank_)] = std::move(call);
  bool isBarrier = calls[size_t(rank_)].op == Op::Barrier;

  Status s = st.wait(rank_, /*dataFollows=*/!isBarrier);
  if (!s)
    return fail(what, s.message(), s.code());
  std::string problem = checkCalls(calls);
  if (!problem.empty()) {
    // Every rank computed the same message from the same posted calls.
    st.abort(problem);
    return fail(what, problem);
  }
  if (isBarrier)
    return Status::ok();

  const Call &mine = calls[size_t(rank_)];
  const int n = st.size;
  const size_t elem = dtypeSize(mine.dtype);
  std::vector<const char *> srcs(static_cast<size_t>(n));

  switch (mine.op) {
  case Op::AllReduce: {
    // Phase 1: rank r reduces chunk r of every rank's input into its own
    // output. Only rank r reads or writes chunk r, so in place is safe.
    size_t begin = mine.count * size_t(rank_) / size_t(n);
    size_t end = mine.count * size_t(rank_ + 1) / size_t(n);
    if (end > begin) {
      for (int k = 0; k < n; ++k)
        srcs[size_t(k)] = calls[size_t(k)].send + begin * elem;
      sumSources(srcs.data(), n, mine.recv + begin * elem, end - begin,
                 mine.dtype);
    }
    s = st.wait(rank_, /*dataFollows=*/true);
    if (!s)
      return fail(what, s.message(), s.code());
    // Phase 2: copy every other reduced chunk from its owner.
    for (int k = 0; k < n; ++k) {
      size_t b = mine.count * size_t(k) / size_t(n);
      size_t e = mine.count * size_t(k + 1) / size_t(n);
      if (k != rank_ && e > b)
        std::memcpy(mine.recv + b * elem, calls[size_t(k)].recv + b * elem,
                    (e - b) * elem);
    }
    break;
  }
  case Op::AllGather:
  case Op::AllGatherV: {
    size_t offset = 0;
    for (int k = 0; k < n; ++k) {
      size_t bytes =
          (mine.op == Op::AllGather ? mine.count : mine.counts[size_t(k)]) *
          elem;
      const char *src = calls[size_t(k)].send;
      // In place, this rank's block is already where it belongs.
      if (bytes > 0 && src != mine.recv + offset)
        std::memcpy(mine.recv + offset, src, bytes);
      offset += bytes;
    }
    break;
  }
  case Op::AllGatherRows: {
    size_t rowBytes = 0;
    for (size_t c : mine.counts)
      rowBytes += c * elem;
    size_t column = 0;
    for (int k = 0; k < n; ++k) {
      const size_t bytes = mine.counts[size_t(k)] * elem;
      const char *src = calls[size_t(k)].send;
      if (bytes > 0)
        for (size_t o = 0; o < mine.count; ++o)
          std::memcpy(mine.recv + o * rowBytes + column, src + o * bytes,
                      bytes);
      column += bytes;
    }
    break;
  }
  case Op::ReduceScatter: {
    if (mine.count > 0) {
      size_t offset = mine.count * size_t(rank_) * elem;
      for (int k = 0; k < n; ++k)
        srcs[size_t(k)] = calls[size_t(k)].send + offset;
      sumSources(srcs.data(), n, mine.recv, mine.count, mine.dtype);
    }
    break;
  }
  case Op::Barrier: break;
  }
  // Peers may still be reading this rank's buffers until everyone is here.
  s = st.wait(rank_, /*dataFollows=*/false);
  if (!s)
    return fail(what, s.message(), s.code());
  return Status::ok();
}

} // namespace

Status InProcessGroup::create(int size, InProcessGroup &out,
                              const InProcessOptions &options) {
  if (size < 1)
    return Status::error("in-process group needs at least one rank, got " +
                         std::to_string(size));
  out.state_ = std::make_shared<detail::InProcessState>(size, options);
  return Status::ok();
}

int InProcessGroup::size() const { return state_ ? state_->size : 0; }

std::unique_ptr<Communicator> InProcessGroup::take(int rank) {
  if (!state_ || rank < 0 || rank >= state_->size)
    return nullptr;
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->taken[size_t(rank)])
    return nullptr;
  state_->taken[size_t(rank)] = 1;
  return std::make_unique<InProcessComm>(state_, rank);
}

void InProcessGroup::abort(const std::string &reason) {
  if (state_)
    state_->abort("group aborted: " + reason);
}

} // namespace tpc
