//===- KernelTestUtil.h - Helpers for CPU kernel tests ----------*- C++ -*-===//
//
// Owned tensors, seeded random data, a runner that goes through the kernel
// registry exactly as the runtime does (prepare once, then run), and small
// float64 reference helpers (index arithmetic, broadcasting) that the tests
// use instead of anything from the kernel library.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_TEST_UNIT_KERNELS_KERNELTESTUTIL_H
#define TPC_TEST_UNIT_KERNELS_KERNELTESTUTIL_H

#include "kernels/Types.h"
#include "kernels/cpu/Registry.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tpc::cpu::test {

/// A dense tensor that owns its bytes.
struct Tensor {
  TensorDesc desc;
  std::vector<uint8_t> bytes;

  Tensor() = default;
  Tensor(DType dtype, Shape shape);

  int64_t numel() const { return desc.numel(); }
  void *data() { return bytes.data(); }
  const void *data() const { return bytes.data(); }

  /// Element i converted to double (bool as 0/1, f16/bf16 decoded; the
  /// float8 and 4-/2-bit types give their code, not its value).
  double at(int64_t i) const;
  /// Stores `v` into element i, converting to the dtype (ints truncate,
  /// f16/bf16 round to nearest by the test's own reference; for the float8
  /// and 4-/2-bit types `v` is the code).
  void set(int64_t i, double v);
  std::vector<double> values() const;

  template <class T> T get(int64_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  template <class T> void put(int64_t i, T v) {
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
};

/// Tensor of `dtype` holding `values` (converted like Tensor::set).
Tensor makeTensor(DType dtype, Shape shape, const std::vector<double> &values);

/// Seeded uniform values in [lo, hi]; integers are drawn from that range,
/// bools are random, float8 and 4-/2-bit types get random codes (every
/// code possible). Never all zeros for floats.
Tensor randomTensor(DType dtype, Shape shape, uint64_t seed, double lo = -2.0,
                    double hi = 2.0);

/// Prepares `name` with the given descriptions; the prepared kernel is
/// dropped. For invalid-input tests.
Status prepareOnly(const std::string &name, const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs = {});

/// Prepares and runs `name`. Inputs may contain nullptr for absent optional
/// operands. Outputs must already have their descriptions; their bytes are
/// (re)allocated and poisoned with 0xCD before the run so that unwritten
/// elements show up.
Status runKernel(const std::string &name,
                 const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs, const Attrs &attrs = {},
                 int numThreads = 1);

/// Convenience for single-output kernels: returns the output, failing the
/// test when prepare fails.
Tensor runOne(const std::string &name, const std::vector<const Tensor *> &in,
              DType outType, const Shape &outShape, const Attrs &attrs = {});

/// One integer-list attribute `k` (an axis is a one-entry list).
Attrs ints(const char *k, std::vector<int64_t> v);

/// The attributes a plan carries for Gemm (the onnx dialect's defaults:
/// no transposes, alpha and beta 1).
Attrs gemmAttrs(int64_t transA = 0, int64_t transB = 0, double alpha = 1.0,
                double beta = 1.0);

/// The attributes a plan carries for Softmax and LogSoftmax; the compiler
/// writes every one, with the onnx dialect's default where the model has
/// none (axis -1).
Attrs softmaxAttrs(int64_t axis = -1);
/// Likewise for LayerNormalization, RMSNormalization and AddNormalization
/// (axis -1, epsilon 1e-5; AddNormalization's rms 0).
Attrs normAttrs(int64_t axis = -1, double epsilon = 1e-5, int64_t rms = 0);

/// Likewise for Mod (fmod, 0 by default in the onnx dialect).
Attrs modAttrs(int64_t fmod);

/// `v` as a `t` element holds it (Tensor::set, then Tensor::at): integers
/// truncate and wrap, 16-bit floats round to nearest even by the test's own
/// codec, bools become 0/1.
double storedAs(DType t, double v);

/// numpy matmul computed naively in double (batch dims broadcast, a 1-D
/// operand promoted to a matrix and its dim dropped); `out` gets the shape.
std::vector<double> refMatMul(const Tensor &a, const Tensor &b, Shape &out);

/// Row-major multi-index of flat index `flat` in `shape`.
std::vector<int64_t> unravel(int64_t flat, const Shape &shape);
/// Flat index of `idx` in `shape`.
int64_t ravel(const std::vector<int64_t> &idx, const Shape &shape);
/// Flat index in `in` (right-aligned, broadcast) of output index `outIdx`.
int64_t broadcastIndex(const std::vector<int64_t> &outIdx, const Shape &in);

/// Expects `actual` to match `expected` elementwise within
/// atol + rtol * |expected| (NaN matches NaN).
void expectClose(const Tensor &actual, const std::vector<double> &expected,
                 double rtol = 1e-5, double atol = 1e-6);

/// Runs `name` and expects the run (not the prepare) to fail with a message
/// containing `fragment`.
void expectRunError(const std::string &name,
                    const std::vector<const Tensor *> &in, DType outType,
                    const Shape &outShape, const std::string &fragment,
                    const Attrs &attrs = {});

/// Expects prepare's error message to contain `needle`.
#define EXPECT_PREPARE_ERROR(status, needle)                                   \
  do {                                                                         \
    ::tpc::Status _s = (status);                                               \
    EXPECT_FALSE(_s.isOk()) << "prepare unexpectedly succeeded";               \
    EXPECT_NE(_s.message().find(needle), std::string::npos)                    \
        << "message: " << _s.message();                                        \
  } while (0)

/// One prepare that must fail: kernel `name` from `in` to `out` with
/// `attrs`, refused with a message containing `needle`.
struct PrepareErrorCase {
  const char *name;
  std::vector<TensorDesc> in, out;
  const char *needle;
  Attrs attrs = {};
};

/// EXPECT_PREPARE_ERROR for every case, in order.
void expectPrepareErrors(const std::vector<PrepareErrorCase> &cases);

/// Reference half/bfloat16 codecs, written independently of the kernels:
/// decoding by formula, encoding by nearest search over all 65536 values.
double refDecodeHalf(uint16_t bits);
double refDecodeBFloat16(uint16_t bits);
uint16_t refEncodeHalf(double v);
uint16_t refEncodeBFloat16(double v);

} // namespace tpc::cpu::test

#endif // TPC_TEST_UNIT_KERNELS_KERNELTESTUTIL_H
