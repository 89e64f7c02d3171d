//===- AtomicFile.cpp -----------------------------------------------------===//
#include "runtime/support/AtomicFile.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace tpc {

AtomicFile::~AtomicFile() { discard(); }

AtomicFile &AtomicFile::operator=(AtomicFile &&other) noexcept {
  if (this != &other) {
    discard();
    fd_ = std::move(other.fd_);
    position_ = other.position_;
    path_ = std::move(other.path_);
    tempPath_ = std::move(other.tempPath_);
  }
  return *this;
}

Status AtomicFile::open(const std::string &path) {
  discard();
  if (path.empty())
    return Status::error("cannot write a file with an empty path");
  // mkstemp picks a unique name, so concurrent writers of the same path (two
  // ranks exporting the same shard) cannot clobber each other's temporaries;
  // the last rename wins with a complete file.
  std::vector<char> templ(path.begin(), path.end());
  const char suffix[] = ".tmp.XXXXXX";
  templ.insert(templ.end(), suffix, suffix + sizeof(suffix));
  int fd = ::mkostemp(templ.data(), O_CLOEXEC);
  if (fd < 0)
    return Status::error(
        path + ": cannot create temporary file: " + std::strerror(errno));
  // mkstemp creates mode 0600; give the result the usual umask-based mode.
  mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  fd_.reset(fd);
  position_ = 0;
  path_ = path;
  tempPath_ = templ.data();
  return Status::ok();
}

Status AtomicFile::writeAt(uint64_t offset, const void *data, size_t size) {
  if (!fd_.valid())
    return Status::error(path_ + ": write to a file that is not open");
  return writeAt(fd_.get(), path_, offset, data, size);
}

Status AtomicFile::writeAt(int fd, const std::string &path, uint64_t offset,
                           const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    // Large writes are split so each pwrite stays well below the kernel's
    // per-call limit (about 2 GiB).
    size_t piece = std::min(size, size_t(1) << 30);
    ssize_t n = ::pwrite(fd, p, piece, off_t(offset));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return Status::error(path + ": write failed: " + std::strerror(errno));
    }
    p += n;
    offset += uint64_t(n);
    size -= size_t(n);
  }
  return Status::ok();
}

Status AtomicFile::write(const void *data, size_t size) {
  TPC_RETURN_IF_ERROR(writeAt(position_, data, size));
  position_ += size;
  return Status::ok();
}

Status AtomicFile::writeWhole(const std::string &path,
                              const std::string &bytes) {
  AtomicFile file;
  TPC_RETURN_IF_ERROR(file.open(path));
  TPC_RETURN_IF_ERROR(file.write(bytes.data(), bytes.size()));
  return file.commit();
}

Status AtomicFile::commit() {
  if (!fd_.valid())
    return Status::error(path_ + ": commit of a file that is not open");
  if (::close(fd_.release()) != 0) {
    int err = errno;
    ::unlink(tempPath_.c_str());
    tempPath_.clear();
    return Status::error(path_ + ": close failed: " + std::strerror(err));
  }
  if (::rename(tempPath_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(tempPath_.c_str());
    tempPath_.clear();
    return Status::error(path_ + ": cannot rename temporary file into place: " +
                         std::strerror(err));
  }
  tempPath_.clear();
  return Status::ok();
}

void AtomicFile::discard() {
  // Only an open file has a temporary on disk (commit() has renamed or
  // removed it): a moved-from object's leftover name is not its own.
  if (!fd_.valid())
    return;
  fd_.reset();
  ::unlink(tempPath_.c_str());
  tempPath_.clear();
}

} // namespace tpc
