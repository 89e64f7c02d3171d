//===- Unary.h - Elementwise unary kernels ----------------------*- C++ -*-===//
#ifndef TPC_KERNELS_CPU_UNARY_H
#define TPC_KERNELS_CPU_UNARY_H

#include "kernels/cpu/Support.h"

namespace tpc::cpu {

enum class UnaryOp {
  Sqrt,
  Reciprocal,
  Neg,
  Abs,
  Exp,
  Log,
  Erf,
  Tanh,
  Sigmoid,
  Relu,
  Cos,
  Sin,
  Floor,
  Ceil,
  Sign,
  Softplus,
  HardSigmoid, ///< max(0, min(1, alpha * x + beta))
  LeakyRelu,   ///< x < 0 ? alpha * x : x
  Elu,         ///< x < 0 ? alpha * (exp(x) - 1) : x
  Gelu,        ///< x * Phi(x), exact (erf) form
  GeluTanh,    ///< Gelu with the tanh approximation
  IsNaN,       ///< float -> bool
  Not,         ///< bool -> bool
};

struct UnaryParams {
  UnaryOp op = UnaryOp::Neg;
  /// Input dtype; also the output's except for IsNaN (bool).
  DType dtype = DType::F32;
  int64_t numel = 0;
  double alpha = 0;
  double beta = 0;
};

/// out[i] = op(in[i]) for i < numel. `out` may alias `in`.
void unaryKernel(const UnaryParams &p, const void *in, void *out);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_UNARY_H
