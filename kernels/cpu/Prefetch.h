//===- Prefetch.h - Software prefetch of a weight's next panel --*- C++ -*-===//
//
// A forward reads each weight once, from DRAM: the first row tile that
// meets a packed panel waits for it while the later tiles reuse it from
// cache, so the loads and the arithmetic never overlap. The products
// therefore ask for the next panel a slice at a time while they multiply
// the current one (spread over its row tiles, so that the requests stay
// within what the memory system keeps in flight).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_PREFETCH_H
#define TPC_KERNELS_CPU_PREFETCH_H

#include <cstdint>

namespace tpc::cpu {

/// Asks for slice `part` of `parts` of the `bytes` at `p` into L2.
inline void prefetchSlice(const void *p, int64_t bytes, int64_t part,
                          int64_t parts) {
  const char *base = static_cast<const char *>(p);
  const int64_t lines = (bytes + 63) / 64;
  for (int64_t l = lines * part / parts; l < lines * (part + 1) / parts; ++l)
    __builtin_prefetch(base + l * 64, 0, 2);
}

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_PREFETCH_H
