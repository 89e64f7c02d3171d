//===- QuantMatMulTest.cpp - MatMulNBits against a float64 reference ------===//
//
// The block-quantized GEMM through the kernel registry, as a plan runs it
// (unbound, so repacked per call), and each kernel directly:
// every bit width, block size and zero-point form, K and N that are not
// multiples of anything, one to nine rows (the kernel groups rows by four),
// f32 and bf16 activations, f16 scales, one and two threads. The reference
// dequantizes the packed bytes in double by the format's definition.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/cpu/QuantMatMul.h"

#include <cmath>
#include <random>

namespace tpc::cpu::test {
namespace {

enum class Zero { Default, Packed, PerBlock, Scalar };

struct Case {
  int bits;
  int64_t blockSize, k, n, rows;
  Zero zero;
  DType dtype = DType::F32;
  DType scaleType = DType::F32;
  int threads = 1;
};

/// Code `i` of a row of `bits`-bit codes packed low first.
int codeOf(const Tensor &bytes, int64_t base, int64_t i, int bits) {
  uint8_t byte = bytes.get<uint8_t>(base + (bits == 8 ? i : i / 2));
  if (bits == 8)
    return byte;
  return i % 2 ? byte >> 4 : byte & 15;
}

void runCase(const Case &c) {
  SCOPED_TRACE("bits " + std::to_string(c.bits) + " block " +
               std::to_string(c.blockSize) + " k " + std::to_string(c.k) +
               " n " + std::to_string(c.n) + " rows " +
               std::to_string(c.rows) + " zero " +
               std::to_string(int(c.zero)) + " dtype " +
               dtypeName(c.dtype) + " threads " + std::to_string(c.threads));
  const int64_t blocks = (c.k + c.blockSize - 1) / c.blockSize;
  const int64_t blob = c.blockSize * c.bits / 8;
  const int64_t zeroBytes = (blocks * c.bits + 7) / 8;
  std::mt19937 rng(uint32_t(c.k * 131 + c.n * 7 + c.bits + c.rows));
  Tensor codes(DType::U8, {c.n, blocks, blob});
  for (int64_t i = 0; i < codes.numel(); ++i)
    codes.put<uint8_t>(i, uint8_t(rng() & 255));
  Tensor a = randomTensor(c.dtype, {c.rows, c.k}, rng());
  Tensor scales = randomTensor(c.scaleType, {c.n, blocks}, rng(), 0.01, 0.2);
  Tensor zero;
  switch (c.zero) {
  case Zero::Packed:
    zero = Tensor(DType::U8, {c.n, zeroBytes});
    for (int64_t i = 0; i < zero.numel(); ++i)
      zero.put<uint8_t>(i, uint8_t(rng() & 255));
    break;
  case Zero::PerBlock:
    zero = randomTensor(c.scaleType, {c.n, blocks}, rng(), 0.0,
                        double((1 << c.bits) - 1));
    break;
  case Zero::Scalar:
    zero = makeTensor(c.scaleType, {1}, {double((1 << c.bits) / 2 - 3) + 0.5});
    break;
  case Zero::Default:
    break;
  }
  std::vector<double> expected(size_t(c.rows * c.n), 0.0);
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t kk = 0; kk < c.k; ++kk) {
      const int64_t b = kk / c.blockSize, i = kk % c.blockSize;
      const double code = codeOf(codes, (n * blocks + b) * blob, i, c.bits);
      double z = double(1 << (c.bits - 1));
      if (c.zero == Zero::Packed)
        z = codeOf(zero, n * zeroBytes, b, c.bits);
      else if (c.zero == Zero::PerBlock)
        z = zero.at(n * blocks + b);
      else if (c.zero == Zero::Scalar)
        z = zero.at(0);
      const double w = (code - z) * scales.at(n * blocks + b);
      for (int64_t r = 0; r < c.rows; ++r)
        expected[size_t(r * c.n + n)] += a.at(r * c.k + kk) * w;
    }
  Attrs attrs;
  attrs.setInt("bits", c.bits);
  attrs.setInt("block_size", c.blockSize);
  std::vector<const Tensor *> in = {&a, &codes, &scales};
  if (c.zero != Zero::Default)
    in.push_back(&zero);
  std::vector<Tensor> out = {Tensor(c.dtype, {c.rows, c.n})};
  ASSERT_TRUE(runKernel("MatMulNBits", in, out, attrs, c.threads).isOk());
  // f32 sums of up to a few hundred products; bf16 rounds the result once.
  const double rtol = c.dtype == DType::F32 ? 2e-5 : 8e-3;
  double scale = 0;
  for (double v : expected)
    scale = std::max(scale, std::fabs(v));
  expectClose(out[0], expected, rtol, rtol * scale);

  // The portable loop (the kernel of CPUs without AVX2), and the repacked
  // column-group kernels an engine's bound weight runs on, from the same
  // bytes (f32 activations and scales).
  if (c.dtype != DType::F32 || c.scaleType != DType::F32)
    return;
  BlockQuantWeight w;
  w.n = c.n;
  w.k = c.k;
  w.blockSize = c.blockSize;
  w.bits = c.bits;
  w.codes = static_cast<const uint8_t *>(codes.data());
  w.scales = static_cast<const float *>(scales.data());
  std::vector<float> zeros;
  if (c.zero == Zero::Packed)
    w.zeroCodes = static_cast<const uint8_t *>(zero.data());
  else if (c.zero == Zero::PerBlock)
    w.zeroFloats = static_cast<const float *>(zero.data());
  else if (c.zero == Zero::Scalar)
    w.zeroFloats =
        (zeros = std::vector<float>(size_t(c.n * blocks), float(zero.at(0))))
            .data();
  {
    Tensor y(DType::F32, {c.rows, c.n});
    matmulBlockQuantPortable(static_cast<const float *>(a.data()), c.rows, w,
                             static_cast<float *>(y.data()));
    SCOPED_TRACE("portable loop");
    expectClose(y, expected, rtol, rtol * scale);
  }
  if (!packedBlockQuantSupported(w))
    return;
  PackedBlockQuant packed = packBlockQuant(w);
  // The AVX-512 kernel, and the AVX2 fallback where the CPU has AVX2.
  for (bool avx512 : {true, false}) {
#if defined(__x86_64__)
    if (!avx512 && !(__builtin_cpu_supports("avx2") &&
                     __builtin_cpu_supports("fma")))
      continue;
#else
    if (!avx512)
      continue;
#endif
    Tensor y(DType::F32, {c.rows, c.n});
    matmulBlockQuantPacked(static_cast<const float *>(a.data()), c.rows,
                           packed, static_cast<float *>(y.data()), c.threads,
                           avx512);
    SCOPED_TRACE(avx512 ? "repacked kernel" : "repacked kernel, AVX2");
    expectClose(y, expected, rtol, rtol * scale);
  }
}

TEST(MatMulNBits, EveryLayoutMatchesTheReference) {
  for (int bits : {4, 8})
    for (int64_t block : {16, 32, 64, 128, 256})
      for (Zero zero : {Zero::Default, Zero::Packed, Zero::PerBlock,
                        Zero::Scalar})
        for (int64_t rows : {1, 5})
          runCase({bits, block, block * 3 - 5, 13, rows, zero});
}

TEST(MatMulNBits, RowGroupsAndOddSizes) {
  // Rows in fours, twos and one; N past a 32-column group; K past a block.
  for (int64_t rows : {1, 2, 3, 4, 7, 9})
    for (int64_t k : {17, 64, 100, 333})
      for (int64_t n : {11, 32, 45})
        runCase({4, 32, k, n, rows, Zero::Packed});
}

TEST(MatMulNBits, HalfPrecisionActivationsAndScales) {
  for (DType dtype : {DType::BF16, DType::F16})
    for (Zero zero : {Zero::Default, Zero::PerBlock})
      runCase({4, 32, 96, 19, 3, zero, dtype, dtype});
  runCase({8, 64, 200, 9, 2, Zero::Packed, DType::F32, DType::F16});
}

TEST(MatMulNBits, TwoThreadsSplitTheColumns) {
  // 1200 columns of 512 codes: enough bytes for two threads.
  runCase({4, 32, 512, 1200, 1, Zero::Packed, DType::F32, DType::F32, 2});
  runCase({8, 128, 512, 1200, 3, Zero::Default, DType::F32, DType::F32, 2});
}

TEST(MatMulNBits, ThePathIsNamed) {
  // The kernel an engine's weights run on is named after what this CPU has.
  const std::string name = blockQuantKernelName();
  BlockQuantWeight w;
  w.n = w.k = 32;
  w.codes = reinterpret_cast<const uint8_t *>("");
  w.scales = reinterpret_cast<const float *>("");
  EXPECT_TRUE(name == "avx512 column groups" || name == "avx2 column groups" ||
              name == "portable")
      << name;
  EXPECT_EQ(packedBlockQuantSupported(w), name != "portable");
}

TEST(MatMulNBits, RejectsBadOperands) {
  Attrs attrs;
  attrs.setInt("bits", 4);
  attrs.setInt("block_size", 32);
  const TensorDesc a{DType::F32, {2, 64}}, b{DType::U8, {8, 2, 16}},
      s{DType::F32, {8, 2}}, y{DType::F32, {2, 8}};
  EXPECT_TRUE(prepareOnly("MatMulNBits", {a, b, s}, {y}, attrs).isOk());
  EXPECT_PREPARE_ERROR(
      prepareOnly("MatMulNBits", {a, {DType::U8, {8, 3, 16}}, s}, {y}, attrs),
      "K 64 in blocks of 32 needs 2");
  EXPECT_PREPARE_ERROR(
      prepareOnly("MatMulNBits", {a, b, {DType::F32, {15}}}, {y}, attrs),
      "must hold 16 values");
  EXPECT_PREPARE_ERROR(prepareOnly("MatMulNBits",
                                   {a, b, s, {DType::U8, {8, 2}}}, {y}, attrs),
                       "must be 8 packed u8 codes");
  EXPECT_PREPARE_ERROR(
      prepareOnly("MatMulNBits", {a, b, s}, {{DType::F32, {2, 9}}}, attrs),
      "output");
  Attrs bad = attrs;
  bad.setInt("bits", 3);
  EXPECT_PREPARE_ERROR(prepareOnly("MatMulNBits", {a, b, s}, {y}, bad),
                       "bits must be 4 or 8");
  bad = attrs;
  bad.setInt("block_size", 512);
  EXPECT_PREPARE_ERROR(prepareOnly("MatMulNBits", {a, b, s}, {y}, bad),
                       "from 16 to 256");
}

} // namespace
} // namespace tpc::cpu::test
