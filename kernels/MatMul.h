//===- MatMul.h - The matrix products, for every backend --------*- C++ -*-===//
//
// MatMul and Gemm: the params both backends run from and their builders,
// which validate the operand descriptions and read the attributes (Gemm's
// alpha, beta, transA and transB come from the plan, which carries each
// with the onnx dialect's default).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_MATMUL_H
#define TPC_KERNELS_MATMUL_H

#include "kernels/Layout.h"

#include <vector>

namespace tpc {

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

/// MatMul (A, B -> Y) with numpy semantics: a 1-D A is a row vector, a 1-D B
/// a column vector (their unit dim dropped from the result), leading dims
/// broadcast. Dims beyond the BLAS int range are refused.
Status makeMatMulParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, MatMulParams &p);

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

/// Gemm (2-D A, 2-D B, optional C -> Y) of one float dtype; attributes
/// alpha, beta, transA and transB.
Status makeGemmParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      GemmParams &p);

} // namespace tpc

#endif // TPC_KERNELS_MATMUL_H
