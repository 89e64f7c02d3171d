//===- SgemmKernels.h - The register-tiled inner loops of sgemm -*- C++ -*-===//
//
// Internal to Sgemm.cpp: the micro-kernels, one set per instruction set,
// chosen once from what the CPU reports.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_SGEMMKERNELS_H
#define TPC_KERNELS_CPU_SGEMMKERNELS_H

#include "kernels/cpu/Prefetch.h"
#include "kernels/cpu/Sgemm.h"

namespace tpc::cpu {

/// Panels of packed B that one single-row call streams at once.
constexpr int64_t kGemvPanels = 4;
/// The most panels of B any micro-kernel's tile spans.
constexpr int64_t kSgemmMaxPanels = 2;

/// c[r * ldc + j] = alpha * sum_p ap[p * R + r] * B[p, j], plus c's old
/// value with acc, for the tile's R rows r and columns j; column j of B is
/// column j % Nr of the panel at bp + (j / Nr) * bStride, whose row p is
/// at p * Nr.
/// Meanwhile it prefetches `pf` (Prefetch.h).
using SgemmTileFn = void (*)(int64_t kc, const float *ap, const float *bp,
                             int64_t bStride, float *c, int64_t ldc,
                             float alpha, bool acc, const PanelPrefetch &pf);

struct MicroKernels {
  const char *name;
  /// Rows of the full tile (at most kSgemmMaxMr). A tile of R rows reads A
  /// packed in a panel of R rows: an edge tile's own height where the set
  /// has a kernel for it, else mr (zero rows past the edge).
  int64_t mr;
  /// Panels of B the full tile spans (at most kSgemmMaxPanels).
  int64_t panels;
  /// The kernel for a tile of `rows` <= mr rows and `count` <= panels
  /// panels, or null where the set has only its full tile (which then runs
  /// into a scratch tile for the edges).
  SgemmTileFn (*tile)(int64_t rows, int64_t count);
  /// out[q * Nr + j] = sum_p a[p] * panels[q * stride + p * Nr + j] for
  /// q < count (at most kGemvPanels) and j < Nr.
  void (*gemv)(int64_t k, const float *a, const float *panels, int64_t stride,
               int64_t count, float *out);
};

/// Every set this CPU runs, fastest first (generic is always last).
std::vector<MicroKernels> availableMicroKernels();

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_SGEMMKERNELS_H
