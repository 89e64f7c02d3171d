//===- MappedFile.cpp -----------------------------------------------------===//
#include "runtime/support/MappedFile.h"

#include "runtime/support/UniqueFd.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tpc {

namespace {

std::string errnoText(int err) { return std::strerror(err); }

} // namespace

MappedFile::~MappedFile() { close(); }

MappedFile::MappedFile(MappedFile &&other) noexcept
    : data_(other.data_), size_(other.size_), isOpen_(other.isOpen_),
      path_(std::move(other.path_)) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.isOpen_ = false;
}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    close();
    data_ = other.data_;
    size_ = other.size_;
    isOpen_ = other.isOpen_;
    path_ = std::move(other.path_);
    other.data_ = nullptr;
    other.size_ = 0;
    other.isOpen_ = false;
  }
  return *this;
}

void MappedFile::close() {
  if (data_)
    ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
  isOpen_ = false;
  path_.clear();
}

Status MappedFile::open(const std::string &path, MappedFile &out) {
  out.close();
  // The mapping outlives the descriptor, which closes on return.
  UniqueFd fd;
  TPC_RETURN_IF_ERROR(openForReading(path, fd));

  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    return Status::error(path + ": cannot stat: " + errnoText(errno));
  // A directory opens fine with O_RDONLY and a FIFO would block forever, so
  // only regular files are accepted.
  if (!S_ISREG(st.st_mode))
    return Status::error(path + ": not a regular file");

  size_t size = size_t(st.st_size);
  uint8_t *data = nullptr;
  // mmap rejects zero-length mappings; an empty file is simply empty.
  if (size > 0) {
    void *p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED)
      return Status::error(path + ": cannot map " + std::to_string(size) +
                           " bytes: " + errnoText(errno));
    data = static_cast<uint8_t *>(p);
  }
  out.data_ = data;
  out.size_ = size;
  out.isOpen_ = true;
  out.path_ = path;
  return Status::ok();
}

Status MappedFile::advise(size_t offset, size_t length, int advice,
                          const char *adviceName) const {
  if (!data_ || length == 0 || offset >= size_)
    return Status::ok();
  if (length > size_ - offset)
    length = size_ - offset;
  // madvise wants a page-aligned start; widen the range down to the page.
  static const size_t pageSize = size_t(::sysconf(_SC_PAGESIZE));
  size_t begin = offset - offset % pageSize;
  if (::madvise(data_ + begin, length + (offset - begin), advice) != 0)
    return Status::error(path_ + ": madvise(" + adviceName +
                         ") failed: " + errnoText(errno));
  return Status::ok();
}

Status MappedFile::adviseSequential() const {
  return advise(0, size_, MADV_SEQUENTIAL, "MADV_SEQUENTIAL");
}

Status MappedFile::adviseWillNeed(size_t offset, size_t length) const {
  return advise(offset, length, MADV_WILLNEED, "MADV_WILLNEED");
}

Status MappedFile::adviseDontNeed(size_t offset, size_t length) const {
  // MADV_DONTNEED on a private file mapping only drops this process's page
  // table entries; the next access faults the same file data back in, so the
  // view stays valid. MADV_COLD would be gentler but needs Linux 5.4.
  return advise(offset, length, MADV_DONTNEED, "MADV_DONTNEED");
}

} // namespace tpc
