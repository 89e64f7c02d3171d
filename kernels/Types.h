//===- Types.h - Tensor descriptions shared by every kernel -----*- C++ -*-===//
//
// The vocabulary that the compiler, the engine format, the runtime and the
// kernels share: element types (numbered as ONNX's TensorProto numbers them),
// tensor descriptions and kernel attributes (Status is in base/Status.h).
// No MLIR or LLVM headers, so the runtime and the CUDA kernels can include
// it.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_TYPES_H
#define TPC_KERNELS_TYPES_H

#include "base/Status.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tpc {

/// Element types, with ONNX TensorProto.DataType numbers.
enum class DType : int32_t {
  F32 = 1,
  U8 = 2,
  I8 = 3,
  U16 = 4,
  I16 = 5,
  I32 = 6,
  I64 = 7,
  Bool = 9,
  F16 = 10,
  F64 = 11,
  U32 = 12,
  U64 = 13,
  BF16 = 16,
  // Storage types: one element per byte (sub-byte integers in the low bits,
  // as ml_dtypes holds them). Cast converts to and from them and data
  // movement copies them; no kernel computes on them.
  F8E4M3FN = 17,
  F8E4M3FNUZ = 18,
  F8E5M2 = 19,
  F8E5M2FNUZ = 20,
  U4 = 21,
  I4 = 22,
  U2 = 25,
  I2 = 26,
};

/// Whether `t` is one of the storage types above (float8, 4- and 2-bit
/// integers).
bool isStorageOnlyDType(DType t);
/// Bits per element as ONNX counts them (BitCast's widths): 4 for U4/I4, 2
/// for U2/I2, else 8 times dtypeSize (8 for Bool, a byte).
int dtypeBits(DType t);

/// Bytes per element.
size_t dtypeSize(DType t);
/// Short lower-case name: "f32", "i64", "bool", ...
const char *dtypeName(DType t);
/// Inverse of dtypeName; also accepts numpy names ("float32", "int64").
std::optional<DType> parseDType(const std::string &name);
/// Whether `v` is one of the enumerators above.
bool isValidDType(int32_t v);

using Shape = std::vector<int64_t>;

/// The product of the dimensions, for shapes already validated (every
/// size check of an untrusted shape uses checkedByteSize). Saturates at
/// INT64_MAX instead of overflowing; 0 when any dimension is 0.
int64_t numElements(const Shape &shape);
/// `elemBytes` times the product of the `rank` dimensions at `dims`, or
/// nullopt when a dimension is negative or the product of the non-zero
/// dimensions and `elemBytes` does not fit in int64 (a zero dimension
/// gives 0 only then): the one checked size computation for shapes read
/// from files.
std::optional<uint64_t> checkedByteSize(const int64_t *dims, size_t rank,
                                        uint64_t elemBytes);
inline std::optional<uint64_t> checkedByteSize(const Shape &shape,
                                               uint64_t elemBytes) {
  return checkedByteSize(shape.data(), shape.size(), elemBytes);
}
std::string shapeToString(const Shape &shape); // "2x3x4", "scalar" for rank 0

struct TensorDesc {
  DType dtype = DType::F32;
  Shape shape;
  int64_t numel() const { return numElements(shape); }
  size_t bytes() const { return size_t(numel()) * dtypeSize(dtype); }
  std::string str() const; // "f32[2x3]"
};

/// Kernel attributes: named integer lists, float lists and strings. Scalars
/// are one-element lists. Kernel names and attribute names follow ONNX; ONNX
/// inputs that the compiler resolved to constants (Slice starts, Reshape
/// shape, Reduce axes, ...) arrive here as attributes.
class Attrs {
public:
  void setInts(const std::string &k, std::vector<int64_t> v) { ints_[k] = std::move(v); }
  void setInt(const std::string &k, int64_t v) { ints_[k] = {v}; }
  void setFloats(const std::string &k, std::vector<double> v) { floats_[k] = std::move(v); }
  void setFloat(const std::string &k, double v) { floats_[k] = {v}; }
  void setString(const std::string &k, std::string v) { strings_[k] = std::move(v); }

  bool has(const std::string &k) const {
    return ints_.count(k) || floats_.count(k) || strings_.count(k);
  }
  int64_t getInt(const std::string &k, int64_t dflt) const;
  double getFloat(const std::string &k, double dflt) const;
  const std::vector<int64_t> *getInts(const std::string &k) const;
  const std::vector<double> *getFloats(const std::string &k) const;
  std::string getString(const std::string &k, const std::string &dflt) const;

  const std::map<std::string, std::vector<int64_t>> &ints() const { return ints_; }
  const std::map<std::string, std::vector<double>> &floats() const { return floats_; }
  const std::map<std::string, std::string> &strings() const { return strings_; }

private:
  std::map<std::string, std::vector<int64_t>> ints_;
  std::map<std::string, std::vector<double>> floats_;
  std::map<std::string, std::string> strings_;
};

} // namespace tpc

#endif // TPC_KERNELS_TYPES_H
