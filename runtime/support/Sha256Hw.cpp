//===- Sha256Hw.cpp - SHA-256 blocks with the x86 SHA extensions ----------===//
//
// The compression function on SHA-NI (sha256rnds2 / msg1 / msg2), about five
// times the portable code's speed: engine files are hashed when written and
// again when loaded, so this is most of a compile's CPU time for large
// models. Chosen at run time from CPUID; built with function attributes, so
// the rest of the library keeps the baseline target.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Sha256.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

namespace tpc::detail {
namespace {

bool cpuHasSha() {
  unsigned a, b, c, d;
  // CPUID leaf 7: EBX bit 29 is SHA; SSE4.1 (leaf 1, ECX bit 19) for blends.
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & (1u << 29)))
    return false;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19)))
    return false;
  return true;
}

__attribute__((target("sha,sse4.1"))) void
compressSha(uint32_t state[8], const uint8_t *data, size_t blocks) {
  const __m128i byteSwap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  // The instructions keep the state as (A, B, E, F) and (C, D, G, H).
  __m128i t = _mm_shuffle_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(state)), 0xB1);
  __m128i s1 = _mm_shuffle_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(state + 4)), 0x1B);
  __m128i s0 = _mm_alignr_epi8(t, s1, 8);
  s1 = _mm_blend_epi16(s1, t, 0xF0);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i save0 = s0, save1 = s1;
    __m128i m[4];
    for (int j = 0; j < 16; ++j) {
      // m[j % 4] holds words 4j..4j+3 of the message schedule.
      __m128i &w = m[j % 4];
      if (j < 4)
        w = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i *>(data + 16 * j)),
            byteSwap);
      __m128i k =
          _mm_add_epi32(w, _mm_load_si128(reinterpret_cast<const __m128i *>(
                               kSha256Round + 4 * j)));
      s1 = _mm_sha256rnds2_epu32(s1, s0, k);
      s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(k, 0x0E));
      // The next group from this one and the one before it, which msg1
      // below has not yet overwritten.
      if (j >= 3 && j <= 14) {
        __m128i &next = m[(j + 1) % 4];
        next = _mm_add_epi32(next, _mm_alignr_epi8(w, m[(j + 3) % 4], 4));
        next = _mm_sha256msg2_epu32(next, w);
      }
      if (j >= 1 && j <= 12)
        m[(j + 3) % 4] = _mm_sha256msg1_epu32(m[(j + 3) % 4], w);
    }
    s0 = _mm_add_epi32(s0, save0);
    s1 = _mm_add_epi32(s1, save1);
  }
  t = _mm_shuffle_epi32(s0, 0x1B);
  s1 = _mm_shuffle_epi32(s1, 0xB1);
  s0 = _mm_blend_epi16(t, s1, 0xF0);
  s1 = _mm_alignr_epi8(s1, t, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(state), s0);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(state + 4), s1);
}

} // namespace

bool sha256CompressHardware(uint32_t state[8], const uint8_t *data,
                            size_t blocks) {
  static const bool have = cpuHasSha();
  if (!have)
    return false;
  compressSha(state, data, blocks);
  return true;
}

} // namespace tpc::detail

#else

namespace tpc::detail {
bool sha256CompressHardware(uint32_t *, const uint8_t *, size_t) {
  return false;
}
} // namespace tpc::detail

#endif
