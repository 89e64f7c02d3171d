//===- MatMul.h - Matrix products -------------------------------*- C++ -*-===//
#ifndef TPC_KERNELS_CPU_MATMUL_H
#define TPC_KERNELS_CPU_MATMUL_H

#include "kernels/MatMul.h"
#include "kernels/cpu/Sgemm.h"
#include "kernels/cpu/Support.h"

#include <array>
#include <vector>

namespace tpc::cpu {

/// f32/f64 go to OpenBLAS with `numThreads` threads; i64/i32 use a plain
/// loop (wrapping on overflow).
void matMulKernel(const MatMulParams &p, const void *a, const void *b, void *y,
                  int numThreads);

/// The element offsets {output, A, B} of each matrix product of `p`: one
/// {0, 0, 0} when the batch folds into one GEMM.
std::vector<std::array<int64_t, 3>> matMulOffsets(const MatMulParams &p);
/// Whether every product of `offsets` reads the same B (a weight the
/// kernel may pack once).
bool sharesB(const std::vector<std::array<int64_t, 3>> &offsets);

void gemmKernel(const GemmParams &p, const void *a, const void *b,
                const void *c, void *y, int numThreads);

/// What an fp32 product does to its output before it returns, in sgemm's
/// epilogue: y = act(y + bias) with the bias (one value per column) read
/// from input `biasInput` (-1: none).
struct MatMulEpilogue {
  int biasInput = -1;
  SgemmActivation act = SgemmActivation::None;
};

/// The fp32 kernels, on tpc's own sgemm: B (a weight) is packed once when
/// bound with bindConstantInput.
std::unique_ptr<PreparedKernel>
makeMatMulF32Kernel(const MatMulParams &p, const MatMulEpilogue &epilogue = {});
std::unique_ptr<PreparedKernel> makeGemmF32Kernel(const GemmParams &p);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_MATMUL_H
