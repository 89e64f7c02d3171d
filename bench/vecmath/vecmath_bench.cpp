//===- vecmath_bench.cpp - The vector math on each instruction set --------===//
//
// Times each function of kernels/cpu/VectorMath.h on every instruction set
// this CPU runs (AVX-512, AVX2 + FMA) and on the C library's scalar
// functions, the peer the vector code replaces, in the same process,
// alternating, best of several rounds. The size is one GELU activation of a
// GPT-2-small MLP at sequence 128 (128 x 3072 floats), in L2-sized blocks
// as the fused kernels call it. Prints the CPU's choice, then one line per
// function:
//   function  scalar_us  avx2_us  avx512_us  (speed-ups over scalar)
//
//   tpc_vecmath_bench [--rounds N]
//
//===----------------------------------------------------------------------===//
#include "bench/BenchUtil.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace tpc::cpu;

namespace {

using Fn = void (*)(const float *, float *, int64_t);

double bestMicros(int rounds, Fn fn, const std::vector<float> &x,
                  std::vector<float> &y) {
  const int64_t block = 3072 * 8; // rows of an MLP activation at a time
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < int64_t(x.size()); i += block)
      fn(x.data() + i, y.data() + i,
         std::min<int64_t>(block, int64_t(x.size()) - i));
    best = std::min(best, tpc::bench::microsSince(t0));
  }
  return best;
}

void expShiftSum(const float *x, float *y, int64_t n) {
  // A softmax row at a time (rows of 128 scores).
  for (int64_t i = 0; i < n; i += 128)
    (void)vecExpShiftSum(x + i, y + i, std::min<int64_t>(128, n - i), 1.0f);
}

} // namespace

int main(int argc, char **argv) {
  const int rounds = tpc::bench::roundsFlag(argc, argv, 20);
  std::vector<float> x(128 * 3072), y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(int64_t(i * 7919 % 2000) - 1000) / 125.0f; // [-8, 8)
  const VectorIsa chosen = vectorMathIsa();
  std::printf("vector math chosen on this CPU: %s\n", vectorIsaName(chosen));
  std::printf("%-14s %10s %10s %10s   %s\n", "function", "scalar_us",
              "avx2_us", "avx512_us", "speed-up over scalar");
  const struct {
    const char *name;
    Fn fn;
  } fns[] = {{"exp", vecExp},         {"tanh", vecTanh},
             {"erf", vecErf},         {"sigmoid", vecSigmoid},
             {"gelu", vecGelu},       {"gelu_tanh", vecGeluTanh},
             {"exp_shift_sum", expShiftSum}};
  const VectorIsa isas[] = {VectorIsa::Scalar, VectorIsa::Avx2,
                            VectorIsa::Avx512};
  for (const auto &f : fns) {
    double us[3] = {0, 0, 0};
    // Alternate the instruction sets round by round so that a noisy moment
    // hits all of them.
    for (int r = 0; r < rounds; ++r)
      for (int k = 0; k < 3; ++k)
        if (setVectorMathIsa(isas[k])) {
          double t = bestMicros(1, f.fn, x, y);
          us[k] = r == 0 ? t : std::min(us[k], t);
        }
    std::printf("%-14s %10.1f", f.name, us[0]);
    for (int k = 1; k < 3; ++k)
      if (us[k] > 0)
        std::printf(" %10.1f", us[k]);
      else
        std::printf(" %10s", "-");
    std::printf("  ");
    for (int k = 1; k < 3; ++k)
      if (us[k] > 0)
        std::printf(" %s %.2fx", vectorIsaName(isas[k]), us[0] / us[k]);
    std::printf("\n");
  }
  setVectorMathIsa(chosen);
  return 0;
}
