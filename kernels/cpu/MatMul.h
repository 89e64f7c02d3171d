//===- MatMul.h - Matrix products -------------------------------*- C++ -*-===//
#ifndef TPC_KERNELS_CPU_MATMUL_H
#define TPC_KERNELS_CPU_MATMUL_H

#include "kernels/cpu/Sgemm.h"
#include "kernels/cpu/Support.h"

#include <array>
#include <vector>

namespace tpc::cpu {

/// Batched row-major [m, k] x [k, n] -> [m, n] products. Batch dims are
/// broadcast: the layout walks the output's batch dims with per-operand
/// element strides between consecutive matrices (0 where broadcast).
struct MatMulParams {
  DType dtype = DType::F32;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  /// Operands: 0 output, 1 A, 2 B.
  StridedLayout<3> batch;
  /// When B is shared by every batch and A's matrices are contiguous, the
  /// whole product is one GEMM with m * batch rows.
  bool foldBatch = false;
};

/// Checks a MatMul's operands (numpy semantics: a 1-D A is a row vector, a
/// 1-D B a column vector, leading dims broadcast) and fills `p`.
Status makeMatMulParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, MatMulParams &p);

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

/// ONNX Gemm: y = alpha * op(A) * op(B) + beta * C, op() transposing when
/// asked; C (optional) broadcasts to [m, n] with strides cRowStride and
/// cColStride (each 0 or its dense stride).
struct GemmParams {
  DType dtype = DType::F32;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool transA = false;
  bool transB = false;
  double alpha = 1.0;
  double beta = 1.0;
  bool hasC = false;
  int64_t cRowStride = 0;
  int64_t cColStride = 0;
};

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
