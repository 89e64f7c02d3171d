//===- VectorMath.cpp - Choosing the vector math's instruction set --------===//
//
// The algorithms are in VectorMathImpl.h, compiled for AVX2 and for
// AVX-512 in files of their own; this file picks one per call from the CPU
// (or a test's choice) and keeps the C library's functions for CPUs with
// neither.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/VectorMath.h"

#include <atomic>
#include <cmath>
#include <initializer_list>

#if defined(__x86_64__)
#define TPC_HAVE_X86 1
#endif

namespace tpc::cpu {
namespace {

float scalarSigmoid(float x) {
  float e = std::exp(-std::fabs(x));
  return x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
float scalarGelu(float x) {
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
}
float scalarGeluTanh(float x) {
  float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  return x * scalarSigmoid(2.0f * inner);
}

template <class F> void mapScalar(const float *x, float *y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = f(x[i]);
}

} // namespace

bool vectorIsaSupported(VectorIsa isa) {
#ifdef TPC_HAVE_X86
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  static const bool avx512 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512dq");
  }();
  switch (isa) {
  case VectorIsa::Scalar: return true;
  case VectorIsa::Avx2: return avx2;
  case VectorIsa::Avx512: return avx512;
  }
  return false;
#else
  return isa == VectorIsa::Scalar;
#endif
}

namespace {

VectorIsa widestIsa() {
  for (VectorIsa isa : {VectorIsa::Avx512, VectorIsa::Avx2})
    if (vectorIsaSupported(isa))
      return isa;
  return VectorIsa::Scalar;
}

std::atomic<VectorIsa> &currentIsa() {
  static std::atomic<VectorIsa> isa{widestIsa()};
  return isa;
}

} // namespace

VectorIsa vectorMathIsa() {
  return currentIsa().load(std::memory_order_relaxed);
}

const char *vectorIsaName(VectorIsa isa) {
  switch (isa) {
  case VectorIsa::Scalar: return "scalar";
  case VectorIsa::Avx2: return "avx2-fma";
  case VectorIsa::Avx512: return "avx512";
  }
  return "scalar";
}

bool setVectorMathIsa(VectorIsa isa) {
  if (!vectorIsaSupported(isa))
    return false;
  currentIsa().store(isa, std::memory_order_relaxed);
  return true;
}

namespace {

/// The table of the instruction set in use; null for the scalar code.
const detail::VectorMathTable *table() {
#ifdef TPC_HAVE_X86
  switch (vectorMathIsa()) {
  case VectorIsa::Avx512:
    return &detail::vectorMathAvx512();
  case VectorIsa::Avx2:
    return &detail::vectorMathAvx2();
  case VectorIsa::Scalar:
    break;
  }
#endif
  return nullptr;
}

} // namespace

#define TPC_DISPATCH(field, ...)                                               \
  if (const detail::VectorMathTable *t = table())                              \
    return t->field(x, y, n);                                                  \
  return mapScalar(x, y, n, __VA_ARGS__)

void vecExp(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(exp, [](float v) { return std::exp(v); });
}
void vecTanh(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(tanh, [](float v) { return std::tanh(v); });
}
void vecErf(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(erf, [](float v) { return std::erf(v); });
}
void vecSigmoid(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(sigmoid, scalarSigmoid);
}
void vecGelu(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(gelu, scalarGelu);
}
void vecGeluTanh(const float *x, float *y, int64_t n) {
  TPC_DISPATCH(geluTanh, scalarGeluTanh);
}

float vecExpShiftSum(const float *x, float *y, int64_t n, float shift) {
  if (const detail::VectorMathTable *t = table())
    return t->expShiftSum(x, y, n, shift);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - shift);
    sum += y[i];
  }
  return sum;
}

} // namespace tpc::cpu
