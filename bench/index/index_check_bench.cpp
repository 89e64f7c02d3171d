//===- index_check_bench.cpp - What the run-time index check costs --------===//
//
// tpc's Gather kernels check every index against its axis after each run
// (kernels/cpu/MovementKernels.cpp). This measures that check where it is
// largest relative to the work: an embedding lookup (Gather of rows of a
// [vocab, hidden] table), timed through the registry (lookup + check) and
// as the bare lookup kernel (cpu::gatherKernel, no check), on the same
// data, alternating, best of several rounds. Prints one line per shape:
//   tokens hidden  checked_us  bare_us  check_us
//
//   tpc_index_check_bench [--rounds N]
//
//===----------------------------------------------------------------------===//
#include "bench/BenchUtil.h"
#include "kernels/cpu/Movement.h"
#include "kernels/cpu/Registry.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

using namespace tpc;
using namespace tpc::cpu;

namespace {

double bestMicros(int rounds, int reps, const std::function<void()> &fn) {
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
      fn();
    best = std::min(best, tpc::bench::microsSince(t0) / reps);
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  const int rounds = tpc::bench::roundsFlag(argc, argv, 15);
  const KernelDef *def = lookupKernel("Gather");
  if (!def) {
    std::fprintf(stderr, "no Gather kernel\n");
    return 1;
  }
  std::printf("tokens hidden  checked_us  bare_us  check_us\n");
  const int64_t vocab = 50257;
  for (int64_t hidden : {64, 768})
    for (int64_t tokens : {1, 128, 2048}) {
      std::vector<float> table(size_t(vocab * hidden), 1.0f);
      std::vector<int64_t> ids(static_cast<size_t>(tokens), 0);
      std::mt19937_64 rng(1);
      for (int64_t &v : ids)
        v = int64_t(rng() % uint64_t(vocab));
      std::vector<float> out(size_t(tokens * hidden));
      std::vector<TensorDesc> in = {{DType::F32, {vocab, hidden}},
                                    {DType::I64, {1, tokens}}};
      std::vector<TensorDesc> outs = {{DType::F32, {1, tokens, hidden}}};
      std::unique_ptr<PreparedKernel> k;
      Attrs attrs;
      attrs.setInt("axis", 0);
      Status st = def->prepare(in, outs, attrs, k);
      if (!st) {
        std::fprintf(stderr, "prepare: %s\n", st.message().c_str());
        return 1;
      }
      const void *ins[] = {table.data(), ids.data()};
      void *os[] = {out.data()};
      ExecContext ctx;
      GatherParams p;
      if (Status ps = makeGatherParams(in, outs, attrs, p); !ps) {
        std::fprintf(stderr, "params: %s\n", ps.message().c_str());
        return 1;
      }
      const int reps = tokens >= 2048 ? 50 : 2000;
      double checked = 0, bare = 0;
      // Alternate the two so that drift affects both alike.
      for (int pass = 0; pass < 3; ++pass) {
        checked += bestMicros(rounds, reps, [&] { k->run(ins, os, ctx); });
        bare += bestMicros(rounds, reps, [&] {
          gatherKernel(p, table.data(), ids.data(), out.data());
        });
      }
      checked /= 3;
      bare /= 3;
      std::printf("%6lld %6lld  %10.3f  %7.3f  %8.3f\n", (long long)tokens,
                  (long long)hidden, checked, bare,
                  std::max(0.0, checked - bare));
    }
  return 0;
}
