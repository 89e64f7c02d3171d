//===- KernelBridge.cpp ---------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/KernelBridge.h"
#include "runtime/format/PlanFormat.h"
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "kernels/cpu/Registry.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tpc::onnx {

std::optional<DType> dtypeOf(Type t) {
  std::optional<int64_t> n = onnxTypeNumber(t);
  if (!n)
    return std::nullopt;
  return DType(*n);
}

std::optional<TensorDesc> descOf(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || !rt.hasStaticShape())
    return std::nullopt;
  std::optional<DType> d = dtypeOf(rt.getElementType());
  if (!d)
    return std::nullopt;
  return TensorDesc{*d, Shape(rt.getShape().begin(), rt.getShape().end())};
}

StringRef kernelName(Operation *op) { return op->getName().stripDialect(); }

bool kernelExists(StringRef name) {
  std::string_view n(name.data(), name.size());
  return cpu::lookupKernel(n) != nullptr || isCollectiveKernel(n);
}

bool kernelRunsInPlace(StringRef name) {
  const cpu::KernelDef *def =
      cpu::lookupKernel(std::string_view(name.data(), name.size()));
  return def && def->elementwise;
}

Attrs kernelAttrs(Operation *op) { return kernelAttrs(op->getAttrs()); }

Attrs kernelAttrs(ArrayRef<NamedAttribute> attrs) {
  Attrs out;
  for (NamedAttribute na : attrs) {
    std::string key = na.getName().str();
    Attribute a = na.getValue();
    if (auto i = dyn_cast<IntegerAttr>(a)) {
      out.setInt(key, i.getValue().getSExtValue());
    } else if (auto f = dyn_cast<FloatAttr>(a)) {
      out.setFloat(key, f.getValueAsDouble());
    } else if (auto s = dyn_cast<StringAttr>(a)) {
      out.setString(key, s.str());
    } else if (auto arr = dyn_cast<DenseI64ArrayAttr>(a)) {
      out.setInts(key, std::vector<int64_t>(arr.asArrayRef().begin(),
                                            arr.asArrayRef().end()));
    } else if (auto dense = dyn_cast<DenseElementsAttr>(a)) {
      Type et = dense.getElementType();
      if (isa<FloatType>(et)) {
        std::vector<double> v;
        for (APFloat f : dense.getValues<APFloat>())
          v.push_back(f.convertToDouble());
        out.setFloats(key, std::move(v));
      } else if (et.isInteger(1)) {
        std::vector<int64_t> v;
        for (bool b : dense.getValues<bool>())
          v.push_back(b);
        out.setInts(key, std::move(v));
      } else if (isa<IntegerType>(et)) {
        std::vector<int64_t> v;
        for (APInt i : dense.getValues<APInt>())
          v.push_back(et.isUnsignedInteger() ? int64_t(i.getZExtValue())
                                             : i.getSExtValue());
        out.setInts(key, std::move(v));
      }
    }
  }
  return out;
}

std::optional<std::vector<uint8_t>> elementsBytes(ElementsAttr attr) {
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  auto type = cast<ShapedType>(dense.getType());
  int64_t n = type.getNumElements();
  std::vector<uint8_t> out;
  if (type.getElementType().isInteger(1)) {
    out.reserve(n);
    for (bool b : dense.getValues<bool>())
      out.push_back(b ? 1 : 0);
    return out;
  }
  ArrayRef<char> raw = dense.getRawData();
  size_t elemBytes = elementBytes(type.getElementType());
  if (dense.isSplat()) {
    out.resize(n * elemBytes);
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(out.data() + i * elemBytes, raw.data(), elemBytes);
    return out;
  }
  out.assign(raw.begin(), raw.end());
  return out;
}

DenseElementsAttr elementsFromBytes(RankedTensorType type,
                                    const std::vector<uint8_t> &bytes) {
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits;
    for (uint8_t b : bytes)
      bits.push_back(b != 0);
    return DenseElementsAttr::get(type, bits);
  }
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(reinterpret_cast<const char *>(bytes.data()),
                           bytes.size()));
}

} // namespace tpc::onnx
