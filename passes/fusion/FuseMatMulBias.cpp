//===- FuseMatMulBias.cpp - bias and activation as a MatMul epilogue ------===//
#include "compiler/Dialect/TP/IR/TPOps.h"
#include "passes/fusion/Match.h"
#include "passes/fusion/Passes.h"

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

/// The operands (a, w) of a plain product of an activation and a weight
/// matrix w [K, N]: a MatMul, or a Gemm with alpha 1, nothing transposed
/// and no C (the sharding pass leaves a column-parallel Gemm so, its bias in
/// an Add after it).
static std::optional<std::pair<Value, Value>> plainProduct(Operation *op) {
  Value a, w;
  if (auto mm = dyn_cast<onnx::MatMulOp>(op)) {
    a = mm.getA();
    w = mm.getB();
  } else if (auto gemm = dyn_cast<onnx::GemmOp>(op)) {
    if (gemm.getC() || gemm.getTransA() != 0 || gemm.getTransB() != 0 ||
        gemm.getAlpha().convertToFloat() != 1.0f)
      return std::nullopt;
    a = gemm.getA();
    w = gemm.getB();
  } else {
    return std::nullopt;
  }
  if (cast<RankedTensorType>(a.getType()).getRank() < 2 ||
      cast<RankedTensorType>(w.getType()).getRank() != 2)
    return std::nullopt;
  return std::make_pair(a, w);
}

/// Whether `bias` is one value per column of the weight `w`, of a's type.
static bool isColumnBias(Value bias, Value a, Value w) {
  return matchesNormalizedDims(
             bias, cast<RankedTensorType>(w.getType()).getShape().take_back(1)) &&
         cast<RankedTensorType>(bias.getType()).getElementType() ==
             cast<RankedTensorType>(a.getType()).getElementType();
}

/// The fused op for `product` (a MatMul or Gemm) plus `bias`, keeping the
/// product's sharding role: it is still the weight MatMul the sharding
/// pass chose.
static ext::MatMulBiasOp createFused(PatternRewriter &rewriter,
                                     Operation *product,
                                     ArrayRef<Operation *> fused, Type type,
                                     Value a, Value w, Value bias,
                                     StringRef activation) {
  auto op = rewriter.create<ext::MatMulBiasOp>(
      fusedLoc(fused), type, a, w, bias, rewriter.getStringAttr(activation));
  for (StringRef name : {tp::kRoleAttr, tp::kReasonAttr})
    if (Attribute attr = product->getAttr(name))
      op->setAttr(name, attr);
  return op;
}

/// Root: Add(product, bias), the product a MatMul or plain Gemm whose only
/// use is the Add and bias one value per column; an activation that is the
/// sum's only use joins the epilogue.
struct MatMulBiasPattern : OpRewritePattern<onnx::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::AddOp add,
                                PatternRewriter &rewriter) const override {
    for (int i = 0; i < 2; ++i) {
      Value product = add->getOperand(i);
      Value bias = add->getOperand(1 - i);
      Operation *def = product.getDefiningOp();
      if (!def || !product.hasOneUse() || product.getType() != add.getType())
        continue;
      std::optional<std::pair<Value, Value>> aw = plainProduct(def);
      if (!aw || !isColumnBias(bias, aw->first, aw->second))
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
      auto fused = createFused(rewriter, def, {def, add, last}, add.getType(),
                               aw->first, aw->second, bias, activation);
      rewriter.replaceOp(last, fused.getResult());
      return success();
    }
    return failure();
  }
};

/// Root: an activation whose operand is, directly or through Reshapes
/// (each its input's only use), the only use of
///   - a MatMulBias without activation, which takes the activation, or
///   - Gemm(a, w, bias), alpha and beta 1, nothing transposed, bias one value
///     per column, which becomes a MatMulBias with it.
/// The second is how the TorchScript exporter writes GPT-2's Conv1D + GELU
/// (Gemm, Reshape to [batch, sequence, hidden], GELU); the first is what
/// the Add root leaves of it once the sharding pass has moved a
/// column-parallel Gemm's bias into an Add. The Reshapes then reshape the
/// activated product. A Gemm with no activation after it stays a Gemm.
struct ActivationIntoProductPattern : RewritePattern {
  ActivationIntoProductPattern(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    StringRef activation = activationOf(op);
    if (activation.empty() ||
        op->getOperand(0).getType() != op->getResult(0).getType())
      return failure();
    // An elementwise activation commutes with the Reshapes between.
    Value input = op->getOperand(0);
    while (auto reshape = singleUseDef<onnx::ReshapeOp>(input))
      input = reshape->getOperand(0);
    if (auto mmb = singleUseDef<ext::MatMulBiasOp>(input)) {
      if (mmb.getActivation() != "none")
        return failure();
      rewriter.modifyOpInPlace(mmb, [&] {
        mmb.setActivationAttr(rewriter.getStringAttr(activation));
        mmb->setLoc(fusedLoc({mmb, op}));
      });
      rewriter.replaceOp(op, op->getOperand(0));
      return success();
    }
    auto gemm = singleUseDef<onnx::GemmOp>(input);
    if (!gemm || !gemm.getC() || gemm.getTransA() != 0 ||
        gemm.getTransB() != 0 || gemm.getAlpha().convertToFloat() != 1.0f ||
        gemm.getBeta().convertToFloat() != 1.0f ||
        cast<RankedTensorType>(gemm.getA().getType()).getRank() != 2 ||
        cast<RankedTensorType>(gemm.getB().getType()).getRank() != 2 ||
        !isColumnBias(gemm.getC(), gemm.getA(), gemm.getB()))
      return failure();
    rewriter.setInsertionPoint(gemm);
    auto fused = createFused(rewriter, gemm, {gemm, op}, gemm.getType(),
                             gemm.getA(), gemm.getB(), gemm.getC(), activation);
    rewriter.replaceOp(gemm, fused.getResult());
    rewriter.replaceOp(op, op->getOperand(0));
    return success();
  }
};

struct FuseMatMulBiasPass
    : FusionPass<impl::FuseMatMulBiasPassBase<FuseMatMulBiasPass>,
                 MatMulBiasPattern, ActivationIntoProductPattern> {};

} // namespace
} // namespace tpc
