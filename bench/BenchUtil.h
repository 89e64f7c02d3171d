//===- BenchUtil.h - Flags and timing of the native benchmarks -*- C++ -*-===//
#ifndef TPC_BENCH_BENCHUTIL_H
#define TPC_BENCH_BENCHUTIL_H

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace tpc::bench {

/// The N of `--rounds N` among the arguments (at least 1), or `fallback`.
inline int roundsFlag(int argc, char **argv, int fallback) {
  int rounds = fallback;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--rounds") == 0)
      rounds = std::max(1, std::atoi(argv[++i]));
  return rounds;
}

/// Microseconds since `t0`.
inline double microsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

} // namespace tpc::bench

#endif // TPC_BENCH_BENCHUTIL_H
