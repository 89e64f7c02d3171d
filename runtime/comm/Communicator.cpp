//===- Communicator.cpp ---------------------------------------------------===//
#include "runtime/comm/Communicator.h"

#include "kernels/Half.h"

#include <cstdint>
#include <cstring>

namespace tpc {

Communicator::~Communicator() = default;

Status Communicator::allGatherRows(const void *send, void *recv, size_t outer,
                                   const std::vector<size_t> &counts,
                                   DType dtype, void *scratch) {
  std::vector<size_t> blocks(counts.size());
  size_t rowElems = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    blocks[r] = outer * counts[r];
    rowElems += counts[r];
  }
  TPC_RETURN_IF_ERROR(allGatherV(send, scratch, blocks, dtype));
  // Rank r's block holds outer rows of counts[r] elements; interleave.
  const size_t es = dtypeSize(dtype);
  const auto *src = static_cast<const uint8_t *>(scratch);
  auto *dst = static_cast<uint8_t *>(recv);
  size_t column = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    const size_t bytes = counts[r] * es;
    for (size_t o = 0; o < outer; ++o)
      std::memcpy(dst + (o * rowElems + column) * es, src + o * bytes, bytes);
    src += outer * bytes;
    column += counts[r];
  }
  return Status::ok();
}

bool isReducibleDType(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::F64:
  case DType::F16:
  case DType::BF16:
  case DType::I32:
  case DType::I64: return true;
  default: return false;
  }
}

namespace {

/// Element-wise dst = add(a, b) over elements stored as `T`, through memcpy
/// loads, so that unaligned buffers and aliasing between dst and the
/// sources are both fine.
template <typename T, typename Add>
void addStored(const void *a, const void *b, void *dst, size_t count, Add add) {
  const char *pa = static_cast<const char *>(a);
  const char *pb = static_cast<const char *>(b);
  char *pd = static_cast<char *>(dst);
  for (size_t i = 0; i < count; ++i) {
    T x, y;
    std::memcpy(&x, pa + i * sizeof(T), sizeof(T));
    std::memcpy(&y, pb + i * sizeof(T), sizeof(T));
    T z = add(x, y);
    std::memcpy(pd + i * sizeof(T), &z, sizeof(T));
  }
}

template <typename T>
void addTyped(const void *a, const void *b, void *dst, size_t count) {
  addStored<T>(a, b, dst, count, [](T x, T y) { return T(x + y); });
}

/// 16-bit floats are summed in f32 and rounded back.
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void addHalf(const void *a, const void *b, void *dst, size_t count) {
  addStored<uint16_t>(a, b, dst, count, [](uint16_t x, uint16_t y) {
    return Narrow(Widen(x) + Widen(y));
  });
}

} // namespace

void addElements(const void *a, const void *b, void *dst, size_t count,
                 DType dtype) {
  switch (dtype) {
  case DType::F32: return addTyped<float>(a, b, dst, count);
  case DType::F64: return addTyped<double>(a, b, dst, count);
  // Unsigned arithmetic: the same bits as two's complement addition, but
  // wrapping on overflow is defined.
  case DType::I32: return addTyped<uint32_t>(a, b, dst, count);
  case DType::I64:
  case DType::U64: return addTyped<uint64_t>(a, b, dst, count);
  case DType::U32: return addTyped<uint32_t>(a, b, dst, count);
  case DType::I16:
  case DType::U16: return addTyped<uint16_t>(a, b, dst, count);
  case DType::F16: return addHalf<halfToFloat, floatToHalf>(a, b, dst, count);
  case DType::BF16: return addHalf<bf16ToFloat, floatToBf16>(a, b, dst, count);
  default: return;
  }
}

std::string describeCall(const char *op, size_t count, DType dtype) {
  return std::string(op) + "(count=" + std::to_string(count) + ", " +
         (isValidDType(int32_t(dtype)) ? dtypeName(dtype) : "invalid dtype") +
         ")";
}

} // namespace tpc
