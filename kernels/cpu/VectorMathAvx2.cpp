//===- VectorMathAvx2.cpp - VectorMath.h on 8 lanes (AVX2 + FMA) ----------===//
//
// Compiled with -mavx2 -mfma (kernels/cpu/CMakeLists.txt); VectorMath.cpp
// calls it only on CPUs that have both.
//
//===----------------------------------------------------------------------===//
#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#define TPC_VECMATH_LANES 8
#include "kernels/cpu/VectorMathImpl.h"

const tpc::cpu::detail::VectorMathTable &tpc::cpu::detail::vectorMathAvx2() {
  return simdTable();
}
#endif
