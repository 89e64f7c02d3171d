//===- MappedFile.h - Read-only memory-mapped files -------------*- C++ -*-===//
//
// Weights and engine files are mapped rather than read so that loading a
// multi-gigabyte file costs no copy and the page cache is shared between the
// ranks of one machine.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_SUPPORT_MAPPEDFILE_H
#define TPC_RUNTIME_SUPPORT_MAPPEDFILE_H

#include "kernels/Types.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tpc {

/// A whole regular file mapped read-only into memory. Move-only; the mapping
/// is released when the object is destroyed or closed. An empty file maps to
/// size() == 0 and data() == nullptr.
class MappedFile {
public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;

  /// Maps `path`. On failure `out` is left closed and the message names the
  /// path and the system error.
  static Status open(const std::string &path, MappedFile &out);

  /// Unmaps the file; the object becomes empty.
  void close();

  bool isOpen() const { return isOpen_; }
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }

  /// Hints that the whole mapping will be read front to back, so the kernel
  /// reads ahead aggressively and may drop pages behind the reader.
  Status adviseSequential() const;
  /// Hints that [offset, offset + length) will be needed soon; the kernel
  /// starts reading it in the background.
  Status adviseWillNeed(size_t offset, size_t length) const;
  /// Hints that [offset, offset + length) will not be read again: the pages
  /// leave this process's mapping, so the kernel can reclaim them under
  /// memory pressure (useful when streaming a file larger than memory). The
  /// data stays readable; touching it again faults it back in from the file.
  Status adviseDontNeed(size_t offset, size_t length) const;

private:
  Status advise(size_t offset, size_t length, int advice,
                const char *adviceName) const;

  uint8_t *data_ = nullptr;
  size_t size_ = 0;
  bool isOpen_ = false;
  std::string path_;
};

} // namespace tpc

#endif // TPC_RUNTIME_SUPPORT_MAPPEDFILE_H
