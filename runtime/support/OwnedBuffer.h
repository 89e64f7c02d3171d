//===- OwnedBuffer.h - Memory freed with its owner --------------*- C++ -*-===//
//
// An arena or a state buffer: zeroed memory of some kind (host, device) that
// one owner allocates, sizes again and frees on destruction. The kind of
// memory is a policy with two static functions:
//
//   static Status acquire(size_t bytes, const std::string &what,
//                         uint8_t *&out);   // zeroed, at least one byte
//   static void release(uint8_t *data);     // data may be null
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_SUPPORT_OWNEDBUFFER_H
#define TPC_RUNTIME_SUPPORT_OWNEDBUFFER_H

#include "base/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tpc {

template <class Memory> class OwnedBuffer {
public:
  OwnedBuffer() = default;
  ~OwnedBuffer() { Memory::release(data_); }
  OwnedBuffer(const OwnedBuffer &) = delete;
  OwnedBuffer &operator=(const OwnedBuffer &) = delete;

  /// Frees what the buffer held, then allocates `bytes` zeroed bytes; an
  /// error names `what` (and leaves the buffer empty).
  Status allocate(size_t bytes, const std::string &what) {
    Memory::release(data_);
    data_ = nullptr;
    size_ = 0;
    TPC_RETURN_IF_ERROR(Memory::acquire(bytes, what, data_));
    size_ = bytes;
    return Status::ok();
  }
  uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

private:
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

} // namespace tpc

#endif // TPC_RUNTIME_SUPPORT_OWNEDBUFFER_H
