//===- Prefetch.h - Software prefetch of a weight's next panels -*- C++ -*-===//
//
// A forward reads each weight once, from DRAM: the first row tile that
// meets a packed panel waits for it while the later tiles reuse it from
// cache, so the loads and the arithmetic never overlap. The products
// therefore ask for the next panels while they multiply the current ones,
// each row tile a slice of them, and the micro-kernels that can spread
// their slice over their loop (one line every few steps of k), so that
// the requests never fill the memory system's queues and stall the loads
// the arithmetic needs.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_PREFETCH_H
#define TPC_KERNELS_CPU_PREFETCH_H

#include <cstdint>

namespace tpc::cpu {

/// Lines [first, first + lines) of each of `panels` regions `stride` bytes
/// apart from `base`; empty when panels is 0.
struct PanelPrefetch {
  const char *base = nullptr;
  int64_t stride = 0, panels = 0, first = 0, lines = 0;

  /// Slice `part` of `parts` of `panels` regions of `bytes` each.
  static PanelPrefetch slice(const void *base, int64_t stride, int64_t panels,
                             int64_t bytes, int64_t part, int64_t parts) {
    const int64_t total = (bytes + 63) / 64;
    PanelPrefetch pf;
    pf.base = static_cast<const char *>(base);
    pf.stride = stride;
    pf.panels = panels;
    pf.first = total * part / parts;
    pf.lines = total * (part + 1) / parts - pf.first;
    return pf;
  }
  /// Line `i` of the slice, in every region, into L2.
  void line(int64_t i) const {
    for (int64_t q = 0; q < panels; ++q)
      __builtin_prefetch(base + q * stride + (first + i) * 64, 0, 2);
  }
  void all() const {
    for (int64_t i = 0; i < lines; ++i)
      line(i);
  }
};

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_PREFETCH_H
