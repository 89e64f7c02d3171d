//===- SgemmKernels.h - The register-tiled inner loops of sgemm -*- C++ -*-===//
//
// Internal to Sgemm.cpp: the micro-kernels, one set per instruction set,
// chosen once from what the CPU reports.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_SGEMMKERNELS_H
#define TPC_KERNELS_CPU_SGEMMKERNELS_H

#include "kernels/cpu/Sgemm.h"

namespace tpc::cpu {

/// Panels of packed B that one single-row call streams at once.
constexpr int64_t kGemvPanels = 4;

struct MicroKernels {
  const char *name;
  /// Rows of the tile (at most kSgemmMaxMr): A is packed in panels of mr.
  int64_t mr;
  /// c[r * ldc + j] = alpha * sum_p ap[p * mr + r] * bp[p * Nr + j], plus
  /// c's old value with acc, for r < mr and j < Nr.
  void (*tile)(int64_t kc, const float *ap, const float *bp, float *c,
               int64_t ldc, float alpha, bool acc);
  /// out[q * Nr + j] = sum_p a[p] * panels[q * stride + p * Nr + j] for
  /// q < count (at most kGemvPanels) and j < Nr.
  void (*gemv)(int64_t k, const float *a, const float *panels, int64_t stride,
               int64_t count, float *out);
};

/// Every set this CPU runs, fastest first (generic is always last).
std::vector<MicroKernels> availableMicroKernels();

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_SGEMMKERNELS_H
