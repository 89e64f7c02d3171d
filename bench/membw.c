/* Read-bandwidth probe for bench/machine.py: sums a float array with eight
 * independent 32-byte vector accumulators, so the loop is limited by loads
 * rather than by add latency. Built with -O3 -march=native into bench/.cache/. */
#include <stddef.h>
#include <string.h>

typedef float v8 __attribute__((vector_size(32)));

static inline v8 load8(const float *p) {
  v8 x;
  memcpy(&x, p, sizeof x);
  return x;
}

float tpc_bench_read_sum(const float *p, size_t n) {
  v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a0 += load8(p + i);
    a1 += load8(p + i + 8);
    a2 += load8(p + i + 16);
    a3 += load8(p + i + 24);
    a4 += load8(p + i + 32);
    a5 += load8(p + i + 40);
    a6 += load8(p + i + 48);
    a7 += load8(p + i + 56);
  }
  v8 t = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
  float s = 0.0f;
  for (int k = 0; k < 8; ++k)
    s += t[k];
  for (; i < n; ++i)
    s += p[i];
  return s;
}
