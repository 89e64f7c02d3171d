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

/// The element offsets {output, A, B} of one matrix product of a batch.
using ProductOffsets = std::array<int64_t, 3>;

/// Calls `fn(offsets, rows)` for each matrix product of `p`, `rows` being
/// the rows of A it takes: one product of the whole batch at offsets
/// {0, 0, 0} when the batch folds into one GEMM.
template <class Fn> void forEachProduct(const MatMulParams &p, Fn &&fn) {
  if (p.foldBatch) {
    fn(ProductOffsets{0, 0, 0}, p.m * p.batch.numel);
    return;
  }
  const StridedLayout<3> &l = p.batch;
  forEachRow(l, [&](const int64_t *off) {
    for (int64_t i = 0; i < rowLength(l); ++i)
      fn(ProductOffsets{off[0] + i * rowStride(l, 0),
                        off[1] + i * rowStride(l, 1),
                        off[2] + i * rowStride(l, 2)},
         p.m);
  });
}

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

/// A MatMul's B (row-major [k, n]) and a Gemm's (transposed with transB).
inline WeightLayout weightLayout(const MatMulParams &p) {
  return {p.k, p.n, p.n, false};
}
inline WeightLayout weightLayout(const GemmParams &p) {
  return {p.k, p.n, p.transB ? p.k : p.n, p.transB};
}

/// A GEMM kernel of params `Params` that packs its constant weight once,
/// when the engine binds it, and shares one packing among the bindings of
/// a step (run-time shapes). `Self` says whether it packs
/// (`packsWeight()`); `Packed` is the packed form, built from `Elem`s.
template <class Self, class Params, class Packed, class Elem>
class PackedWeightKernel : public PreparedKernel {
public:
  explicit PackedWeightKernel(const Params &p) : p_(p) {}

  WeightLayout weight() const { return weightLayout(p_); }

  void bindConstantInput(size_t index, const void *data) override {
    if (index != 1 || !self().packsWeight())
      return;
    const WeightLayout w = weight();
    auto packed = std::make_shared<Packed>();
    packed->pack(static_cast<const Elem *>(data), w.k, w.n, w.ld, w.trans);
    packed_ = std::move(packed);
  }

  bool shareConstantInput(size_t index, const PreparedKernel &bound) override {
    auto *other = dynamic_cast<const Self *>(&bound);
    if (index != 1 || !other || !other->packed_ || !self().packsWeight() ||
        !(other->weight() == weight()))
      return false;
    packed_ = other->packed_;
    return true;
  }

protected:
  Params p_;
  std::shared_ptr<const Packed> packed_;

private:
  const Self &self() const { return static_cast<const Self &>(*this); }
};

/// What a MatMul kernel on a packed weight adds: the offsets of its
/// products and its epilogue.
template <class Self, class Packed, class Elem>
class PackedMatMulKernel
    : public PackedWeightKernel<Self, MatMulParams, Packed, Elem> {
public:
  PackedMatMulKernel(const MatMulParams &p, const MatMulEpilogue &e)
      : PackedWeightKernel<Self, MatMulParams, Packed, Elem>(p), epilogue_(e) {
    forEachProduct(p, [&](const ProductOffsets &o, int64_t rows) {
      offsets_.push_back(o);
      rows_ = rows; // the same for every product
      bShared_ &= o[2] == 0;
    });
  }

protected:
  /// Whether every product reads the same B, and B is not empty: a weight
  /// to pack.
  bool sharesWeight() const {
    return bShared_ && this->p_.k > 0 && this->p_.n > 0;
  }
  /// The epilogue's bias input, or null.
  template <class T> const T *bias(const void *const *in) const {
    return epilogue_.biasInput >= 0
               ? static_cast<const T *>(in[epilogue_.biasInput])
               : nullptr;
  }

  MatMulEpilogue epilogue_;
  std::vector<ProductOffsets> offsets_;
  /// Rows of A per product.
  int64_t rows_ = 0;

private:
  bool bShared_ = true;
};

/// The fp32 kernels, on tpc's own sgemm: B (a weight) is packed once when
/// bound with bindConstantInput.
std::unique_ptr<PreparedKernel>
makeMatMulF32Kernel(const MatMulParams &p, const MatMulEpilogue &epilogue = {});
std::unique_ptr<PreparedKernel> makeGemmF32Kernel(const GemmParams &p);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_MATMUL_H
