//===- gemm_bench.cpp - GEMM libraries at a transformer's shapes ----------===//
//
// Times tpc's own sgemm (weights packed once, as an engine does at load)
// against the GEMM libraries Debian ships, at the weight-product shapes of a
// GPT-2-small forward, in one process and one run: OpenBLAS, BLIS and oneDNN
// are opened with dlopen (RTLD_LOCAL) so that their BLAS symbols do not mix.
// A library that is not installed is reported as such. tpc's bf16 product
// runs the same shapes once per bf16 kernel this CPU has (operands rounded
// to bf16 before timing; its difference from the fp32 result is reported,
// not a failure). Prints one JSON object.
//
//   tpc_gemm_bench [--threads N] [--tokens M,...] [--hidden H] [--vocab V]
//                  [--repeats R]
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Bgemm.h"
#include "kernels/cpu/Sgemm.h"
#include "kernels/Half.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace tpc::cpu;

namespace {

struct Shape {
  const char *name;
  int64_t m, k, n;
  bool transB;
};

/// C = A[m,k] op(B) with op(B) [k, n]; B stored [k, n] or [n, k] (transB).
using GemmFn = std::function<void(const Shape &, const float *a,
                                  const float *b, float *c)>;

struct Library {
  std::string name;
  std::string detail;
  GemmFn run;                    // empty when unavailable
  /// Optional, untimed: packs B (and converts A where the library needs).
  std::function<void(const Shape &, const float *a, const float *b)> prepare;
  /// Optional, untimed: C as fp32 after run, where run writes another type.
  std::function<void(float *c)> result;
};

void *openLib(const char *path, std::string &why) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    why = dlerror();
  return h;
}

enum { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float *,
                            int, const float *, int, float, float *, int);

Library cblasLibrary(const char *name, const char *path,
                     const char *threadsFn, int threads) {
  Library lib{name, path, {}, {}, {}};
  std::string why;
  void *h = openLib(path, why);
  if (!h) {
    lib.detail = "not available: " + why;
    return lib;
  }
  auto gemm = reinterpret_cast<CblasSgemm>(dlsym(h, "cblas_sgemm"));
  auto setThreads = reinterpret_cast<void (*)(int)>(dlsym(h, threadsFn));
  if (!gemm) {
    lib.detail = "no cblas_sgemm in " + std::string(path);
    return lib;
  }
  if (setThreads)
    setThreads(threads);
  if (auto core = reinterpret_cast<char *(*)()>(
          dlsym(h, "openblas_get_corename")))
    lib.detail += std::string(" (core ") + core() + ")";
  lib.run = [gemm](const Shape &s, const float *a, const float *b, float *c) {
    gemm(kRowMajor, kNoTrans, s.transB ? kTrans : kNoTrans, int(s.m),
         int(s.n), int(s.k), 1.0f, a, int(s.k), b,
         int(s.transB ? s.k : s.n), 0.0f, c, int(s.n));
  };
  return lib;
}

Library dnnlLibrary(int threads) {
  Library lib{"oneDNN", "libdnnl.so.2", {}, {}, {}};
  std::string why;
  void *h = openLib("libdnnl.so.2", why);
  if (!h) {
    lib.detail = "not available: " + why;
    return lib;
  }
  using Sgemm = int (*)(char, char, int64_t, int64_t, int64_t, float,
                        const float *, int64_t, const float *, int64_t, float,
                        float *, int64_t);
  auto gemm = reinterpret_cast<Sgemm>(dlsym(h, "dnnl_sgemm"));
  if (!gemm) {
    lib.detail = "no dnnl_sgemm";
    return lib;
  }
  // oneDNN's sgemm runs on its OpenMP runtime: its thread count comes from
  // OMP_NUM_THREADS, which main() sets before loading it.
  (void)threads;
  lib.run = [gemm](const Shape &s, const float *a, const float *b, float *c) {
    gemm('N', s.transB ? 'T' : 'N', s.m, s.n, s.k, 1.0f, a, s.k, b,
         s.transB ? s.k : s.n, 0.0f, c, s.n);
  };
  return lib;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2]
                      : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::vector<int64_t> parseList(const char *s) {
  std::vector<int64_t> out;
  for (const char *p = s; *p;) {
    out.push_back(std::atoll(p));
    const char *comma = std::strchr(p, ',');
    if (!comma)
      break;
    p = comma + 1;
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  int threads = 1, repeats = 0;
  int64_t hidden = 768, vocab = 50257;
  std::vector<int64_t> tokens = {128, 1};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    if (f == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (f == "--tokens")
      tokens = parseList(argv[i + 1]);
    else if (f == "--hidden")
      hidden = std::atoll(argv[i + 1]);
    else if (f == "--vocab")
      vocab = std::atoll(argv[i + 1]);
    else if (f == "--repeats")
      repeats = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "tpc_gemm_bench: unknown flag %s\n", f.c_str());
      return 2;
    }
  }
  setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);

  std::vector<Library> libs;
  // tpc once per micro-kernel this CPU runs (the first is the one engines
  // use), so that the instruction-set paths are compared in the same run.
  PackedMatrix packed;
  for (const char *kernel : sgemmAvailableKernels()) {
    if (std::strcmp(kernel, "generic") == 0 &&
        sgemmAvailableKernels().size() > 1)
      continue;
    Library lib{libs.empty() ? "tpc" : std::string("tpc-") + kernel,
                std::string("packed weights, ") + kernel + " micro-kernel",
                {}, {}, {}};
    lib.prepare = [&packed, kernel](const Shape &s, const float *,
                                    const float *b) {
      (void)sgemmUseKernel(kernel);
      packed.pack(b, s.k, s.n, s.transB ? s.k : s.n, s.transB);
    };
    lib.run = [&packed, kernel, threads](const Shape &s, const float *a,
                                         const float *, float *c) {
      (void)sgemmUseKernel(kernel);
      SgemmArgs g;
      g.m = s.m;
      g.n = s.n;
      g.k = s.k;
      g.a = a;
      g.lda = s.k;
      g.packedB = &packed;
      g.c = c;
      g.ldc = s.n;
      sgemm(g, threads);
    };
    libs.push_back(std::move(lib));
  }
  // The bf16 product, once per bf16 kernel (AMX, AVX512-BF16).
  PackedBf16 packedBf16;
  std::vector<uint16_t> aBf16, bBf16, cBf16;
  for (BgemmKernel kernel : bgemmAvailableKernels()) {
    if (kernel == BgemmKernel::Widening)
      continue;
    const std::string name = bgemmKernelName(kernel);
    Library lib{"tpc-bf16-" + name,
                "bf16 operands, packed weights, " + name + " kernel, fp32 "
                "accumulation",
                {}, {}, {}};
    lib.prepare = [&, kernel](const Shape &s, const float *a, const float *b) {
      (void)bgemmUseKernel(kernel);
      auto toBf16 = [](const float *x, size_t count, std::vector<uint16_t> &y) {
        y.resize(count);
        for (size_t i = 0; i < count; ++i)
          y[i] = tpc::floatToBf16(x[i]);
      };
      toBf16(a, size_t(s.m * s.k), aBf16);
      toBf16(b, size_t(s.k * s.n), bBf16);
      cBf16.assign(size_t(s.m * s.n), 0);
      packedBf16.pack(bBf16.data(), s.k, s.n, s.transB ? s.k : s.n, s.transB);
    };
    lib.run = [&, kernel, threads](const Shape &s, const float *,
                                   const float *, float *) {
      (void)bgemmUseKernel(kernel);
      BgemmArgs g;
      g.m = s.m;
      g.a = aBf16.data();
      g.lda = s.k;
      g.b = &packedBf16;
      g.c = cBf16.data();
      g.ldc = s.n;
      bgemm(g, threads);
    };
    lib.result = [&](float *c) {
      for (size_t i = 0; i < cBf16.size(); ++i)
        c[i] = tpc::bf16ToFloat(cBf16[i]);
    };
    libs.push_back(std::move(lib));
  }
  libs.push_back(cblasLibrary("OpenBLAS", "libopenblas.so.0",
                              "openblas_set_num_threads", threads));
  libs.push_back(cblasLibrary("BLIS", "libblis.so.4",
                              "bli_thread_set_num_threads", threads));
  libs.push_back(dnnlLibrary(threads));
  // Debian's libxsmm-dev ships the code generator only, no library to call.
  libs.push_back({"libxsmm", "not available: Debian's libxsmm 1.17 package "
                             "has only the kernel generator, no GEMM library",
                  {}, {}, {}});

  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::printf("{\"threads\": %d, \"results\": [", threads);
  bool firstRow = true;
  for (int64_t m : tokens) {
    const Shape shapes[] = {
        {"qkv", m, hidden, 3 * hidden, false},
        {"attn_out", m, hidden, hidden, false},
        {"mlp_up", m, hidden, 4 * hidden, false},
        {"mlp_down", m, 4 * hidden, hidden, false},
        {"lm_head", m, hidden, vocab, true},
    };
    for (const Shape &s : shapes) {
      std::vector<float> a(size_t(s.m * s.k)), b(size_t(s.k * s.n)),
          ref(size_t(s.m * s.n)), c(size_t(s.m * s.n));
      for (float &x : a)
        x = dist(gen);
      for (float &x : b)
        x = dist(gen);
      const double flop = 2.0 * double(s.m) * double(s.n) * double(s.k);
      const double bytes = 4.0 * double(s.k) * double(s.n);
      // About 0.3 s of work per library and shape at 50 GFLOP/s.
      const int reps = repeats > 0
                           ? repeats
                           : int(std::clamp(1.5e10 / flop, 5.0, 400.0));
      bool haveRef = false;
      for (Library &lib : libs) {
        if (!firstRow)
          std::printf(",");
        firstRow = false;
        std::printf("\n  {\"library\": \"%s\", \"shape\": \"%s\", \"m\": %lld, "
                    "\"k\": %lld, \"n\": %lld",
                    lib.name.c_str(), s.name, (long long)s.m, (long long)s.k,
                    (long long)s.n);
        if (!lib.run) {
          std::printf(", \"available\": false, \"detail\": \"%s\"}",
                      lib.detail.c_str());
          continue;
        }
        if (lib.prepare)
          lib.prepare(s, a.data(), b.data());
        std::fill(c.begin(), c.end(), NAN);
        lib.run(s, a.data(), b.data(), c.data());
        if (lib.result)
          lib.result(c.data());
        double err = 0;
        if (!haveRef) {
          ref = c;
          haveRef = true;
        } else {
          for (size_t i = 0; i < c.size(); ++i)
            err = std::max(err, double(std::fabs(c[i] - ref[i])));
        }
        std::vector<double> times;
        for (int r = 0; r < reps; ++r) {
          auto t0 = std::chrono::steady_clock::now();
          lib.run(s, a.data(), b.data(), c.data());
          times.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - t0)
                              .count());
        }
        const double t = median(times);
        std::printf(", \"available\": true, \"detail\": \"%s\", \"reps\": %d, "
                    "\"median_ms\": %.4f, \"gflops\": %.2f, "
                    "\"weight_gbps\": %.2f, \"max_abs_diff_vs_tpc\": %.3g}",
                    lib.detail.c_str(), reps, t * 1e3, flop / t * 1e-9,
                    bytes / t * 1e-9, err);
      }
    }
  }
  std::printf("\n]}\n");
  return 0;
}
