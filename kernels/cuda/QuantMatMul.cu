//===- QuantMatMul.cu - MatMulNBits: block-quantized weights (CUDA) -------===//
//
// One warp per output column: the lanes stride over the column's packed
// bytes (two 4-bit codes or one 8-bit code each), widen each code with its
// block's zero point and scale, and multiply it into every row of A (up to
// kRowsPerPass rows per pass over the bytes); a shuffle reduction gives the
// column's sums. A decode step (one row) reads each packed byte once, as the
// CPU kernel does; a prompt's forward reads them once per kRowsPerPass rows.
// Accumulates in f32.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/DeviceUtil.cuh"
#include "kernels/cuda/Kernels.h"

namespace tpc::cuda {
namespace {

constexpr int kRowsPerPass = 8;
constexpr int kWarpsPerBlock = 8;

/// Element i of a float operand of dtype `t` (f32, f16 or bf16) as f32.
__device__ __forceinline__ float loadFloat(const void *p, int64_t i,
                                           DType t) {
  switch (t) {
  case DType::F16:
    return __half2float(static_cast<const __half *>(p)[i]);
  case DType::BF16:
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
  default:
    return static_cast<const float *>(p)[i];
  }
}

/// Block b's zero point of column n.
__device__ __forceinline__ float zeroOf(const MatMulNBitsParams &p,
                                        const void *zero, int64_t n,
                                        int64_t b) {
  switch (p.zero) {
  case MatMulNBitsParams::Zero::Packed: {
    const auto *z = static_cast<const uint8_t *>(zero) +
                    n * ((p.blocks * p.bits + 7) / 8);
    if (p.bits == 8)
      return float(z[b]);
    const uint8_t byte = z[b / 2];
    return float(b % 2 ? byte >> 4 : byte & 15);
  }
  case MatMulNBitsParams::Zero::PerBlock:
    return loadFloat(zero, n * p.blocks + b, p.zeroType);
  case MatMulNBitsParams::Zero::Scalar:
    return loadFloat(zero, 0, p.zeroType);
  default:
    return float(1 << (p.bits - 1));
  }
}

template <class T>
__global__ void matMulNBitsTyped(MatMulNBitsParams p, const T *a,
                                 const uint8_t *codes, const void *scales,
                                 const void *zero, T *y) {
  const int lane = threadIdx.x & 31;
  const int64_t n = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (n >= p.n)
    return;
  const int64_t blob = p.blockSize * p.bits / 8, bytes = p.blocks * blob;
  const int perByte = p.bits == 4 ? 2 : 1;
  const uint8_t *column = codes + n * bytes;
  for (int64_t r0 = 0; r0 < p.rows; r0 += kRowsPerPass) {
    const int rows = int(p.rows - r0 < kRowsPerPass ? p.rows - r0
                                                    : kRowsPerPass);
    float acc[kRowsPerPass];
#pragma unroll
    for (int r = 0; r < kRowsPerPass; ++r)
      acc[r] = 0.f;
    for (int64_t j = lane; j < bytes; j += 32) {
      const int64_t b = j / blob;
      const float scale = loadFloat(scales, n * p.blocks + b, p.scaleType);
      const float z = zeroOf(p, zero, n, b);
      const uint8_t byte = column[j];
      for (int c = 0; c < perByte; ++c) {
        const int64_t k = b * p.blockSize + (j % blob) * perByte + c;
        if (k >= p.k)
          continue;
        const int code = p.bits == 4 ? (c ? byte >> 4 : byte & 15) : byte;
        const float w = (float(code) - z) * scale;
#pragma unroll
        for (int r = 0; r < kRowsPerPass; ++r)
          if (r < rows)
            acc[r] += w * float(toCompute(a[(r0 + r) * p.k + k]));
      }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerPass; ++r) {
      const float s = warpSum(acc[r]);
      if (lane == 0 && r < rows)
        y[(r0 + r) * p.n + n] = fromCompute<T>(s);
    }
  }
}

} // namespace

cudaError_t matMulNBitsKernel(const MatMulNBitsParams &p, const void *a,
                              const void *codes, const void *scales,
                              const void *zero, void *y,
                              cudaStream_t stream) {
  if (p.rows == 0 || p.n == 0)
    return cudaSuccess;
  const unsigned blocks =
      unsigned((p.n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  return visitFloat(p.dtype, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, double>) {
      return cudaErrorInvalidValue;
    } else {
      matMulNBitsTyped<T><<<blocks, kWarpsPerBlock * 32, 0, stream>>>(
          p, static_cast<const T *>(a), static_cast<const uint8_t *>(codes),
          scales, zero, static_cast<T *>(y));
      return cudaGetLastError();
    }
  });
}

} // namespace tpc::cuda
