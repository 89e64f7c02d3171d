//===- MatMul.h - Matrix products -------------------------------*- C++ -*-===//
#ifndef TPC_KERNELS_CPU_MATMUL_H
#define TPC_KERNELS_CPU_MATMUL_H

#include "kernels/MatMul.h"
#include "kernels/cpu/Sgemm.h"
#include "kernels/cpu/Support.h"

#include <array>
#include <memory>
#include <vector>

namespace tpc::cpu {

/// f32/f64 go to OpenBLAS with `numThreads` threads; i64/i32 use a plain
/// loop (wrapping on overflow).
void matMulKernel(const MatMulParams &p, const void *a, const void *b, void *y,
                  int numThreads);

/// The element offsets {output, A, B} of each matrix product of `p`: one
/// {0, 0, 0} when the batch folds into one GEMM.
std::vector<std::array<int64_t, 3>> matMulOffsets(const MatMulParams &p);
/// Whether every product of `offsets` reads the same B (a weight the
/// kernel may pack once).
bool sharesB(const std::vector<std::array<int64_t, 3>> &offsets);

void gemmKernel(const GemmParams &p, const void *a, const void *b,
                const void *c, void *y, int numThreads);

/// What an fp32 product does to its output before it returns, in sgemm's
/// epilogue: y = act(y + bias) with the bias (one value per column) read
/// from input `biasInput` (-1: none).
struct MatMulEpilogue {
  int biasInput = -1;
  SgemmActivation act = SgemmActivation::None;
};

/// The weight operand (input 1) of a GEMM kernel as its packing reads it:
/// [k, n] with leading dimension `ld`, or [n, k] when `trans`.
struct WeightLayout {
  int64_t k = 0, n = 0, ld = 0;
  bool trans = false;
  bool operator==(const WeightLayout &o) const {
    return k == o.k && n == o.n && ld == o.ld && trans == o.trans;
  }
};

/// The part of a GEMM kernel that packs its constant weight once, when the
/// engine binds it, and shares one packing among the bindings of a step
/// (run-time shapes). `Self` says whether it packs (`packsWeight()`) and
/// how the weight is laid out (`weight()`); `Packed` is the packed form,
/// built from `Elem`s.
template <class Self, class Packed, class Elem>
class PackedWeightKernel : public PreparedKernel {
public:
  void bindConstantInput(size_t index, const void *data) override {
    if (index != 1 || !self().packsWeight())
      return;
    const WeightLayout w = self().weight();
    auto packed = std::make_shared<Packed>();
    packed->pack(static_cast<const Elem *>(data), w.k, w.n, w.ld, w.trans);
    packed_ = std::move(packed);
  }

  bool shareConstantInput(size_t index, const PreparedKernel &bound) override {
    auto *other = dynamic_cast<const Self *>(&bound);
    if (index != 1 || !other || !other->packed_ || !self().packsWeight() ||
        !(other->weight() == self().weight()))
      return false;
    packed_ = other->packed_;
    return true;
  }

protected:
  std::shared_ptr<const Packed> packed_;

private:
  const Self &self() const { return static_cast<const Self &>(*this); }
};

/// The fp32 kernels, on tpc's own sgemm: B (a weight) is packed once when
/// bound with bindConstantInput.
std::unique_ptr<PreparedKernel>
makeMatMulF32Kernel(const MatMulParams &p, const MatMulEpilogue &epilogue = {});
std::unique_ptr<PreparedKernel> makeGemmF32Kernel(const GemmParams &p);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_MATMUL_H
