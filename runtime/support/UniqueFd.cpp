//===- UniqueFd.cpp -------------------------------------------------------===//
#include "runtime/support/UniqueFd.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace tpc {

void UniqueFd::reset(int fd) {
  // Resetting to the descriptor already held keeps it open.
  if (fd_ >= 0 && fd_ != fd)
    ::close(fd_);
  fd_ = fd;
}

Status openForReading(const std::string &path, UniqueFd &out) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return Status::error(errno == ENOENT ? StatusCode::NotFound
                                         : StatusCode::InvalidArgument,
                         path + ": cannot open: " + std::strerror(errno));
  out.reset(fd);
  return Status::ok();
}

} // namespace tpc
