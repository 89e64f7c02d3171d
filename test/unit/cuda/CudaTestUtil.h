//===- CudaTestUtil.h - Running CUDA kernels against the CPU ----*- C++ -*-===//
//
// A parity case names a kernel, its host inputs (random, never all zeros),
// its output descriptions and attributes. runParity() runs the CUDA kernel
// through the CUDA registry exactly as the runtime does (prepare once, run
// on a non-blocking stream), then again captured into a CUDA graph, with
// every output poisoned (0xFF bytes: NaN for floats, -1 for integers)
// before each run, and compares against the CPU kernel of the same name.
// CPU kernels that refuse f16/bf16 run on the inputs widened to f32.
//
// Without a usable GPU the tests skip with the reason (GTEST_SKIP), so that
// ctest reports them as skipped, never as passed.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_TEST_UNIT_CUDA_CUDATESTUTIL_H
#define TPC_TEST_UNIT_CUDA_CUDATESTUTIL_H

#include "../kernels/KernelTestUtil.h"

#include <ostream>
#include <string>
#include <vector>

namespace tpc::cuda::test {

using cpu::test::Tensor;

/// Whether device 0 can run kernels; `why` says what failed when not.
bool gpuAvailable(std::string &why);

#define TPC_REQUIRE_GPU()                                                      \
  do {                                                                         \
    std::string _tpcWhy;                                                       \
    if (!::tpc::cuda::test::gpuAvailable(_tpcWhy))                             \
      GTEST_SKIP() << "needs a CUDA GPU: " << _tpcWhy;                         \
  } while (0)

/// Elementwise tolerance |gpu - cpu| <= atol + rtol * |cpu|.
struct Tolerance {
  double rtol = 0, atol = 0;
};

/// The default tolerance of a dtype: exact for integers and bool; f32
/// 1e-5 relative, f64 1e-12, f16 2e-3 and bf16 1.6e-2 (one or two units in
/// the last place: the CUDA kernels compute 16-bit floats in f32 and round
/// once, the CPU reference too or not at all).
Tolerance defaultTolerance(DType t);

struct ParityCase {
  /// Test name (letters, digits, '_'); unique in the table.
  std::string name;
  std::string kernel;
  /// Host inputs; a tensor with shape {-1} is an absent operand.
  std::vector<Tensor> inputs;
  std::vector<TensorDesc> outputs;
  Attrs attrs;
  /// Multiplies the dtype tolerance (reductions and products over long
  /// rows accumulate in another order than the CPU).
  double tolScale = 1;
  /// Device operands start this many elements past a 256-byte boundary, to
  /// exercise the unaligned paths.
  int misalign = 0;
  /// When >= 0, output 0 is written over input `inPlace` (same type and
  /// shape), as the memory planner runs elementwise kernels.
  int inPlace = -1;
};

/// The CPU kernel's outputs for the case: on the case's dtypes, or with
/// f16/bf16 operands widened to f32 when the CPU kernel refuses those.
Status cpuReference(const ParityCase &c, std::vector<Tensor> &outs);

/// Prints the case's name (gtest would dump its bytes).
inline void PrintTo(const ParityCase &c, std::ostream *os) { *os << c.name; }

/// Runs the case on the GPU (eager and graph-captured) and on the CPU and
/// compares; failures are reported with EXPECT/ADD_FAILURE.
void runParity(const ParityCase &c);

/// The table of every parity case (built once, from the *Cases.cpp files).
const std::vector<ParityCase> &allParityCases();

// The per-family tables.
void addElementwiseCases(std::vector<ParityCase> &cases);
void addMovementCases(std::vector<ParityCase> &cases);
void addNormCases(std::vector<ParityCase> &cases);
void addMatMulCases(std::vector<ParityCase> &cases);

/// Helpers for the tables: a fresh random tensor (every call a new seed),
/// an absent operand, attribute builders.
/// Appends the case KERNEL_NAME to `v`, with the attributes the compiler
/// would write for the op where `a` leaves them off.
void addCase(std::vector<ParityCase> &v, std::string name, std::string kernel,
             std::vector<Tensor> in, std::vector<TensorDesc> out,
             Attrs a = {}, double tolScale = 1, int misalign = 0);
Tensor rnd(DType t, Shape s, double lo = -2.0, double hi = 2.0);
Tensor absent();
Attrs ints(const std::string &k, std::vector<int64_t> v, Attrs a = {});
Attrs intAttr(const std::string &k, int64_t v, Attrs a = {});

} // namespace tpc::cuda::test

#endif // TPC_TEST_UNIT_CUDA_CUDATESTUTIL_H
