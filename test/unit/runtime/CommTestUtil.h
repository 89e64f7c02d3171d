//===- CommTestUtil.h - Values and buffers for collective tests -*- C++ -*-===//
//
// Shared by the in-process tests and the MPI test program (and setValue by
// the NumPy/safetensors interop program). Values are small integers so that
// every sum is exact in every dtype (bf16 included), which makes bit-exact
// comparisons meaningful.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_TEST_UNIT_RUNTIME_COMMTESTUTIL_H
#define TPC_TEST_UNIT_RUNTIME_COMMTESTUTIL_H

#include "kernels/Types.h"
#include "kernels/Half.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tpc::test {

/// Stores `v` as element `i` of a `t` array: floats through float for the
/// 16-bit types, integers and bool truncated (the one-byte storage types
/// take the low byte, a pattern only moved).
inline void setValue(DType t, void *base, size_t i, double v) {
  char *p = static_cast<char *>(base) + i * dtypeSize(t);
  auto store = [p](auto x) { std::memcpy(p, &x, sizeof(x)); };
  switch (t) {
  case DType::F32:
    return store(float(v));
  case DType::F64:
    return store(v);
  case DType::F16:
    return store(floatToHalf(float(v)));
  case DType::BF16:
    return store(floatToBf16(float(v)));
  case DType::I64:
    return store(int64_t(v));
  case DType::I32:
    return store(int32_t(v));
  default:
    if (dtypeSize(t) == 1)
      *p = char(int64_t(v));
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

/// Element counts the collectives are tried with: none, one, a few and a
/// large buffer.
inline constexpr size_t kCounts[] = {0, 1, 7, 1000, size_t(1) << 20};

/// "" when `st` is an error containing `fragment`, else what it is instead.
inline std::string contains(const Status &st, const std::string &fragment) {
  if (st)
    return "succeeded, expected an error containing '" + fragment + "'";
  if (st.message().find(fragment) == std::string::npos)
    return "error '" + st.message() + "' lacks '" + fragment + "'";
  return "";
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
