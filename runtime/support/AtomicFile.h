//===- AtomicFile.h - Write a file completely or not at all -----*- C++ -*-===//
//
// Output files (weights shards, engines, .npy dumps) are written to a
// temporary name in the destination directory and renamed over the final path
// only once everything succeeded. A crash or an error therefore never leaves a
// truncated file that a later run could mistake for a good one.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_SUPPORT_ATOMICFILE_H
#define TPC_RUNTIME_SUPPORT_ATOMICFILE_H

#include "kernels/Types.h"
#include "runtime/support/UniqueFd.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tpc {

class AtomicFile {
public:
  AtomicFile() = default;
  /// Removes the temporary file unless commit() succeeded.
  ~AtomicFile();
  /// Move-only: the moved-from object no longer holds a temporary file.
  AtomicFile(AtomicFile &&) noexcept = default;
  AtomicFile &operator=(AtomicFile &&other) noexcept;

  /// Creates the temporary file next to `path`.
  Status open(const std::string &path);
  /// Appends `size` bytes at the current end.
  Status write(const void *data, size_t size);
  /// Writes `size` bytes at absolute `offset` (the file grows as needed).
  Status writeAt(uint64_t offset, const void *data, size_t size);
  /// The same write on an open descriptor, naming `path` in errors: for
  /// threads that write into the file while this object may move.
  static Status writeAt(int fd, const std::string &path, uint64_t offset,
                        const void *data, size_t size);
  /// The temporary file's descriptor while open, else -1.
  int fd() const { return fd_.get(); }
  /// Closes the temporary file and renames it to the final path.
  Status commit();
  /// Deletes the temporary file; the final path is left untouched.
  void discard();

  bool isOpen() const { return fd_.valid(); }
  const std::string &path() const { return path_; }
  uint64_t position() const { return position_; }

  /// open(path), write(bytes), commit(): a whole file written atomically.
  static Status writeWhole(const std::string &path, const std::string &bytes);

private:
  /// Open from open() to commit() or discard(); tempPath_ names the file
  /// while it is.
  UniqueFd fd_;
  uint64_t position_ = 0;
  std::string path_;
  std::string tempPath_;
};

} // namespace tpc

#endif // TPC_RUNTIME_SUPPORT_ATOMICFILE_H
