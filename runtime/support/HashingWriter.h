//===- HashingWriter.h - Write a file front to back and hash it -*- C++ -*-===//
//
// Engine files are written once, front to back, and their SHA-256 goes into
// engine.json. Reading a file back to hash it doubles the bytes moved, and
// hashing on the writing thread serialises the two largest costs of a
// compile. A HashingWriter takes the bytes of one file in order through two
// buffers: the caller's thread copies into one and writes it out, while a
// second thread hashes the other, so the digest is ready when the last byte
// is written. (Every byte is copied once into a buffer, even where the
// caller's bytes are contiguous: writing and hashing a mapped source in
// place from two threads at once measured slower, the two threads faulting
// the same source pages.)
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_SUPPORT_HASHINGWRITER_H
#define TPC_RUNTIME_SUPPORT_HASHINGWRITER_H

#include "kernels/Types.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tpc {

class HashingWriter {
public:
  /// Writes `size` bytes at a file offset.
  using Sink = std::function<Status(uint64_t offset, const void *data,
                                    size_t size)>;

  /// Writes through `sink` from byte `offset` on, through two buffers of
  /// `bufferBytes` each.
  HashingWriter(Sink sink, uint64_t offset,
                size_t bufferBytes = size_t(1) << 20);
  /// Waits for the background thread; what was not flushed is dropped.
  ~HashingWriter();
  HashingWriter(const HashingWriter &) = delete;
  HashingWriter &operator=(const HashingWriter &) = delete;

  /// Appends `size` bytes at the current end; `data` may be reused when this
  /// returns. A failed write of the sink is returned as it is.
  Status append(const void *data, size_t size);
  /// Writes everything appended so far and waits until it is written.
  Status flush();
  /// The file offset the next append writes at.
  uint64_t end() const { return end_; }
  /// The SHA-256 (64 lower-case hex digits) of every byte appended; only
  /// after a successful flush(), and once (the hash is then reset).
  std::string finishHex();

private:
  struct Worker;
  /// Writes the filled buffer, hands it to the hashing thread and switches
  /// to the other one.
  Status submit();

  Sink sink_;
  std::unique_ptr<Worker> worker_;
  uint64_t end_;
  size_t fill_ = 0;
};

} // namespace tpc

#endif // TPC_RUNTIME_SUPPORT_HASHINGWRITER_H
