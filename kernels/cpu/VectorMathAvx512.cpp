//===- VectorMathAvx512.cpp - VectorMath.h on 16 lanes (AVX-512) ----------===//
//
// Compiled with -mavx512f -mavx512dq (kernels/cpu/CMakeLists.txt);
// VectorMath.cpp calls it only on CPUs that have both.
//
//===----------------------------------------------------------------------===//
#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>

#include "kernels/cpu/VectorMathImpl.h"

namespace {

struct Avx512 {
  using V = __m512;
  using M = __mmask16;
  static constexpr int N = 16;
  TPC_SIMD_COMMON_OPS(512)
  static M lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static V select(M m, V a, V b) { return _mm512_mask_blend_ps(m, b, a); }
  static V round(V a) {
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT |
                                       _MM_FROUND_NO_EXC);
  }
};

} // namespace

const tpc::cpu::detail::VectorMathTable &
tpc::cpu::detail::vectorMathAvx512() {
  static constexpr VectorMathTable table = makeTable<Avx512>();
  return table;
}
#endif
