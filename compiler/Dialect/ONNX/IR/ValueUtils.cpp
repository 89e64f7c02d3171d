//===- ValueUtils.cpp - Facts about onnx values known at compile time -----===//
#include "compiler/Dialect/ONNX/IR/ValueUtils.h"
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace tpc::onnx {

static bool allZero(DenseElementsAttr attr) {
  if (isa<FloatType>(attr.getElementType()))
    return llvm::all_of(attr.getValues<APFloat>(),
                        [](const APFloat &x) { return x.isZero(); });
  if (attr.getElementType().isInteger(1))
    return llvm::none_of(attr.getValues<bool>(), [](bool x) { return x; });
  return llvm::all_of(attr.getValues<APInt>(),
                      [](const APInt &x) { return x.isZero(); });
}

bool isZeroTensor(Value v) {
  DenseElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return allZero(attr);
  auto cos = v.getDefiningOp<ConstantOfShapeOp>();
  if (!cos)
    return false;
  auto value = dyn_cast_or_null<DenseElementsAttr>(cos.getValue());
  return !value || allZero(value);
}

} // namespace tpc::onnx

namespace tpc {

std::string nodeNameOf(mlir::Location loc) {
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc))
    return name.getName().str();
  if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location l : fused.getLocations())
      if (std::string n = nodeNameOf(l); !n.empty())
        return n;
  return "";
}

} // namespace tpc
