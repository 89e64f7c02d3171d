//===- FusedOps.cpp - Verifiers of the fusion targets ---------------------===//
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"

using namespace mlir;
using namespace tpc::onnx;

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
  if (Value n = getNonpadKvSeqlen()) {
    auto nt = cast<RankedTensorType>(n.getType());
    if (nt.getRank() != 1 || nt.getDimSize(0) != qs[0])
      return emitOpError("nonpad_kv_seqlen ")
             << nt << " is not [batch] (batch " << qs[0] << ")";
  }
  return success();
}
