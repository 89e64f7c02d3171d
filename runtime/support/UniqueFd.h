//===- UniqueFd.h - A file descriptor closed with its owner -----*- C++ -*-===//
//
// Mapped files, hashed files, atomically written files and locked engine
// folders all hold a POSIX descriptor; this owns one, so that no error path
// has to remember to close it.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_SUPPORT_UNIQUEFD_H
#define TPC_RUNTIME_SUPPORT_UNIQUEFD_H

#include "base/Status.h"

#include <string>

namespace tpc {

/// Owns a descriptor (or none, -1). Move-only.
class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd &&other) noexcept : fd_(other.release()) {}
  UniqueFd &operator=(UniqueFd &&other) noexcept {
    if (this != &other)
      reset(other.release());
    return *this;
  }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  /// Hands the descriptor to the caller; this object owns none after.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  /// Closes the descriptor held (if any) and takes `fd` instead.
  void reset(int fd = -1);

private:
  int fd_ = -1;
};

/// Opens `path` read-only and close-on-exec, retrying when a signal
/// interrupts the call. A missing file is NOT_FOUND, any other failure
/// INVALID_ARGUMENT, with a message "PATH: cannot open: REASON".
Status openForReading(const std::string &path, UniqueFd &out);

} // namespace tpc

#endif // TPC_RUNTIME_SUPPORT_UNIQUEFD_H
