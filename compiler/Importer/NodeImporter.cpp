//===- NodeImporter.cpp - Helpers for importing ONNX nodes ----------------===//
#include "compiler/Importer/NodeImporter.h"
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "kernels/Types.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace tpc {

InFlightDiagnostic NodeContext::error() {
  return emitError(loc) << "node '" << node.name() << "' (" << node.op_type()
                        << "): ";
}

LogicalResult NodeContext::requireInputs(size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!input(i))
      return error() << "expects at least " << n << " inputs, input " << i
                     << " is missing";
  return success();
}

void addVersions(std::vector<OpTableEntry> &table, const char *opType,
                 std::initializer_list<int> versions, NodeHandler handler,
                 const char *importsAs, const char *domain) {
  for (int v : versions)
    table.push_back({opType, v, handler, importsAs, domain});
}

LogicalResult NodeContext::requireExactInputs(size_t n, StringRef names) {
  if (failed(requireInputs(n)))
    return failure();
  if (inputs.size() > n)
    return error() << "has " << inputs.size() << " inputs; " << node.op_type()
                   << " takes " << n << " (" << names << ")";
  return success();
}

const ::onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const ::onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeContext::attrInt(StringRef name, int64_t dflt) const {
  const ::onnx::AttributeProto *a = attr(name);
  return a ? a->i() : dflt;
}

float NodeContext::attrFloat(StringRef name, float dflt) const {
  const ::onnx::AttributeProto *a = attr(name);
  return a ? a->f() : dflt;
}

std::string NodeContext::attrString(StringRef name, StringRef dflt) const {
  const ::onnx::AttributeProto *a = attr(name);
  return a ? a->s() : dflt.str();
}

std::optional<SmallVector<int64_t>> NodeContext::attrInts(StringRef name) const {
  const ::onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

LogicalResult NodeContext::requireFloatInput() {
  if (failed(requireInputs(1)))
    return failure();
  if (!isa<FloatType>(elementTypeOf(input(0))))
    return error() << "takes floating-point tensors, not "
                   << elementTypeOf(input(0));
  return success();
}

FailureOr<SmallVector<int64_t>> NodeContext::constInts(size_t i,
                                                       StringRef what) {
  Value v = input(i);
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) ||
      !isa<IntegerType>(attr.getElementType()))
    return error() << "the '" << what
                   << "' input must be a compile-time constant integer "
                      "tensor once input shapes are fixed";
  SmallVector<int64_t> out;
  for (const APInt &x : attr.getValues<APInt>())
    out.push_back(x.getSExtValue());
  return out;
}

FailureOr<SmallVector<int64_t>> NodeContext::requireConstInts(size_t i,
                                                              StringRef what) {
  if (failed(requireInputs(i + 1)))
    return failure();
  return constInts(i, what);
}

SmallVector<Value> NodeContext::givenInputs(size_t n) const {
  SmallVector<Value> given;
  for (size_t i = 0; i < n; ++i)
    if (Value v = input(i))
      given.push_back(v);
  return given;
}

FailureOr<SmallVector<NamedAttribute>>
NodeContext::reduceAttrs(bool axesFromInput) {
  SmallVector<int64_t> axes;
  if (axesFromInput) {
    if (input(1)) {
      FailureOr<SmallVector<int64_t>> a = constInts(1, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
  } else if (auto a = attrInts("axes")) {
    axes = *a;
  }
  return SmallVector<NamedAttribute>{
      named("axes", b.getDenseI64ArrayAttr(axes)),
      named("keepdims", b.getI64IntegerAttr(attrInt("keepdims", 1))),
      named("noop_with_empty_axes",
            b.getI64IntegerAttr(attrInt("noop_with_empty_axes", 0)))};
}

SmallVector<Value> NodeContext::finish(OperationState &state) {
  Operation *op = b.create(state);
  SmallVector<Value> results;
  if (succeeded(b.tryFold(op, results))) {
    op->erase();
    return results;
  }
  return SmallVector<Value>(op->getResults());
}

template <typename T>
static ArrayRef<char> asChars(const T &v) {
  return ArrayRef<char>(reinterpret_cast<const char *>(v.data()),
                        v.size() * sizeof(v[0]));
}

DenseElementsAttr tensorToAttr(MLIRContext *ctx, const ::onnx::TensorProto &t,
                               std::string &error) {
  Type elem = onnx::onnxElementType(ctx, t.data_type());
  if (!elem) {
    error = "tensor '" + t.name() + "' has unsupported data type " +
            onnx::onnxTypeName(t.data_type());
    return nullptr;
  }
  SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
  // 4- and 2-bit integers are packed in the file (the lowest index in the
  // lowest bits) and held one per byte here.
  unsigned bits = elem.getIntOrFloatBitWidth();
  bool packed = bits > 1 && bits < 8;
  size_t elemBytes = onnx::elementBytes(elem);
  // Negative dimensions, or a size whose bytes overflow, are a broken file.
  for (int64_t d : dims) {
    if (d < 0) {
      error = "tensor '" + t.name() + "' has a negative dimension (" +
              std::to_string(d) + ")";
      return nullptr;
    }
  }
  std::optional<uint64_t> size =
      tpc::checkedByteSize(dims.data(), dims.size(), elemBytes);
  if (!size || *size > kMaxTensorBytes) {
    error = "tensor '" + t.name() + "' is too large (more than 2^50 bytes)";
    return nullptr;
  }
  int64_t n = int64_t(*size / elemBytes);
  auto type = RankedTensorType::get(dims, elem);
  std::vector<uint8_t> bytes;
  if (packed) {
    size_t perByte = 8 / bits;
    size_t need = (size_t(n) + perByte - 1) / perByte;
    std::vector<uint8_t> src;
    if (t.has_raw_data()) {
      src.assign(t.raw_data().begin(), t.raw_data().end());
    } else {
      // int32_data holds one packed byte per entry.
      for (int32_t v : t.int32_data())
        src.push_back(uint8_t(v));
    }
    if (src.size() != need) {
      error = "tensor '" + t.name() + "' has " + std::to_string(src.size()) +
              " bytes of data, its type needs " + std::to_string(need) + " (" +
              std::to_string(perByte) + " values to a byte)";
      return nullptr;
    }
    bytes.resize(n);
    uint8_t mask = uint8_t((1u << bits) - 1);
    for (int64_t i = 0; i < n; ++i)
      bytes[i] = (src[i / perByte] >> ((i % perByte) * bits)) & mask;
    return DenseElementsAttr::getFromRawBuffer(type, asChars(bytes));
  }
  if (t.has_raw_data()) {
    bytes.assign(t.raw_data().begin(), t.raw_data().end());
  } else {
    // The values come from the typed field of the data type: check their
    // count before allocating, so a shape no data backs is refused, not
    // allocated.
    int64_t have;
    switch (t.data_type()) {
    case 1:
      have = t.float_data_size();
      break;
    case 11:
      have = t.double_data_size();
      break;
    case 7:
      have = t.int64_data_size();
      break;
    case 12:
    case 13:
      have = t.uint64_data_size();
      break;
    default:
      have = t.int32_data_size();
    }
    if (have != n) {
      error = "tensor '" + t.name() + "' holds " + std::to_string(have) +
              " values, its shape needs " + std::to_string(n);
      return nullptr;
    }
    bytes.resize(n * elemBytes);
    auto fill = [&](auto &field, auto convert) -> bool {
      if (field.size() != n)
        return false;
      for (int64_t i = 0; i < n; ++i)
        convert(i, field.Get(i));
      return true;
    };
    bool ok = true;
    switch (t.data_type()) {
    case 1:
      ok = fill(t.float_data(), [&](int64_t i, float v) {
        std::memcpy(&bytes[i * 4], &v, 4);
      });
      break;
    case 11:
      ok = fill(t.double_data(), [&](int64_t i, double v) {
        std::memcpy(&bytes[i * 8], &v, 8);
      });
      break;
    case 7:
      ok = fill(t.int64_data(), [&](int64_t i, int64_t v) {
        std::memcpy(&bytes[i * 8], &v, 8);
      });
      break;
    case 12:
    case 13: // uint64_data carries u32 and u64.
      ok = fill(t.uint64_data(), [&](int64_t i, uint64_t v) {
        std::memcpy(&bytes[i * elemBytes], &v, elemBytes);
      });
      break;
    default: // int32_data carries i32, i16, u16, i8, u8, bool, f16, bf16.
      ok = fill(t.int32_data(), [&](int64_t i, int32_t v) {
        std::memcpy(&bytes[i * elemBytes], &v, elemBytes);
      });
    }
    if (!ok) {
      error = "tensor '" + t.name() + "' holds the wrong number of values";
      return nullptr;
    }
  }
  if (bytes.size() != n * elemBytes) {
    error = "tensor '" + t.name() + "' has " + std::to_string(bytes.size()) +
            " bytes of data, its type needs " + std::to_string(n * elemBytes);
    return nullptr;
  }
  if (elem.isInteger(1)) {
    SmallVector<bool> bits(bytes.begin(), bytes.end());
    return DenseElementsAttr::get(type, bits);
  }
  return DenseElementsAttr::getFromRawBuffer(type, asChars(bytes));
}

} // namespace tpc
