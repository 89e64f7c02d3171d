//===- CommTestUtil.h - Values and buffers for collective tests -*- C++ -*-===//
//
// Shared by the in-process tests and the MPI test program. Values are small
// integers so that every sum is exact in every dtype (bf16 included), which
// makes bit-exact comparisons meaningful.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_TEST_UNIT_RUNTIME_COMMTESTUTIL_H
#define TPC_TEST_UNIT_RUNTIME_COMMTESTUTIL_H

#include "kernels/Types.h"
#include "kernels/Half.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace tpc::test {

/// Stores the integer `v` as element `i` of a `t` array.
inline void setValue(DType t, void *base, size_t i, int64_t v) {
  char *p = static_cast<char *>(base) + i * dtypeSize(t);
  switch (t) {
  case DType::F32: {
    float x = float(v);
    std::memcpy(p, &x, 4);
    return;
  }
  case DType::F64: {
    double x = double(v);
    std::memcpy(p, &x, 8);
    return;
  }
  case DType::F16: {
    uint16_t x = floatToHalf(float(v));
    std::memcpy(p, &x, 2);
    return;
  }
  case DType::BF16: {
    uint16_t x = floatToBf16(float(v));
    std::memcpy(p, &x, 2);
    return;
  }
  case DType::I32: {
    int32_t x = int32_t(v);
    std::memcpy(p, &x, 4);
    return;
  }
  case DType::I64: std::memcpy(p, &v, 8); return;
  case DType::I8:
  case DType::U8:
  case DType::Bool: *p = char(v); return;
  default:
    // The one-byte storage types (float8, 4- and 2-bit integers): a byte
    // pattern, only moved.
    if (dtypeSize(t) == 1)
      *p = char(v);
    return;
  }
}

/// The value rank `rank` contributes at element `i`: small integers, both
/// signs, varying with rank and index.
inline int64_t contribution(int rank, size_t i) {
  return int64_t((i * 7 + size_t(rank) * 13) % 17) - 8;
}

/// A buffer of `count` contributions of `rank`, starting at index `first`.
inline std::vector<uint8_t> makeContribution(DType t, int rank, size_t count,
                                             size_t first = 0) {
  std::vector<uint8_t> buf(count * dtypeSize(t));
  for (size_t i = 0; i < count; ++i)
    setValue(t, buf.data(), i, contribution(rank, first + i));
  return buf;
}

/// The sum over `ranks` ranks of their contributions, as `t`.
inline std::vector<uint8_t> expectedSum(DType t, int ranks, size_t count,
                                        size_t first = 0) {
  std::vector<uint8_t> buf(count * dtypeSize(t));
  for (size_t i = 0; i < count; ++i) {
    int64_t s = 0;
    for (int r = 0; r < ranks; ++r)
      s += contribution(r, first + i);
    setValue(t, buf.data(), i, s);
  }
  return buf;
}

/// The first index where two equally long buffers differ, or -1.
inline int64_t firstDifference(const std::vector<uint8_t> &a,
                               const std::vector<uint8_t> &b) {
  if (a.size() != b.size())
    return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return int64_t(i);
  return -1;
}

} // namespace tpc::test

#endif // TPC_TEST_UNIT_RUNTIME_COMMTESTUTIL_H
