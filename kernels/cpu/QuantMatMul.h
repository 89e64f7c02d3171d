//===- QuantMatMul.h - Block-quantized weight GEMM (CPU) --------*- C++ -*-===//
//
// Y = A x dequantize(W)^T for a weight W [N, K] stored as onnxruntime's
// MatMulNBits stores it: per column n, K cut into blocks of `blockSize`,
// each block `bits`-bit codes packed low first into bytes, one scale and one
// zero point (packed codes, a float, or the default 2^(bits-1)) per block;
// W[n, k] = (code - zero) * scale. The codes stay packed in memory: each
// block is widened in registers and multiplied into float accumulators, so
// a decode step streams the packed bytes only.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_QUANTMATMUL_H
#define TPC_KERNELS_CPU_QUANTMATMUL_H

#include <cstdint>

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
/// `numThreads` threads (columns split between them). `path` picks the
/// kernel: the AVX-512 one where the CPU has it (blocks of 32 codes widened
/// in registers), else the portable loop.
void matmulBlockQuant(const float *a, int64_t rows, const BlockQuantWeight &w,
                      float *y, int numThreads);
/// The same through the portable loop only (the parity reference's peer).
void matmulBlockQuantPortable(const float *a, int64_t rows,
                              const BlockQuantWeight &w, float *y);
/// "avx512" or "portable": the path matmulBlockQuant takes for `w` here.
const char *blockQuantPath(const BlockQuantWeight &w);

} // namespace tpc::cpu

#endif
