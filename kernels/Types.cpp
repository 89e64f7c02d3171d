//===- Types.cpp ----------------------------------------------------------===//
#include "kernels/Types.h"

#include <sstream>

namespace tpc {

size_t dtypeSize(DType t) {
  if (isStorageOnlyDType(t))
    return 1;
  switch (t) {
  case DType::F64:
  case DType::I64:
  case DType::U64:
    return 8;
  case DType::F32:
  case DType::I32:
  case DType::U32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::U8:
  case DType::I8:
  case DType::Bool:
    return 1;
  default: // the storage types, above
    break;
  }
  return 0;
}

bool isStorageOnlyDType(DType t) {
  switch (t) {
  case DType::F8E4M3FN:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2:
  case DType::F8E5M2FNUZ:
  case DType::U4:
  case DType::I4:
  case DType::U2:
  case DType::I2:
    return true;
  default:
    return false;
  }
}

int dtypeBits(DType t) {
  switch (t) {
  case DType::U4:
  case DType::I4:
    return 4;
  case DType::U2:
  case DType::I2:
    return 2;
  default:
    return int(dtypeSize(t)) * 8;
  }
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::U8: return "u8";
  case DType::I8: return "i8";
  case DType::I16: return "i16";
  case DType::U16: return "u16";
  case DType::I32: return "i32";
  case DType::U32: return "u32";
  case DType::U64: return "u64";
  case DType::I64: return "i64";
  case DType::Bool: return "bool";
  case DType::F16: return "f16";
  case DType::F64: return "f64";
  case DType::BF16: return "bf16";
  case DType::F8E4M3FN: return "f8e4m3fn";
  case DType::F8E4M3FNUZ: return "f8e4m3fnuz";
  case DType::F8E5M2: return "f8e5m2";
  case DType::F8E5M2FNUZ: return "f8e5m2fnuz";
  case DType::U4: return "u4";
  case DType::I4: return "i4";
  case DType::U2: return "u2";
  case DType::I2: return "i2";
  }
  return "invalid";
}

std::optional<DType> parseDType(const std::string &n) {
  static const std::pair<const char *, DType> names[] = {
      {"f32", DType::F32},     {"float32", DType::F32}, {"fp32", DType::F32},
      {"u8", DType::U8},       {"uint8", DType::U8},    {"i8", DType::I8},
      {"int8", DType::I8},     {"i32", DType::I32},     {"int32", DType::I32},
      {"i64", DType::I64},     {"int64", DType::I64},   {"bool", DType::Bool},
      {"f16", DType::F16},     {"float16", DType::F16}, {"fp16", DType::F16},
      {"f64", DType::F64},     {"float64", DType::F64}, {"bf16", DType::BF16},
      {"bfloat16", DType::BF16}, {"i16", DType::I16},   {"int16", DType::I16},
      {"u16", DType::U16},     {"uint16", DType::U16},  {"u32", DType::U32},
      {"uint32", DType::U32},  {"u64", DType::U64},     {"uint64", DType::U64},
      // ml_dtypes' names for the storage types.
      {"f8e4m3fn", DType::F8E4M3FN},     {"float8_e4m3fn", DType::F8E4M3FN},
      {"f8e4m3fnuz", DType::F8E4M3FNUZ}, {"float8_e4m3fnuz", DType::F8E4M3FNUZ},
      {"f8e5m2", DType::F8E5M2},         {"float8_e5m2", DType::F8E5M2},
      {"f8e5m2fnuz", DType::F8E5M2FNUZ}, {"float8_e5m2fnuz", DType::F8E5M2FNUZ},
      {"u4", DType::U4},                 {"uint4", DType::U4},
      {"i4", DType::I4},                 {"int4", DType::I4},
      {"u2", DType::U2},                 {"uint2", DType::U2},
      {"i2", DType::I2},                 {"int2", DType::I2}};
  for (const auto &[name, t] : names)
    if (n == name)
      return t;
  return std::nullopt;
}

bool isValidDType(int32_t v) {
  switch (v) {
  case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 9: case 10:
  case 11: case 12: case 13: case 16: case 17: case 18: case 19: case 20:
  case 21: case 22: case 25: case 26:
    return true;
  default:
    return false;
  }
}

int64_t numElements(const Shape &shape) {
  for (int64_t d : shape)
    if (d == 0)
      return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return INT64_MAX;
  return n;
}

std::optional<uint64_t> checkedByteSize(const int64_t *dims, size_t rank,
                                        uint64_t elemBytes) {
  // As numpy does: the product of the non-zero dimensions times the
  // element size must fit in int64 even when a zero dimension makes the
  // tensor empty, so that every stride and partial product computed from
  // the shape later fits too.
  if (elemBytes > uint64_t(INT64_MAX))
    return std::nullopt;
  int64_t n = int64_t(elemBytes);
  bool empty = false;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return std::nullopt;
    if (dims[i] == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(n, dims[i], &n))
      return std::nullopt;
  }
  return empty ? 0 : uint64_t(n);
}

std::string shapeToString(const Shape &shape) {
  if (shape.empty())
    return "scalar";
  std::ostringstream os;
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? "x" : "") << shape[i];
  return os.str();
}

std::string TensorDesc::str() const {
  return std::string(dtypeName(dtype)) + "[" + shapeToString(shape) + "]";
}

int64_t Attrs::getInt(const std::string &k, int64_t dflt) const {
  auto it = ints_.find(k);
  return it == ints_.end() || it->second.empty() ? dflt : it->second[0];
}

double Attrs::getFloat(const std::string &k, double dflt) const {
  auto it = floats_.find(k);
  return it == floats_.end() || it->second.empty() ? dflt : it->second[0];
}

const std::vector<int64_t> *Attrs::getInts(const std::string &k) const {
  auto it = ints_.find(k);
  return it == ints_.end() ? nullptr : &it->second;
}

const std::vector<double> *Attrs::getFloats(const std::string &k) const {
  auto it = floats_.find(k);
  return it == floats_.end() ? nullptr : &it->second;
}

std::string Attrs::getString(const std::string &k,
                             const std::string &dflt) const {
  auto it = strings_.find(k);
  return it == strings_.end() ? dflt : it->second;
}

} // namespace tpc
