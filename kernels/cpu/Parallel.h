//===- Parallel.h - Splitting a kernel's work over threads ------*- C++ -*-===//
//
// Kernels that use more than one thread (ExecContext::numThreads) split
// their work with parallelFor. Each calling thread owns its own workers, so
// ranks running as threads of one process never share or wait on each
// other's pool; a call with one thread runs inline.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_PARALLEL_H
#define TPC_KERNELS_CPU_PARALLEL_H

#include <algorithm>
#include <cstdint>
#include <functional>

namespace tpc::cpu {

/// Runs fn(t, numThreads) for t in [0, numThreads) on numThreads threads (the
/// caller is thread 0) and returns when every call has. fn must not throw.
void parallelRun(int numThreads, const std::function<void(int, int)> &fn);

/// Below this many bytes touched, a step runs on one thread: waking another
/// costs more than it saves.
constexpr int64_t kParallelMinBytes = int64_t(1) << 17;

/// Runs fn(begin, end) over slices of [0, n) that together cover it, on up
/// to numThreads threads when the items (of about `bytesPerItem` bytes
/// touched each) add up to kParallelMinBytes per thread; otherwise fn(0, n)
/// inline. For row-wise kernels whose rows are independent.
void parallelFor(int numThreads, int64_t n, int64_t bytesPerItem,
                 const std::function<void(int64_t, int64_t)> &fn);

/// parallelFor over the rows of params `p`, counted by its member `Rows`
/// (of about `bytesPerRow` bytes touched each): calls fn(q, r0) for each
/// slice, q being p with `Rows` the slice's count and r0 its first row.
template <auto Rows, class Params, class Fn>
void parallelRows(int numThreads, const Params &p, int64_t bytesPerRow,
                  Fn &&fn) {
  parallelFor(numThreads, p.*Rows, bytesPerRow, [&](int64_t r0, int64_t r1) {
    Params q = p;
    q.*Rows = r1 - r0;
    fn(q, r0);
  });
}

/// `p` advanced by `bytes` (nullptr, an absent operand, stays nullptr):
/// where a slice of rows starts in each operand.
inline const void *byteOffset(const void *p, int64_t bytes) {
  return p ? static_cast<const char *>(p) + bytes : nullptr;
}
inline void *byteOffset(void *p, int64_t bytes) {
  return p ? static_cast<char *>(p) + bytes : nullptr;
}

/// The half-open slice of [0, n) that part `t` of `parts` takes, in whole
/// multiples of `grain` (the last part takes the remainder).
inline void splitRange(int64_t n, int t, int parts, int64_t grain,
                       int64_t &begin, int64_t &end) {
  const int64_t units = (n + grain - 1) / grain;
  const int64_t lo = units * t / parts, hi = units * (t + 1) / parts;
  begin = lo * grain < n ? lo * grain : n;
  end = hi * grain < n ? hi * grain : n;
}

/// Runs fn(begin, end) once per thread over the slices of [0, n) that
/// splitRange gives in multiples of `grain`, on at most numThreads threads
/// and never more than n / grain (at least one); empty slices are skipped.
/// For kernels whose items (GEMM panels, products) write disjoint outputs.
template <class Fn>
void parallelSlices(int numThreads, int64_t n, int64_t grain, Fn &&fn) {
  const int threads =
      int(std::max<int64_t>(1, std::min<int64_t>(numThreads, n / grain)));
  parallelRun(threads, [&](int t, int parts) {
    int64_t begin, end;
    splitRange(n, t, parts, grain, begin, end);
    if (begin < end)
      fn(begin, end);
  });
}

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_PARALLEL_H
