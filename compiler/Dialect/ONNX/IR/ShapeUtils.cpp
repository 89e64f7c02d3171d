//===- ShapeUtils.cpp - ONNX shape rules ----------------------------------===//
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;

namespace tpc::onnx {

FailureOr<SmallVector<int64_t>>
broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> out(rank, 1);
  for (ArrayRef<int64_t> s : shapes) {
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t d = s[i];
      int64_t &o = out[off + i];
      if (d == o || d == 1)
        continue;
      if (o != 1)
        return failure();
      o = d;
    }
  }
  return out;
}

FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return failure();
  return axis < 0 ? axis + rank : axis;
}

ArrayRef<int64_t> stripLeadingOnes(ArrayRef<int64_t> shape) {
  while (!shape.empty() && shape.front() == 1)
    shape = shape.drop_front();
  return shape;
}

SmallVector<int64_t> reducedShape(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> normAxes, bool keepDims) {
  SmallVector<int64_t> out;
  for (int64_t i = 0, e = shape.size(); i < e; ++i) {
    bool reduced = llvm::is_contained(normAxes, i);
    if (!reduced)
      out.push_back(shape[i]);
    else if (keepDims)
      out.push_back(1);
  }
  return out;
}

Type onnxElementType(MLIRContext *ctx, int64_t t) {
  Builder b(ctx);
  switch (t) {
  case 1: return b.getF32Type();
  case 2: return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case 3: return b.getI8Type();
  case 4: return IntegerType::get(ctx, 16, IntegerType::Unsigned);
  case 5: return b.getI16Type();
  case 6: return b.getI32Type();
  case 7: return b.getI64Type();
  case 9: return b.getI1Type();
  case 10: return b.getF16Type();
  case 11: return b.getF64Type();
  case 12: return IntegerType::get(ctx, 32, IntegerType::Unsigned);
  case 13: return IntegerType::get(ctx, 64, IntegerType::Unsigned);
  case 16: return b.getBF16Type();
  case 17: return b.getFloat8E4M3FNType();
  case 18: return b.getFloat8E4M3FNUZType();
  case 19: return b.getFloat8E5M2Type();
  case 20: return b.getFloat8E5M2FNUZType();
  case 21: return IntegerType::get(ctx, 4, IntegerType::Unsigned);
  case 22: return IntegerType::get(ctx, 4);
  case 25: return IntegerType::get(ctx, 2, IntegerType::Unsigned);
  case 26: return IntegerType::get(ctx, 2);
  // 23 (FLOAT4E2M1) and 24 (FLOAT8E8M0) have no MLIR 19 builtin type.
  default: return nullptr;
  }
}

std::string onnxTypeName(int64_t t) {
  static const char *const names[] = {
      "undefined",      "float",        "uint8",      "int8",
      "uint16",         "int16",        "int32",      "int64",
      "string",         "bool",         "float16",    "double",
      "uint32",         "uint64",       "complex64",  "complex128",
      "bfloat16",       "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
      "float8e5m2fnuz", "uint4",        "int4",       "float4e2m1",
      "float8e8m0",     "uint2",        "int2"};
  std::string n = t >= 0 && t < int64_t(std::size(names)) ? names[t] : "type";
  return n + " (" + std::to_string(t) + ")";
}

int64_t elementBytes(Type t) {
  return (int64_t(t.getIntOrFloatBitWidth()) + 7) / 8;
}

std::optional<int64_t> onnxTypeNumber(Type t) {
  if (t.isF32()) return 1;
  if (t.isUnsignedInteger(8)) return 2;
  if (t.isSignlessInteger(8)) return 3;
  if (t.isUnsignedInteger(16)) return 4;
  if (t.isSignlessInteger(16)) return 5;
  if (t.isUnsignedInteger(32)) return 12;
  if (t.isUnsignedInteger(64)) return 13;
  if (t.isSignlessInteger(32)) return 6;
  if (t.isSignlessInteger(64)) return 7;
  if (t.isSignlessInteger(1)) return 9;
  if (t.isF16()) return 10;
  if (t.isF64()) return 11;
  if (t.isBF16()) return 16;
  if (t.isFloat8E4M3FN()) return 17;
  if (t.isFloat8E4M3FNUZ()) return 18;
  if (t.isFloat8E5M2()) return 19;
  if (t.isFloat8E5M2FNUZ()) return 20;
  if (t.isUnsignedInteger(4)) return 21;
  if (t.isSignlessInteger(4)) return 22;
  if (t.isUnsignedInteger(2)) return 25;
  if (t.isSignlessInteger(2)) return 26;
  return std::nullopt;
}

FailureOr<SmallVector<int64_t>> scatterNDUpdatesShape(RankedTensorType data,
                                                      RankedTensorType indices) {
  if (indices.getRank() < 1)
    return failure();
  int64_t k = indices.getShape().back();
  if (k < 0 || k > data.getRank())
    return failure();
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(k));
  return shape;
}

std::string scatterElementsProblem(RankedTensorType data,
                                   RankedTensorType indices,
                                   RankedTensorType updates, int64_t axis) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  FailureOr<int64_t> a = normalizeAxis(axis, data.getRank());
  if (data.getRank() < 1 || failed(a)) {
    os << "axis " << axis << " is out of range for data '" << data << "'";
    return msg;
  }
  if (indices.getRank() != data.getRank()) {
    os << "indices '" << indices << "' must have the rank of data '" << data
       << "'";
    return msg;
  }
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != *a && indices.getDimSize(d) > data.getDimSize(d)) {
      os << "indices '" << indices << "' exceed data '" << data << "' at dim "
         << d << " (only the axis may be longer)";
      return msg;
    }
  if (updates.getShape() != indices.getShape() ||
      updates.getElementType() != data.getElementType())
    os << "updates '" << updates << "' must have the shape of indices '"
       << indices << "' and the element type of data '" << data << "'";
  return msg;
}

} // namespace tpc::onnx
