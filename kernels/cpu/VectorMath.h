//===- VectorMath.h - Transcendental functions over float arrays -*- C++ -*-===//
//
// y[i] = f(x[i]) for the functions transformer activations and softmax
// spend their time in. With AVX2 + FMA (chosen at run time) eight lanes at
// a time from polynomial approximations; otherwise the C library's. Error
// bounds against the exact function (checked in VectorMathTest):
//   exp, sigmoid: 3e-7 relative; tanh: 2e-7 absolute + 1e-6 relative;
//   erf: 4e-7 absolute + 1e-6 relative; gelu: 2e-7 |x| absolute + 1e-6 relative;
//   gelu (tanh form): 1e-5 relative.
// x and y may be the same array.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_VECTORMATH_H
#define TPC_KERNELS_CPU_VECTORMATH_H

#include <cstdint>

namespace tpc::cpu {

void vecExp(const float *x, float *y, int64_t n);
void vecTanh(const float *x, float *y, int64_t n);
void vecErf(const float *x, float *y, int64_t n);
void vecSigmoid(const float *x, float *y, int64_t n);
/// 0.5 x (1 + erf(x / sqrt 2)).
void vecGelu(const float *x, float *y, int64_t n);
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
void vecGeluTanh(const float *x, float *y, int64_t n);
/// y[i] = exp(x[i] - shift), returning the sum of the y[i] (softmax rows).
float vecExpShiftSum(const float *x, float *y, int64_t n, float shift);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_VECTORMATH_H
