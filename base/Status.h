//===- Status.h - Success or a coded error ----------------------*- C++ -*-===//
//
// The error type of everything below the compiler: the kernels, the engine
// format, the runtime, the communicators and the tools. A failed Status
// carries a code saying what kind of failure it is (the canonical codes
// gRPC, absl and IREE share) and a message for the user. Callers branch
// on the code, never on the message: the Python module raises a different
// exception class per code, and the tools may choose exit codes by it.
// Standard headers only.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_BASE_STATUS_H
#define TPC_BASE_STATUS_H

#include <string>
#include <utility>

namespace tpc {

enum class StatusCode {
  Ok = 0,
  /// Anything not classified below.
  Unknown,
  /// The caller passed something malformed: a flag, an input of the wrong
  /// shape or dtype, a file whose contents break its format.
  InvalidArgument,
  /// A named thing does not exist: a file, an input or output name.
  NotFound,
  /// A value outside its valid range, found while running: an index past
  /// its axis, a prompt longer than the cache.
  OutOfRange,
  /// The system is not in a state to do it: an engine whose earlier run
  /// failed, a decode call on an engine without a cache.
  FailedPrecondition,
  /// Memory or disk ran out.
  ResourceExhausted,
  /// A bounded wait ran out: a collective whose peer never arrived.
  DeadlineExceeded,
  /// Another participant failed: a peer rank's error ended this one.
  Aborted,
  /// Stored bytes do not match what was recorded (a digest, a size).
  DataLoss,
  /// A valid request this build or backend does not do.
  Unimplemented,
  /// A broken invariant inside tpc.
  Internal,
};

/// "INVALID_ARGUMENT", ...: the spelling of the canonical codes.
inline const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::Ok: return "OK";
  case StatusCode::Unknown: return "UNKNOWN";
  case StatusCode::InvalidArgument: return "INVALID_ARGUMENT";
  case StatusCode::NotFound: return "NOT_FOUND";
  case StatusCode::OutOfRange: return "OUT_OF_RANGE";
  case StatusCode::FailedPrecondition: return "FAILED_PRECONDITION";
  case StatusCode::ResourceExhausted: return "RESOURCE_EXHAUSTED";
  case StatusCode::DeadlineExceeded: return "DEADLINE_EXCEEDED";
  case StatusCode::Aborted: return "ABORTED";
  case StatusCode::DataLoss: return "DATA_LOSS";
  case StatusCode::Unimplemented: return "UNIMPLEMENTED";
  case StatusCode::Internal: return "INTERNAL";
  }
  return "UNKNOWN";
}

/// Success, or an error with a code and a message. Cheap to return;
/// [[nodiscard]] so that an error cannot be dropped silently.
class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(StatusCode code, std::string msg) {
    Status s;
    s.code_ = code == StatusCode::Ok ? StatusCode::Unknown : code;
    s.msg_ = std::move(msg);
    return s;
  }
  /// An error not (yet) classified: code Unknown.
  static Status error(std::string msg) {
    return error(StatusCode::Unknown, std::move(msg));
  }
  // Status::invalidArgument(msg), ...: one maker per code.
#define TPC_STATUS_MAKER(fn, code)                                             \
  static Status fn(std::string msg) {                                          \
    return error(StatusCode::code, std::move(msg));                            \
  }
  TPC_STATUS_MAKER(invalidArgument, InvalidArgument)
  TPC_STATUS_MAKER(notFound, NotFound)
  TPC_STATUS_MAKER(outOfRange, OutOfRange)
  TPC_STATUS_MAKER(failedPrecondition, FailedPrecondition)
  TPC_STATUS_MAKER(resourceExhausted, ResourceExhausted)
  TPC_STATUS_MAKER(deadlineExceeded, DeadlineExceeded)
  TPC_STATUS_MAKER(aborted, Aborted)
  TPC_STATUS_MAKER(dataLoss, DataLoss)
  TPC_STATUS_MAKER(unimplemented, Unimplemented)
  TPC_STATUS_MAKER(internal, Internal)
#undef TPC_STATUS_MAKER

  bool isOk() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return msg_; }
  /// Prefixes the message with context ("step 12 (Softmax): "); the code
  /// stays.
  Status withContext(const std::string &ctx) const {
    return isOk() ? Status() : error(code_, ctx + msg_);
  }

private:
  StatusCode code_ = StatusCode::Ok;
  std::string msg_;
};

#define TPC_RETURN_IF_ERROR(expr)                                              \
  do {                                                                         \
    ::tpc::Status _tpcStatus = (expr);                                         \
    if (!_tpcStatus.isOk())                                                    \
      return _tpcStatus;                                                       \
  } while (0)

} // namespace tpc

#endif // TPC_BASE_STATUS_H
