//===- VectorMath.h - Transcendental functions over float arrays -*- C++ -*-===//
//
// y[i] = f(x[i]) for the functions transformer activations and softmax
// spend their time in. From polynomial approximations, 16 lanes at a time
// with AVX-512 (F + DQ) or 8 with AVX2 + FMA, the widest the CPU has
// (chosen at run time; VectorMathImpl.h); otherwise the C library's. Error
// bounds against the exact function, on every instruction set (checked in
// VectorMathTest):
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

namespace detail {
/// The functions above for one instruction set (VectorMathImpl.h).
struct VectorMathTable {
  void (*exp)(const float *, float *, int64_t);
  void (*tanh)(const float *, float *, int64_t);
  void (*erf)(const float *, float *, int64_t);
  void (*sigmoid)(const float *, float *, int64_t);
  void (*gelu)(const float *, float *, int64_t);
  void (*geluTanh)(const float *, float *, int64_t);
  float (*expShiftSum)(const float *, float *, int64_t, float);
};
/// Defined only in x86-64 builds, each in a file built for its instruction
/// set; call them only where vectorIsaSupported says so.
const VectorMathTable &vectorMathAvx2();
const VectorMathTable &vectorMathAvx512();
} // namespace detail

/// The instruction sets the functions above have code for.
enum class VectorIsa { Scalar, Avx2, Avx512 };
/// Whether this CPU and build can run `isa`.
bool vectorIsaSupported(VectorIsa isa);
/// The one the functions use: the widest supported, unless set.
VectorIsa vectorMathIsa();
/// "avx512", "avx2-fma" or "scalar".
const char *vectorIsaName(VectorIsa isa);
/// Uses `isa` from now on (tests and benchmarks compare them); false, and
/// nothing changes, when it is not supported.
bool setVectorMathIsa(VectorIsa isa);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_VECTORMATH_H
