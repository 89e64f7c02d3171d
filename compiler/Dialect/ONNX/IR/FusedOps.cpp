//===- FusedOps.cpp - Verifiers of the fusion targets ---------------------===//
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"

using namespace mlir;
using namespace tpc::onnx;

/// Drops leading unit dims, so that [1, 1, 64] and [64] compare equal.
static ArrayRef<int64_t> stripLeadingOnes(ArrayRef<int64_t> s) {
  while (!s.empty() && s.front() == 1)
    s = s.drop_front();
  return s;
}

LogicalResult RMSNormalizationOp::verify() {
  RankedTensorType x = getX().getType();
  FailureOr<int64_t> axis = normalizeAxis(getAxis(), x.getRank());
  if (failed(axis))
    return emitOpError("axis ") << int64_t(getAxis()) << " out of range";
  if (getType() != x)
    return emitOpError("result type ") << getType() << " differs from " << x;
  ArrayRef<int64_t> norm = x.getShape().drop_front(*axis);
  if (stripLeadingOnes(getScale().getType().getShape()) !=
          stripLeadingOnes(norm) ||
      getScale().getType().getElementType() != x.getElementType())
    return emitOpError("scale ")
           << getScale().getType() << " does not match the normalized dims";
  return success();
}

LogicalResult AttentionOp::verify() {
  RankedTensorType q = getQ().getType(), k = getK().getType(),
                   v = getV().getType();
  for (RankedTensorType t : {q, k, v, getType()})
    if (t.getRank() != 4 || t.getElementType() != q.getElementType())
      return emitOpError("Q, K, V and Y must be 4-D tensors of one type");
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  if (ks[0] != qs[0] || vs[0] != qs[0] || ks[3] != qs[3] || vs[1] != ks[1] ||
      vs[2] != ks[2])
    return emitOpError("Q ") << q << ", K " << k << " and V " << v
                             << " do not agree";
  if (ks[1] <= 0 || qs[1] % ks[1] != 0)
    return emitOpError("kv heads (")
           << ks[1] << ") must divide q heads (" << qs[1] << ")";
  ArrayRef<int64_t> ys = getType().getShape();
  if (ys[0] != qs[0] || ys[1] != qs[1] || ys[2] != qs[2] || ys[3] != vs[3])
    return emitOpError("result ") << getType() << " is not [batch, q_heads, "
                                                  "q_len, v_dim]";
  if (Value mask = getAttnMask()) {
    auto mt = cast<RankedTensorType>(mask.getType());
    if (!mt.getElementType().isInteger(1) &&
        mt.getElementType() != q.getElementType())
      return emitOpError("attn_mask must be bool or of Q's element type");
    SmallVector<int64_t> full = {qs[0], qs[1], qs[2], ks[2]};
    FailureOr<SmallVector<int64_t>> b =
        broadcastShapes({mt.getShape(), ArrayRef<int64_t>(full)});
    if (mt.getRank() > 4 || failed(b) || *b != full)
      return emitOpError("attn_mask ")
             << mt << " does not broadcast to the scores";
  }
  return success();
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
    if (w && (stripLeadingOnes(cast<RankedTensorType>(w.getType()).getShape()) !=
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
    return emitOpError("A ") << a << " and B " << b
                             << " are not [..., K] and [K, N]";
  SmallVector<int64_t> y(a.getShape());
  y.back() = b.getShape()[1];
  if (getType().getShape() != ArrayRef<int64_t>(y) ||
      getType().getElementType() != a.getElementType() ||
      b.getElementType() != a.getElementType())
    return emitOpError("result ") << getType() << " is not A x B";
  if (stripLeadingOnes(getBias().getType().getShape()) !=
          ArrayRef<int64_t>(y).take_back(1) ||
      getBias().getType().getElementType() != a.getElementType())
    return emitOpError("bias ") << getBias().getType()
                                << " is not one value per column";
  StringRef act = getActivation();
  if (act != "none" && act != "relu" && act != "gelu" && act != "gelu_tanh")
    return emitOpError("activation must be none, relu, gelu or gelu_tanh, "
                       "not \"")
           << act << "\"";
  return success();
}
