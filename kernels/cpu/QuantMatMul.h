//===- QuantMatMul.h - Block-quantized weight GEMM (CPU) --------*- C++ -*-===//
//
// Y = A x dequantize(W)^T for a weight W [N, K] stored as onnxruntime's
// MatMulNBits stores it: per column n, K cut into blocks of `blockSize`,
// each block `bits`-bit codes packed low first into bytes, one scale and one
// zero point (packed codes, a float, or the default 2^(bits-1)) per block;
// W[n, k] = (code - zero) * scale. The codes stay packed in memory (an
// engine's weight repacked once into column groups, PackedBlockQuant): each
// k's codes are widened in registers and multiplied into float
// accumulators, so a decode step streams the packed bytes only.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_QUANTMATMUL_H
#define TPC_KERNELS_CPU_QUANTMATMUL_H

#include <cstdint>
#include <vector>

namespace tpc::cpu {

struct BlockQuantWeight {
  int64_t n = 0;
  int64_t k = 0;
  int64_t blockSize = 32;
  int bits = 4;
  /// [n, blocks, blockSize * bits / 8], blocks = ceil(k / blockSize).
  const uint8_t *codes = nullptr;
  /// [n, blocks].
  const float *scales = nullptr;
  /// [n, ceil(blocks * bits / 8)] packed codes, or null.
  const uint8_t *zeroCodes = nullptr;
  /// [n, blocks] float zero points, or null (used when zeroCodes is null).
  const float *zeroFloats = nullptr;

  int64_t blocks() const { return (k + blockSize - 1) / blockSize; }
};

/// Whether the kernel takes `w`'s layout: bits 4 or 8, a power-of-two block
/// size of at least 16, positive sizes.
bool blockQuantSupported(const BlockQuantWeight &w);

/// Y [rows, w.n] = A [rows, w.k] x dequantize(w)^T in float32 over up to
/// `numThreads` threads (columns split between them), for a weight that is
/// not bound once (constant folding): repacked for this call and run on the
/// column-group kernel where the CPU has one (packedBlockQuantSupported),
/// else on the portable loop.
void matmulBlockQuant(const float *a, int64_t rows, const BlockQuantWeight &w,
                      float *y, int numThreads);
/// The same through the portable loop only, on any CPU (its parity test).
void matmulBlockQuantPortable(const float *a, int64_t rows,
                              const BlockQuantWeight &w, float *y);

/// A weight repacked once (an engine's weight, bound before the first run)
/// for the column-group kernel: columns in groups of 32, and for each group,
/// block and k the group's 32 codes side by side (4-bit: byte j holds
/// column j's code in its low nibble and column j + 16's in its high one;
/// 8-bit: one byte per column), so that one 16-byte load widens into the
/// weights of 16 or 32 columns at that k, multiplied by one broadcast
/// element of A. Scales and zero points (any form, as zero * scale) are
/// laid out per group and block. The same bytes as the packed codes, plus
/// two floats per block per column.
struct PackedBlockQuant {
  int64_t n = 0, k = 0, blockSize = 0, blocks = 0, groups = 0;
  int bits = 4;
  /// [groups, blocks, blockSize, 32 * bits / 8].
  std::vector<uint8_t> codes;
  /// [groups, blocks, 32] each; padding columns have scale 0.
  std::vector<float> scales, zeroScales;
};

/// The kernel an engine's quantized weights run on here: "avx512 column
/// groups", "avx2 column groups" or "portable".
const char *blockQuantKernelName();

/// Whether the column-group kernel runs here (AVX-512, or AVX2 with FMA)
/// for `w`'s layout.
bool packedBlockQuantSupported(const BlockQuantWeight &w);
/// `w` repacked (packedBlockQuantSupported(w) must hold).
PackedBlockQuant packBlockQuant(const BlockQuantWeight &w);
/// Y [rows, n] = A [rows, k] x dequantize(w)^T with the column-group
/// kernel: per block, sum(code * x) times the scale minus zero * scale
/// times the block's sum of x; columns split over up to `numThreads`. On
/// AVX-512 unless `useAvx512` is false (then AVX2: the fallback's parity
/// test runs it on AVX-512 machines too).
void matmulBlockQuantPacked(const float *a, int64_t rows,
                            const PackedBlockQuant &w, float *y,
                            int numThreads, bool useAvx512 = true);

} // namespace tpc::cpu

#endif
