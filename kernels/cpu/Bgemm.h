//===- Bgemm.h - bf16 matrix products on AVX512-BF16 ------------*- C++ -*-===//
//
// C = alpha * A B (+ beta * C0) for bf16 A and a bf16 weight B packed once,
// on the AVX512-BF16 dot-product instruction (vdpbf16ps: two bf16 products
// summed into each fp32 lane per step of two k), accumulating in fp32 and
// rounding each result to bf16 once (to nearest even). The packed weight
// keeps bf16's two bytes per element, so a product streams half the bytes
// of the fp32 path: a bf16 engine's single-token forward, which only streams
// weights, runs in about half the time. Chosen at run time: only on CPUs
// with AVX512-BF16 (bgemmAvailable); elsewhere bf16 products widen to fp32
// (MatMulHalf.h).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_BGEMM_H
#define TPC_KERNELS_CPU_BGEMM_H

#include <cstdint>
#include <memory>

namespace tpc::cpu {

/// Columns of a packed panel.
constexpr int64_t kBgemmNr = 16;

/// Whether this CPU runs the bf16 products (AVX512-F, -BW and -BF16), and
/// whether bgemmForceOff() turned them off.
bool bgemmAvailable();
/// Turns the bf16 products off (true) or back on, for tests and benchmarks
/// that compare them with the widening path; not thread-safe against
/// running products.
void bgemmForceOff(bool off);

/// A bf16 K x N matrix as ceil(N / 16) panels of ceil(K / 2) pairs: pair p
/// of panel q holds rows 2p and 2p + 1 of columns [16 q, 16 q + 16)
/// interleaved (one 64-byte vector), zero past K and N.
class PackedBf16 {
public:
  /// Packs op(B) from bf16 bits: B is [k, n] (row stride ldb) or, with
  /// trans, [n, k].
  void pack(const uint16_t *b, int64_t k, int64_t n, int64_t ldb, bool trans);
  bool empty() const { return !data_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t pairs() const { return (k_ + 1) / 2; }
  /// Panel `q`: pairs() vectors of 32 bf16.
  const uint16_t *panel(int64_t q) const {
    return data_.get() + q * pairs() * 2 * kBgemmNr;
  }

private:
  struct Free {
    void operator()(uint16_t *p) const;
  };
  std::unique_ptr<uint16_t, Free> data_;
  int64_t k_ = 0, n_ = 0;
};

struct BgemmArgs {
  int64_t m = 0;
  /// A: [m, k] bf16 bits, row stride lda (k and n come from b).
  const uint16_t *a = nullptr;
  int64_t lda = 0;
  const PackedBf16 *b = nullptr;
  /// C: [m, n] bf16 bits, row stride ldc.
  uint16_t *c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
  /// Optional C0 (bf16 bits) added as beta * C0[i * c0Row + j * c0Col].
  const uint16_t *c0 = nullptr;
  int64_t c0Row = 0, c0Col = 0;
  float beta = 0.0f;
};

/// One product on `numThreads` threads; needs bgemmAvailable().
void bgemm(const BgemmArgs &args, int numThreads);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_BGEMM_H
