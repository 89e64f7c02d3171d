//===- VectorMathAvx512.cpp - VectorMath.h on 16 lanes (AVX-512) ----------===//
//
// Compiled with -mavx512f -mavx512dq (kernels/cpu/CMakeLists.txt);
// VectorMath.cpp calls it only on CPUs that have both.
//
//===----------------------------------------------------------------------===//
#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512DQ__)
#define TPC_VECMATH_LANES 16
#include "kernels/cpu/VectorMathImpl.h"

const tpc::cpu::detail::VectorMathTable &
tpc::cpu::detail::vectorMathAvx512() {
  return simdTable();
}
#endif
