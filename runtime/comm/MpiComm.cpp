//===- MpiComm.cpp --------------------------------------------------------===//
#include "runtime/comm/MpiComm.h"


#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#define TPC_LSAN 1
#endif
#endif

#include <climits>
#include <cstdlib>
#include <cstdio>
#include <cstring>

namespace tpc {

namespace {

enum OpCode : int64_t {
  kAllReduce = 1,
  kAllGather,
  kAllGatherV,
  kReduceScatter,
  kBarrier
};

const char *opCodeName(int64_t op) {
  switch (op) {
  case kAllReduce: return "allReduce";
  case kAllGather: return "allGather";
  case kAllGatherV: return "allGatherV";
  case kReduceScatter: return "reduceScatter";
  case kBarrier: return "barrier";
  default: return "?";
  }
}

/// The MPI type that carries elements of `t`. 16-bit floats travel as
/// uint16 and are summed by our own operations.
MPI_Datatype mpiType(DType t) {
  switch (t) {
  case DType::F32: return MPI_FLOAT;
  case DType::F64: return MPI_DOUBLE;
  case DType::I32: return MPI_INT32_T;
  case DType::I64: return MPI_INT64_T;
  case DType::F16:
  case DType::BF16: return MPI_UINT16_T;
  case DType::I8: return MPI_INT8_T;
  case DType::I16: return MPI_INT16_T;
  case DType::U16: return MPI_UINT16_T;
  case DType::U32: return MPI_UINT32_T;
  case DType::U64: return MPI_UINT64_T;
  case DType::U8:
  case DType::Bool: return MPI_UINT8_T;
  default:
    // float8 and 4-/2-bit integers move as their bytes (never summed:
    // isReducibleDType refuses them).
    return isStorageOnlyDType(t) ? MPI_UINT8_T : MPI_DATATYPE_NULL;
  }
}

void sumF16(void *in, void *inout, int *len, MPI_Datatype *) {
  addElements(in, inout, inout, size_t(*len), DType::F16);
}

void sumBf16(void *in, void *inout, int *len, MPI_Datatype *) {
  addElements(in, inout, inout, size_t(*len), DType::BF16);
}

bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  if (!a || !b || aBytes == 0 || bBytes == 0)
    return false;
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bBytes && y < x + aBytes;
}

/// FNV-1a over the counts, so ranks can compare vectors through one int64.
uint64_t hashCounts(const std::vector<size_t> &counts) {
  uint64_t h = 1469598103934665603ull;
  for (size_t c : counts)
    for (int i = 0; i < 8; ++i) {
      h ^= (uint64_t(c) >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  return h;
}

std::string dtypeText(DType t) {
  return isValidDType(int32_t(t)) ? dtypeName(t) : "invalid dtype";
}

} // namespace

Status initMpi(int *argc, char ***argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    return Status::ok();
  int provided = 0;
#ifdef TPC_LSAN
  // Open MPI is not leak-clean: its progress thread and the components it
  // unloads at MPI_Finalize leave allocations LeakSanitizer reports, with
  // stacks through unloaded code that no suppression can name. So a process
  // of the sanitizer build checks its leaks up to here, and not after
  // (AddressSanitizer and UBSan stay on).
  __lsan_do_leak_check();
#endif
  int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
  if (rc != MPI_SUCCESS)
    return Status::error("MPI_Init_thread failed with code " +
                         std::to_string(rc));
  if (provided < MPI_THREAD_SERIALIZED)
    return Status::error("MPI provides thread level " +
                         std::to_string(provided) +
                         ", below MPI_THREAD_SERIALIZED");
  return Status::ok();
}

Status finalizeMpi() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    return Status::ok();
  int rc = MPI_Finalize();
  if (rc != MPI_SUCCESS)
    return Status::error("MPI_Finalize failed with code " + std::to_string(rc));
  return Status::ok();
}

Status MpiCommunicator::create(MPI_Comm comm,
                               std::unique_ptr<MpiCommunicator> &out,
                               const MpiOptions &options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return Status::error("MPI communicator: MPI is not initialised");
  std::unique_ptr<MpiCommunicator> c(new MpiCommunicator());
  c->options_ = options;
  int rc = MPI_Comm_dup(comm, &c->comm_);
  if (rc != MPI_SUCCESS) {
    c->comm_ = MPI_COMM_NULL;
    return c->mpiError("MPI_Comm_dup", rc);
  }
  MPI_Comm_set_errhandler(c->comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(c->comm_, &c->rank_);
  MPI_Comm_size(c->comm_, &c->size_);
  // Commutative: MPI may then pick its fastest algorithm. Results are still
  // identical on every rank because the standard algorithms reduce each
  // element once and broadcast it, and a + b == b + a exactly.
  MPI_Op_create(sumF16, /*commute=*/1, &c->sumF16_);
  MPI_Op_create(sumBf16, /*commute=*/1, &c->sumBf16_);
  out = std::move(c);
  return Status::ok();
}

Status MpiCommunicator::createWorld(std::unique_ptr<MpiCommunicator> &out,
                                    const MpiOptions &options) {
  return create(MPI_COMM_WORLD, out, options);
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  if (sumF16_ != MPI_OP_NULL)
    MPI_Op_free(&sumF16_);
  if (sumBf16_ != MPI_OP_NULL)
    MPI_Op_free(&sumBf16_);
  if (comm_ != MPI_COMM_NULL)
    MPI_Comm_free(&comm_);
}

Status MpiCommunicator::mpiError(const std::string &what, int code) const {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    length = std::snprintf(text, sizeof(text), "MPI error code %d", code);
  return Status::error("MPI communicator, rank " + std::to_string(rank_) +
                       " of " + std::to_string(size_) + ", " + what + ": " +
                       std::string(text, size_t(length)));
}

Status MpiCommunicator::validate(const std::string &what, int op, DType dtype,
                                 uint64_t countKey,
                                 const std::string &localError) {
  // Every field and its negation reduced with MAX gives max and -min at
  // once: the ranks agree iff max == min for every field.
  int64_t key = int64_t(countKey & ((uint64_t(1) << 62) - 1));
  int64_t fields[3] = {op, int64_t(dtype), key};
  int64_t reduced[7] = {fields[0],
                        fields[1],
                        fields[2],
                        -fields[0],
                        -fields[1],
                        -fields[2],
                        localError.empty() ? 0 : 1};
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = MPI_Iallreduce(MPI_IN_PLACE, reduced, 7, MPI_INT64_T, MPI_MAX,
                          comm_, &req);
  TPC_RETURN_IF_ERROR(complete(what + " (argument check)", rc, req));
  bool agree = reduced[0] == -reduced[3] && reduced[1] == -reduced[4] &&
               reduced[2] == -reduced[5];
  // Every decision below depends only on `reduced`, which all ranks share,
  // so all ranks take the same path (and make the same MPI calls).
  if (agree && reduced[6] == 0)
    return Status::ok();
  if (agree)
    return fail(what, localError.empty()
                          ? "another rank passed invalid arguments"
                          : "invalid arguments: " + localError);

  // Rare path: gather every rank's call to say exactly what differed.
  int64_t mine[4] = {op, int64_t(dtype), key, localError.empty() ? 0 : 1};
  std::vector<int64_t> all(size_t(size_) * 4);
  rc = MPI_Iallgather(mine, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, comm_,
                      &req);
  TPC_RETURN_IF_ERROR(complete(what + " (argument check)", rc, req));
  std::string msg = "ranks called mismatched collectives:";
  for (int r = 0; r < size_; ++r) {
    const int64_t *c = &all[size_t(r) * 4];
    std::string call = opCodeName(c[0]);
    if (c[0] == kBarrier)
      call += "()";
    else if (c[0] == kAllGatherV)
      call += "(counts hash " + std::to_string(c[2]) + ", " +
              dtypeText(DType(c[1])) + ")";
    else
      call = describeCall(opCodeName(c[0]), size_t(c[2]), DType(c[1]));
    msg += (r ? ", rank " : " rank ") + std::to_string(r) + " " + call;
    if (c[3])
      msg += " with invalid arguments";
  }
  if (!localError.empty())
    msg += "; this rank's arguments are invalid: " + localError;
  return fail(what, msg);
}

Status MpiCommunicator::fail(const std::string &what, const std::string &msg,
                             StatusCode code) const {
  return Status::error(code, "MPI communicator, rank " +
                                 std::to_string(rank_) + " of " +
                                 std::to_string(size_) + ", " + what + ": " +
                                 msg);
}

std::string MpiCommunicator::reduction(DType dtype, MPI_Datatype &type,
                                       MPI_Op &op) const {
  if (!isReducibleDType(dtype))
    return "cannot sum-reduce " + dtypeText(dtype);
  type = mpiType(dtype);
  op = dtype == DType::F16    ? sumF16_
       : dtype == DType::BF16 ? sumBf16_
                              : MPI_SUM;
  return "";
}

Status MpiCommunicator::allReduce(const void *send, void *recv, size_t count,
                                  DType dtype) {
  std::string what = describeCall("allReduce", count, dtype);
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  std::string local = reduction(dtype, type, op);
  size_t bytes = local.empty() ? count * dtypeSize(dtype) : 0;
  if (local.empty() && bytes > 0 && (!send || !recv))
    local = "null buffer";
  else if (local.empty() && send != recv && overlaps(send, bytes, recv, bytes))
    local = "send and recv overlap without being equal";
  if (options_.validateCalls)
    TPC_RETURN_IF_ERROR(validate(what, kAllReduce, dtype, count, local));
  else if (!local.empty())
    return fail(what, local);

  // MPI counts are ints: reduce very large buffers in pieces.
  const size_t maxPiece = size_t(1) << 30;
  size_t elem = dtypeSize(dtype);
  size_t done = 0;
  do {
    size_t piece = std::min(maxPiece, count - done);
    const void *src = send == recv
                          ? MPI_IN_PLACE
                          : static_cast<const char *>(send) + done * elem;
    void *dst = static_cast<char *>(recv) + done * elem;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Iallreduce(src, dst, int(piece), type, op, comm_, &req);
    TPC_RETURN_IF_ERROR(complete(what, rc, req));
    done += piece;
  } while (done < count);
  return Status::ok();
}

Status MpiCommunicator::allGather(const void *send, void *recv, size_t count,
                                  DType dtype) {
  std::string what = describeCall("allGather", count, dtype);
  std::string local;
  size_t elem = isValidDType(int32_t(dtype)) ? dtypeSize(dtype) : 0;
  const char *own =
      static_cast<const char *>(recv) + size_t(rank_) * count * elem;
  if (!elem)
    local = "invalid dtype";
  else if (count > size_t(INT_MAX) / size_t(size_))
    local = "count exceeds MPI's int range";
  else if (count > 0 && (!send || !recv))
    local = "null buffer";
  else if (send != own &&
           overlaps(send, count * elem, recv, count * elem * size_t(size_)))
    local = "send overlaps recv but is not this rank's block of it";
  if (options_.validateCalls)
    TPC_RETURN_IF_ERROR(validate(what, kAllGather, dtype, count, local));
  else if (!local.empty())
    return fail(what, local);

  MPI_Datatype type = mpiType(dtype);
  const void *src = send == own ? MPI_IN_PLACE : send;
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = MPI_Iallgather(src, int(count), type, recv, int(count), type, comm_,
                          &req);
  return complete(what, rc, req);
}

Status MpiCommunicator::allGatherV(const void *send, void *recv,
                                   const std::vector<size_t> &counts,
                                   DType dtype) {
  std::string what = std::string("allGatherV(") + dtypeText(dtype) + ")";
  std::string local;
  size_t elem = isValidDType(int32_t(dtype)) ? dtypeSize(dtype) : 0;
  std::vector<int> intCounts, displs;
  size_t total = 0, before = 0;
  if (counts.size() != size_t(size_)) {
    local = "counts has " + std::to_string(counts.size()) + " entries for " +
            std::to_string(size_) + " ranks";
  } else {
    for (size_t r = 0; r < counts.size(); ++r) {
      if (r == size_t(rank_))
        before = total;
      displs.push_back(int(total));
      intCounts.push_back(int(counts[r]));
      total += counts[r];
      if (total > size_t(INT_MAX)) {
        local = "total count exceeds MPI's int range";
        break;
      }
    }
  }
  size_t mine = local.empty() ? counts[size_t(rank_)] : 0;
  const char *own = static_cast<const char *>(recv) + before * elem;
  if (local.empty()) {
    if (!elem)
      local = "invalid dtype";
    else if ((mine > 0 && !send) || (total > 0 && !recv))
      local = "null buffer";
    else if (send != own && overlaps(send, mine * elem, recv, total * elem))
      local = "send overlaps recv but is not this rank's block of it";
  }
  if (options_.validateCalls)
    TPC_RETURN_IF_ERROR(
        validate(what, kAllGatherV, dtype, hashCounts(counts), local));
  else if (!local.empty())
    return fail(what, local);

  MPI_Datatype type = mpiType(dtype);
  const void *src = send == own ? MPI_IN_PLACE : send;
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = MPI_Iallgatherv(src, int(mine), type, recv, intCounts.data(),
                           displs.data(), type, comm_, &req);
  return complete(what, rc, req);
}

Status MpiCommunicator::reduceScatter(const void *send, void *recv,
                                      size_t count, DType dtype) {
  std::string what = describeCall("reduceScatter", count, dtype);
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  std::string local = reduction(dtype, type, op);
  size_t elem = local.empty() ? dtypeSize(dtype) : 0;
  const char *own =
      static_cast<const char *>(send) + size_t(rank_) * count * elem;
  bool inPlace = local.empty() && count > 0 && recv == own;
  if (local.empty()) {
    if (count > size_t(INT_MAX))
      local = "count exceeds MPI's int range";
    else if (count > 0 && (!send || !recv))
      local = "null buffer";
    else if (!inPlace &&
             overlaps(send, count * elem * size_t(size_), recv, count * elem))
      local = "recv overlaps send but is not this rank's block of it";
  }
  if (options_.validateCalls)
    TPC_RETURN_IF_ERROR(validate(what, kReduceScatter, dtype, count, local));
  else if (!local.empty())
    return fail(what, local);

  // MPI's in-place form takes the input from recv and leaves the result at
  // its start, which is not this interface's in-place form (result in this
  // rank's block of send); reduce into a scratch buffer instead.
  std::vector<char> scratch(inPlace ? count * elem : 0);
  void *dst = inPlace ? scratch.data() : recv;
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = MPI_Ireduce_scatter_block(send, dst, int(count), type, op, comm_,
                                     &req);
  TPC_RETURN_IF_ERROR(complete(what, rc, req));
  if (inPlace)
    std::memcpy(recv, scratch.data(), scratch.size());
  return Status::ok();
}

Status MpiCommunicator::barrier() {
  if (options_.validateCalls)
    TPC_RETURN_IF_ERROR(validate("barrier()", kBarrier, DType::F32, 0, ""));
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = MPI_Ibarrier(comm_, &req);
  return complete("barrier()", rc, req);
}

Status MpiCommunicator::complete(const std::string &what, int startCode,
                                 MPI_Request &req) {
  if (startCode != MPI_SUCCESS)
    return mpiError(what, startCode);
  // Poll rather than block, so that a peer that never arrives (stopped,
  // hung in a kernel, or dead without mpirun noticing) fails this rank after
  // the timeout instead of spinning forever. MPI_Wait spins as well, so the
  // latency is the same; the clock is read only every few hundred polls.
  const auto start = std::chrono::steady_clock::now();
  for (unsigned polls = 0;; ++polls) {
    int done = 0;
    int rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return mpiError(what, rc);
    if (done)
      return Status::ok();
    if (polls % 256 == 255 && options_.timeout.count() > 0 &&
        std::chrono::steady_clock::now() - start > options_.timeout)
      // The request stays pending: the caller aborts the job (MPI_Abort),
      // which is the only way to end a collective that cannot complete.
      return fail(what, "did not complete within " +
                            std::to_string(options_.timeout.count() / 1000) +
                            " s: a peer rank is stuck or has died (the timeout "
                            "is tpc run's --comm-timeout)",
                  StatusCode::DeadlineExceeded);
  }
}

void MpiCommunicator::abort(const std::string &reason) {
  std::fprintf(stderr, "tpc: rank %d of %d aborting the MPI job: %s\n", rank_,
               size_, reason.c_str());
  std::fflush(stderr);
  MPI_Abort(comm_, 1);
}

} // namespace tpc
