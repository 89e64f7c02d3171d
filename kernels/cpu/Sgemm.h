//===- Sgemm.h - tpc's own fp32 matrix product ------------------*- C++ -*-===//
//
// C = alpha * op(A) op(B) (+ C), row-major, the way BLIS structures it: B in
// panels of kSgemmNr columns, A in panels of as many rows as the
// micro-kernel takes, a register-tiled micro-kernel chosen at run time from
// what the CPU has (AVX-512: 14 x 32 over two panels, 28 zmm accumulators;
// AVX2 + FMA: 6 x 16; plain C++ otherwise) and cache blocking over K and
// M. A weight B is packed once
// (PackedMatrix) when its kernel is bound to the engine's weights; other
// operands are packed per call, each thread packing only what it uses.
// Threads split the columns, so no two write the same output. A seed of C
// (Gemm's beta * C) and an epilogue (a bias per column, then an
// activation) run in the thread that owns the columns, the seed before its
// first product and the epilogue on each block of rows as soon as its last
// K block is done, while the block is still in cache.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_SGEMM_H
#define TPC_KERNELS_CPU_SGEMM_H

#include "kernels/cpu/Scratch.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace tpc::cpu {

/// Columns of a B panel, for every micro-kernel (so packed weights do not
/// depend on the CPU).
constexpr int64_t kSgemmNr = 16;
/// The most rows any micro-kernel's tile has.
constexpr int64_t kSgemmMaxMr = 16;

/// A packed weight: op(B), K x N, in panels of elements T on a cache line
/// (allocAligned), as the GEMMs' packings lay it out.
template <class T> class PackedPanels {
public:
  bool empty() const { return !data_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }

protected:
  /// Takes the shape K x N and `count` elements to pack it into.
  T *reset(int64_t k, int64_t n, size_t count) {
    k_ = k;
    n_ = n;
    data_.reset(allocAligned<T>(count));
    return data_.get();
  }
  const T *data() const { return data_.get(); }

private:
  struct Free {
    void operator()(T *p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  int64_t k_ = 0, n_ = 0;
};

/// A K x N matrix stored as ceil(N / kSgemmNr) panels, panel p holding
/// columns [p * Nr, p * Nr + Nr) as K rows of Nr floats (zero past N).
class PackedMatrix : public PackedPanels<float> {
public:
  /// Packs op(B): B is [k, n] (ld ldb) or, with trans, [n, k] (ld ldb).
  void pack(const float *b, int64_t k, int64_t n, int64_t ldb, bool trans);
  /// Row `row` of panel `p`.
  const float *panel(int64_t p, int64_t row) const {
    return data() + (p * k() + row) * kSgemmNr;
  }
};

/// The activation of sgemm's epilogue; the vector functions of VectorMath.h
/// (the unfused kernels' own), so fusing does not change the values.
enum class SgemmActivation { None, Relu, Gelu, GeluTanh };

/// x[i] = act(x[i]) in place (the vector math's GELUs; Relu keeps NaN).
void applyActivation(SgemmActivation act, float *x, int64_t n);

/// The epilogue the GEMMs end in, last: C[i, j] = act(C[i, j] + bias[j])
/// (bias, n values of the product's element type T, may be null).
template <class T> struct GemmEpilogueArgs {
  const T *bias = nullptr;
  SgemmActivation act = SgemmActivation::None;
};

struct SgemmArgs : GemmEpilogueArgs<float> {
  int64_t m = 0, n = 0, k = 0;
  /// op(A) is [m, k]: A is [m, k] with row stride lda, or [k, m] if transA.
  const float *a = nullptr;
  int64_t lda = 0;
  bool transA = false;
  /// op(B) is [k, n]; used when packedB is null.
  const float *b = nullptr;
  int64_t ldb = 0;
  bool transB = false;
  const PackedMatrix *packedB = nullptr;
  float *c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
  /// C += alpha * op(A) op(B) instead of C = alpha * op(A) op(B).
  bool accumulate = false;
  /// When set, C is first set to beta * seed[i * seedRowStride + j *
  /// seedColStride] (strides 0 where broadcast) and the product added to
  /// it; accumulate is then ignored.
  const float *seed = nullptr;
  int64_t seedRowStride = 0, seedColStride = 0;
  float beta = 1.0f;
};

/// One product on `numThreads` threads (parallelRun).
void sgemm(const SgemmArgs &args, int numThreads);

/// Which micro-kernel sgemm uses: "avx512f", "avx2-fma" or "generic", the
/// fastest this CPU runs unless sgemmUseKernel() chose another.
const char *sgemmKernelName();

/// The micro-kernels this CPU can run, fastest first.
std::vector<const char *> sgemmAvailableKernels();
/// Makes sgemm use the micro-kernel `name` (one of sgemmAvailableKernels);
/// false, changing nothing, for a name this CPU cannot run. For tests and
/// benchmarks that compare the paths; not thread-safe against running
/// products.
bool sgemmUseKernel(const char *name);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_SGEMM_H
