//===- VectorMathAvx2.cpp - VectorMath.h on 8 lanes (AVX2 + FMA) ----------===//
//
// Compiled with -mavx2 -mfma (kernels/cpu/CMakeLists.txt); VectorMath.cpp
// calls it only on CPUs that have both.
//
//===----------------------------------------------------------------------===//
#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "kernels/cpu/VectorMathImpl.h"

namespace {

struct Avx2 {
  using V = __m256;
  using M = __m256;
  static constexpr int N = 8;
  TPC_SIMD_COMMON_OPS(256)
  static M lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static V select(M m, V a, V b) { return _mm256_blendv_ps(b, a, m); }
  static V round(V a) {
    return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
};

} // namespace

const tpc::cpu::detail::VectorMathTable &
tpc::cpu::detail::vectorMathAvx2() {
  static constexpr VectorMathTable table = makeTable<Avx2>();
  return table;
}
#endif
