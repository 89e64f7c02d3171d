//===- LastTokenLogits.cpp - A decode engine's logits, last token only ----===//
#include "compiler/Transforms/Passes.h"

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace tpc {
#define GEN_PASS_DEF_LASTTOKENLOGITSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace tpc

using namespace mlir;

namespace tpc {
namespace {

/// `t` with dimension `axis` set to 1.
RankedTensorType oneRow(RankedTensorType t, int64_t axis) {
  SmallVector<int64_t> shape(t.getShape());
  shape[size_t(axis)] = 1;
  return RankedTensorType::get(shape, t.getElementType());
}

/// Whether `v` (broadcast against a result of `rank` dims) is the same for
/// every row along `axis`: it does not reach that axis, or it is a weight
/// or constant of size 1 there. An activation of size 1 there (every
/// activation, when the forward has one token) is one row, not a value
/// broadcast over the rows: moving the cut past it would make the program
/// depend on the token count.
bool sameForEveryRow(Value v, int64_t rank, int64_t axis) {
  auto t = cast<RankedTensorType>(v.getType());
  int64_t at = axis - (rank - t.getRank());
  if (at < 0)
    return true;
  return t.getDimSize(at) == 1 &&
         isa_and_nonnull<onnx::WeightOp, onnx::ConstantOp>(v.getDefiningOp());
}

/// The operand of `op` that carries the rows when `op` treats each row
/// (position along `axis` of its result) alone, or null.
OpOperand *rowOperand(Operation *op, int64_t axis) {
  if (op->getNumResults() != 1)
    return nullptr;
  auto rt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!rt || axis >= rt.getRank() - 1)
    return nullptr;
  int64_t rank = rt.getRank();
  auto same = [&](Value v) { return v.getType() == rt; };
  // A MatMul by a weight matrix: the rows are A's.
  if (auto mm = dyn_cast<onnx::MatMulOp>(op)) {
    auto b = cast<RankedTensorType>(mm.getB().getType());
    auto a = cast<RankedTensorType>(mm.getA().getType());
    return b.getRank() == 2 && a.getRank() == rank ? &op->getOpOperand(0)
                                                   : nullptr;
  }
  // Norms over the last axis.
  if (isa<onnx::LayerNormalizationOp, onnx::RMSNormalizationOp>(op)) {
    auto axisAttr = op->getAttrOfType<IntegerAttr>("axis");
    int64_t normAxis = axisAttr ? axisAttr.getInt() : -1;
    if (normAxis < 0)
      normAxis += rank;
    if (normAxis <= axis || !same(op->getOperand(0)))
      return nullptr;
    for (Value other : op->getOperands().drop_front())
      if (!sameForEveryRow(other, rank, axis))
        return nullptr;
    return &op->getOpOperand(0);
  }
  // Elementwise on one operand of the result's shape.
  if (isa<onnx::CastOp, onnx::TanhOp, onnx::ReluOp, onnx::SigmoidOp,
          onnx::GeluOp>(op)) {
    auto in = cast<RankedTensorType>(op->getOperand(0).getType());
    return in.getShape() == rt.getShape() ? &op->getOpOperand(0) : nullptr;
  }
  // Binary: one operand of the result's type, the other the same for every
  // row.
  if (isa<onnx::AddOp, onnx::SubOp, onnx::MulOp, onnx::DivOp>(op)) {
    for (int i = 0; i < 2; ++i)
      if (same(op->getOperand(i)) &&
          sameForEveryRow(op->getOperand(1 - i), rank, axis))
        return &op->getOpOperand(i);
    return nullptr;
  }
  return nullptr;
}

struct LastTokenLogitsPass
    : impl::LastTokenLogitsPassBase<LastTokenLogitsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!module->hasAttr("onnx.kv_cache"))
      return;
    func::FuncOp func = module.lookupSymbol<func::FuncOp>("main");
    if (!func || func.isExternal())
      return;
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    constexpr int64_t axis = 1;
    for (OpOperand &result : ret->getOpOperands()) {
      auto t = dyn_cast<RankedTensorType>(result.get().getType());
      if (!t || t.getRank() != 3 || !isa<FloatType>(t.getElementType()))
        continue;
      int64_t rows = t.getDimSize(axis);
      // Move the cut up while the op above treats each position alone and
      // feeds nothing else.
      Value v = result.get();
      SmallVector<OpOperand *> chain; // outermost first
      while (Operation *def = v.getDefiningOp()) {
        OpOperand *in = v.hasOneUse() ? rowOperand(def, axis) : nullptr;
        if (!in)
          break;
        chain.push_back(in);
        v = in->get();
      }
      OpBuilder b(func.getContext());
      b.setInsertionPointAfterValue(v);
      auto vt = cast<RankedTensorType>(v.getType());
      Value cut = b.create<onnx::SliceOp>(
          v.getLoc(), oneRow(vt, axis), v, b.getDenseI64ArrayAttr({rows - 1}),
          b.getDenseI64ArrayAttr({rows}), b.getDenseI64ArrayAttr({axis}),
          b.getDenseI64ArrayAttr({1}));
      // Each op of the chain, innermost first, now takes one row.
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        OpOperand *in = *it;
        Operation *op = in->getOwner();
        in->set(cut);
        auto rt = cast<RankedTensorType>(op->getResult(0).getType());
        op->getResult(0).setType(oneRow(rt, axis));
        cut = op->getResult(0);
      }
      result.set(cut);
    }
    SmallVector<Type> results(ret->getOperandTypes());
    func.setFunctionType(FunctionType::get(
        func.getContext(), func.getFunctionType().getInputs(), results));
  }
};

} // namespace
} // namespace tpc
