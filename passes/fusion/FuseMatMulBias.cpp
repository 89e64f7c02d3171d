//===- FuseMatMulBias.cpp - bias and activation as a MatMul epilogue ------===//
#include "compiler/Dialect/TP/IR/TPOps.h"
#include "passes/fusion/Match.h"
#include "passes/fusion/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tpc {
#define GEN_PASS_DEF_FUSEMATMULBIASPASS
#include "passes/fusion/Passes.h.inc"
} // namespace tpc

using namespace mlir;
using namespace tpc::fusion;

namespace tpc {
namespace {

/// The activation `op` applies to its single operand, or "" for another op.
static StringRef activationOf(Operation *op) {
  if (isa<onnx::ReluOp>(op))
    return "relu";
  if (auto gelu = dyn_cast<onnx::GeluOp>(op))
    return gelu.getApproximate() == "tanh" ? "gelu_tanh" : "gelu";
  return "";
}

/// Root: Add(MatMul(a, w), bias) with w a [K, N] matrix and bias one value
/// per column; an activation that is the sum's only use joins the epilogue.
struct MatMulBiasPattern : OpRewritePattern<onnx::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::AddOp add,
                                PatternRewriter &rewriter) const override {
    for (int i = 0; i < 2; ++i) {
      auto mm = singleUseDef<onnx::MatMulOp>(add->getOperand(i));
      Value bias = add->getOperand(1 - i);
      if (!mm || mm.getType() != add.getType())
        continue;
      auto a = cast<RankedTensorType>(mm.getA().getType());
      auto w = cast<RankedTensorType>(mm.getB().getType());
      if (a.getRank() < 2 || w.getRank() != 2 ||
          !matchesNormalizedDims(bias, w.getShape().take_back(1)) ||
          cast<RankedTensorType>(bias.getType()).getElementType() !=
              a.getElementType())
        continue;
      Operation *last = add;
      StringRef activation = "none";
      if (add->hasOneUse()) {
        Operation *user = *add->getUsers().begin();
        if (StringRef act = activationOf(user); !act.empty()) {
          activation = act;
          last = user;
        }
      }
      rewriter.setInsertionPoint(last);
      auto fused = rewriter.create<onnx::MatMulBiasOp>(
          fusedLoc({mm, add, last}), add.getType(), mm.getA(), mm.getB(), bias,
          rewriter.getStringAttr(activation));
      // The fused op is still the weight MatMul the sharding pass chose.
      for (StringRef name : {tp::kRoleAttr, tp::kReasonAttr})
        if (Attribute a = mm->getAttr(name))
          fused->setAttr(name, a);
      rewriter.replaceOp(last, fused.getResult());
      return success();
    }
    return failure();
  }
};

struct FuseMatMulBiasPass
    : impl::FuseMatMulBiasPassBase<FuseMatMulBiasPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MatMulBiasPattern>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace tpc
