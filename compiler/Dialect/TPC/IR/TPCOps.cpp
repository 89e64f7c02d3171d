//===- TPCOps.cpp - tpc dialect: registration and verifiers --------------===//
#include "compiler/Dialect/TPC/IR/TPCOps.h"
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"

using namespace mlir;
using namespace tpc::ext;
using tpc::onnx::normalizeAxis;
using tpc::onnx::stripLeadingOnes;

#include "compiler/Dialect/TPC/IR/TPCOpsDialect.cpp.inc"

void TPCDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/TPC/IR/TPCOps.cpp.inc"
      >();
}

Operation *TPCDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  // Folded values are onnx constants, as the onnx ops' are.
  return tpc::onnx::materializeElements(builder, value, type, loc);
}

LogicalResult AddNormalizationOp::verify() {
  RankedTensorType a = getA().getType();
  if (getB().getType() != a || getY().getType() != a || getSum().getType() != a)
    return emitOpError("A, B, Y and Sum must have one type, got ")
           << a << " and " << getB().getType();
  FailureOr<int64_t> axis = normalizeAxis(getAxis(), a.getRank());
  if (failed(axis))
    return emitOpError("axis ") << int64_t(getAxis()) << " out of range";
  if (getRms() != 0 && getRms() != 1)
    return emitOpError("rms must be 0 or 1");
  if (getRms() && getBias())
    return emitOpError("an RMS norm has no bias");
  ArrayRef<int64_t> norm = a.getShape().drop_front(*axis);
  for (Value w : {getScale(), getBias()})
    if (w &&
        (stripLeadingOnes(cast<RankedTensorType>(w.getType()).getShape()) !=
             stripLeadingOnes(norm) ||
         cast<RankedTensorType>(w.getType()).getElementType() !=
             a.getElementType()))
      return emitOpError("scale and bias must match the normalized dims");
  return success();
}

LogicalResult MatMulBiasOp::verify() {
  RankedTensorType a = getA().getType(), b = getB().getType();
  if (a.getRank() < 2 || b.getRank() != 2 ||
      a.getShape().back() != b.getShape()[0])
    return emitOpError("A ")
           << a << " and B " << b << " are not [..., K] and [K, N]";
  SmallVector<int64_t> y(a.getShape());
  y.back() = b.getShape()[1];
  if (getType().getShape() != ArrayRef<int64_t>(y) ||
      getType().getElementType() != a.getElementType() ||
      b.getElementType() != a.getElementType())
    return emitOpError("result ") << getType() << " is not A x B";
  if (stripLeadingOnes(getBias().getType().getShape()) !=
          ArrayRef<int64_t>(y).take_back(1) ||
      getBias().getType().getElementType() != a.getElementType())
    return emitOpError("bias ")
           << getBias().getType() << " is not one value per column";
  StringRef act = getActivation();
  if (act != "none" && act != "relu" && act != "gelu" && act != "gelu_tanh")
    return emitOpError("activation must be none, relu, gelu or gelu_tanh, "
                       "not \"")
           << act << "\"";
  return success();
}

LogicalResult CacheWriteOp::verify() {
  RankedTensorType st = getState().getType(), ut = getUpdate().getType();
  int64_t axis = getAxis();
  if (getResult().getType() != st)
    return emitOpError("result type ")
           << getResult().getType() << " differs from the state " << st;
  if (st.getElementType() != ut.getElementType() ||
      st.getRank() != ut.getRank() || axis < 0 || axis >= st.getRank())
    return emitOpError("cannot write ")
           << ut << " into " << st << " along axis " << axis;
  for (int64_t d = 0; d < st.getRank(); ++d)
    if (d != axis ? ut.getDimSize(d) != st.getDimSize(d)
                  : ut.getDimSize(d) > st.getDimSize(d))
      return emitOpError("cannot write ")
             << ut << " into " << st << " along axis " << axis;
  if (getPosition().getType().getNumElements() != 1)
    return emitOpError("position must hold one value, not ")
           << getPosition().getType();
  return success();
}

#define GET_OP_CLASSES
#include "compiler/Dialect/TPC/IR/TPCOps.cpp.inc"
