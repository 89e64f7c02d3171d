//===- Bgemm.h - bf16 matrix products on AVX512-BF16 and AMX ----*- C++ -*-===//
//
// C = act(alpha * A B (+ beta * C0) (+ bias)) for bf16 A and a bf16 weight
// B packed once, accumulating in fp32 and rounding each result to bf16 once
// (to nearest even). The packed weight keeps bf16's two bytes per element,
// so a product streams half the bytes of the fp32 path. Two kernels, the
// best the CPU and OS allow chosen at run time:
//   amx-bf16     AMX tiles (tdpbf16ps: a 16 x 32 by 32 x 16 product per
//                instruction), 32 x 32 blocks of C in four tile registers;
//   avx512-bf16  vdpbf16ps, a 16 x 16 block of C in sixteen zmm registers.
// A single row of A always takes the AVX512-BF16 GEMV (it only streams the
// weight). Elsewhere bf16 products widen to fp32 (MatMulHalf.h).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_BGEMM_H
#define TPC_KERNELS_CPU_BGEMM_H

#include "kernels/cpu/Sgemm.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tpc::cpu {

/// Columns of a packed panel.
constexpr int64_t kBgemmNr = 16;
/// Pairs of k in one AMX tile of the packed weight (k = 32).
constexpr int64_t kBgemmTilePairs = 16;

/// The bf16 product kernels.
enum class BgemmKernel { Widening, Avx512Bf16, AmxBf16 };

/// The kernel bgemm uses: the best this CPU and OS run (AMX needs the
/// kernel's permission for tile data, asked once) unless bgemmUseKernel
/// chose another. Widening means bgemm is not available.
BgemmKernel bgemmKernel();
/// Whether bgemm may be called (bgemmKernel() is not Widening).
bool bgemmAvailable();
/// "amx-bf16", "avx512-bf16" or "widening".
const char *bgemmKernelName(BgemmKernel kernel);
/// The kernels this CPU runs, best first; Widening is always last.
std::vector<BgemmKernel> bgemmAvailableKernels();
/// Makes bgemm use `kernel` (Widening turns the bf16 products off); false,
/// changing nothing, when this CPU cannot run it. For tests and benchmarks
/// that compare the paths; not thread-safe against running products.
bool bgemmUseKernel(BgemmKernel kernel);

/// A bf16 K x N matrix as ceil(N / 16) panels of pairStride() pairs: pair p
/// of panel q holds rows 2p and 2p + 1 of columns [16 q, 16 q + 16)
/// interleaved (one 64-byte vector), zero past K and N. The pairs of a panel
/// are padded to whole AMX tiles of 16, so that both kernels read the same
/// packed weight.
class PackedBf16 : public PackedPanels<uint16_t> {
public:
  /// Packs op(B) from bf16 bits: B is [k, n] (row stride ldb) or, with
  /// trans, [n, k].
  void pack(const uint16_t *b, int64_t k, int64_t n, int64_t ldb, bool trans);
  int64_t pairs() const { return (k() + 1) / 2; }
  int64_t pairStride() const { return pairStrideOf(k()); }
  /// Panel `q`: pairStride() vectors of 32 bf16.
  const uint16_t *panel(int64_t q) const {
    return data() + q * pairStride() * 2 * kBgemmNr;
  }

private:
  /// The pairs of k a panel holds: whole AMX tiles.
  static int64_t pairStrideOf(int64_t k) {
    return ((k + 1) / 2 + kBgemmTilePairs - 1) / kBgemmTilePairs *
           kBgemmTilePairs;
  }
};

/// The epilogue's bias is n bf16 values, and the activation runs in fp32
/// before the one rounding.
struct BgemmArgs : GemmEpilogueArgs<uint16_t> {
  int64_t m = 0;
  /// A: [m, k] bf16 bits, row stride lda (k and n come from b).
  const uint16_t *a = nullptr;
  int64_t lda = 0;
  const PackedBf16 *b = nullptr;
  /// C: [m, n] bf16 bits, row stride ldc.
  uint16_t *c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
  /// Optional C0 (bf16 bits) added as beta * C0[i * c0Row + j * c0Col].
  const uint16_t *c0 = nullptr;
  int64_t c0Row = 0, c0Col = 0;
  float beta = 0.0f;
};

/// One product on `numThreads` threads; needs bgemmAvailable().
void bgemm(const BgemmArgs &args, int numThreads);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_BGEMM_H
