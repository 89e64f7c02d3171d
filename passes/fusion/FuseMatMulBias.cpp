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

/// Root: an activation of Gemm(a, w, bias) that is the Gemm's only use
/// (through Reshapes, each its input's only use), the Gemm a plain product
/// plus bias (alpha 1, beta 1, neither operand
/// transposed, bias one value per column): the form the TorchScript
/// exporter gives GPT-2's Conv1D, whose MLP activation then joins the
/// product's epilogue. A Gemm without such an activation stays a Gemm.
struct GemmActivationPattern : RewritePattern {
  GemmActivationPattern(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    StringRef activation = activationOf(op);
    if (activation.empty())
      return failure();
    // An elementwise activation commutes with the Reshapes the exporter
    // puts between the 2-D Gemm and the rest of the model.
    Value input = op->getOperand(0);
    while (auto reshape = singleUseDef<onnx::ReshapeOp>(input))
      input = reshape->getOperand(0);
    auto gemm = singleUseDef<onnx::GemmOp>(input);
    if (!gemm || !gemm.getC() || gemm.getTransA() != 0 ||
        gemm.getTransB() != 0 || gemm.getAlpha().convertToFloat() != 1.0f ||
        gemm.getBeta().convertToFloat() != 1.0f ||
        op->getOperand(0).getType() != op->getResult(0).getType())
      return failure();
    auto a = cast<RankedTensorType>(gemm.getA().getType());
    auto w = cast<RankedTensorType>(gemm.getB().getType());
    Value bias = gemm.getC();
    if (a.getRank() != 2 || w.getRank() != 2 ||
        !matchesNormalizedDims(bias, w.getShape().take_back(1)) ||
        cast<RankedTensorType>(bias.getType()).getElementType() !=
            a.getElementType())
      return failure();
    rewriter.setInsertionPoint(gemm);
    auto fused = rewriter.create<onnx::MatMulBiasOp>(
        fusedLoc({gemm, op}), gemm.getType(), gemm.getA(), gemm.getB(), bias,
        rewriter.getStringAttr(activation));
    for (StringRef name : {tp::kRoleAttr, tp::kReasonAttr})
      if (Attribute attr = gemm->getAttr(name))
        fused->setAttr(name, attr);
    // The Reshapes (if any) now reshape the activated product.
    rewriter.replaceOp(gemm, fused.getResult());
    rewriter.replaceOp(op, op->getOperand(0));
    return success();
  }
};

struct FuseMatMulBiasPass
    : impl::FuseMatMulBiasPassBase<FuseMatMulBiasPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MatMulBiasPattern, GemmActivationPattern>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace tpc
