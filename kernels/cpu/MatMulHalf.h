//===- MatMulHalf.h - Matrix products of 16-bit floats ----------*- C++ -*-===//
//
// MatMul and Gemm on f16 / bf16 operands: panels of the operands are widened
// to float and multiplied by the f32 path of matMulKernel / gemmKernel, so
// products accumulate in f32 and each result is rounded once.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_MATMULHALF_H
#define TPC_KERNELS_CPU_MATMULHALF_H

#include "kernels/cpu/MatMul.h"

namespace tpc::cpu {

/// matMulKernel for p.dtype F16 or BF16.
void matMulHalfKernel(const MatMulParams &p, const void *a, const void *b,
                      void *y, int numThreads);

/// gemmKernel for p.dtype F16 or BF16; alpha and beta apply in float.
void gemmHalfKernel(const GemmParams &p, const void *a, const void *b,
                    const void *c, void *y, int numThreads);

/// The kernels of bf16 MatMul and Gemm: a weight B (bound to the engine)
/// shared by every batch and a row-major A run on the bf16 product
/// (Bgemm.h: AMX or AVX512-BF16) where the CPU has it; everything else on
/// the widening path. A MatMul's epilogue (bias input and activation) runs
/// in fp32 before the product's rounding on the bf16 product.
std::unique_ptr<PreparedKernel>
makeMatMulBf16Kernel(const MatMulParams &p, const MatMulEpilogue &epilogue = {});
std::unique_ptr<PreparedKernel> makeGemmBf16Kernel(const GemmParams &p);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_MATMULHALF_H
