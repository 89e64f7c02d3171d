//===- Scratch.h - Aligned buffers of the GEMMs -----------------*- C++ -*-===//
//
// Packed operands and per-thread working space, aligned to a cache line
// (the vector loads of the micro-kernels and AMX's tile loads want it).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_SCRATCH_H
#define TPC_KERNELS_CPU_SCRATCH_H

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace tpc::cpu {

/// `count` elements of T on a 64-byte boundary (free with std::free);
/// throws std::bad_alloc.
template <class T> T *allocAligned(size_t count) {
  const size_t bytes =
      std::max<size_t>(64, (count * sizeof(T) + 63) / 64 * 64);
  void *p = std::aligned_alloc(64, bytes);
  if (!p)
    throw std::bad_alloc();
  return static_cast<T *>(p);
}

/// A per-thread buffer that only grows.
template <class T> struct Scratch {
  T *data = nullptr;
  size_t size = 0;
  Scratch() = default;
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  ~Scratch() { std::free(data); }
  T *get(size_t count) {
    if (count > size) {
      std::free(data);
      data = nullptr;
      size = 0;
      data = allocAligned<T>(count);
      size = count;
    }
    return data;
  }
};

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_SCRATCH_H
