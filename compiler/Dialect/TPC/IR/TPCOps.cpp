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

LogicalResult MatMulNBitsOp::verify() {
  RankedTensorType a = getA().getType(), b = getB().getType();
  int64_t bits = getBits(), block = getBlockSize();
  if (bits != 4 && bits != 8)
    return emitOpError("bits must be 4 or 8, not ") << bits;
  if (block < 16 || block > 256 || (block & (block - 1)))
    return emitOpError("block_size must be a power of two from 16 to 256, "
                       "not ")
           << block;
  if (a.getRank() < 1 || b.getRank() != 3 ||
      b.getShape()[2] != block * bits / 8 ||
      b.getShape()[1] != (a.getShape().back() + block - 1) / block)
    return emitOpError("A ")
           << a << " and B " << b << " are not [..., K] and [N, ceil(K / "
           << block << "), " << block * bits / 8 << "]";
  int64_t n = b.getShape()[0], blocks = b.getShape()[1];
  SmallVector<int64_t> y(a.getShape());
  y.back() = n;
  if (getType().getShape() != ArrayRef<int64_t>(y) ||
      getType().getElementType() != a.getElementType())
    return emitOpError("result ") << getType() << " is not A x W^T";
  if (getScales().getType().getNumElements() != n * blocks)
    return emitOpError("scales ")
           << getScales().getType() << " are not " << n * blocks
           << " values (N x blocks)";
  if (Value z = getZeroPoints()) {
    auto zt = cast<RankedTensorType>(z.getType());
    int64_t packed = n * ((blocks * bits + 7) / 8);
    bool ok = zt.getElementType().isUnsignedInteger(8)
                  ? zt.getNumElements() == packed
                  : isa<FloatType>(zt.getElementType()) &&
                        (zt.getNumElements() == n * blocks ||
                         zt.getNumElements() == 1);
    if (!ok)
      return emitOpError("zero_points ")
             << zt << " are not " << packed << " packed ui8 codes, nor "
             << n * blocks << " or 1 float values";
  }
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
