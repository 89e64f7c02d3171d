//===- FuseAddNorm.cpp - residual add + norm ------------------------------===//
#include "passes/fusion/Match.h"
#include "passes/fusion/Passes.h"

namespace tpc {
#define GEN_PASS_DEF_FUSEADDNORMPASS
#include "passes/fusion/Passes.h.inc"
} // namespace tpc

using namespace mlir;
using namespace tpc::fusion;

namespace tpc {
namespace {

/// True when `v` is available at `point`: a block argument of its block or
/// defined before it in the same block.
static bool definedBefore(Value v, Operation *point) {
  if (!v)
    return true;
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == point->getBlock();
  Operation *def = v.getDefiningOp();
  return def->getBlock() == point->getBlock() && def->isBeforeInBlock(point);
}

/// Root: a LayerNormalization or RMSNormalization of Add(a, b) where a and b
/// are activations of the sum's type. The fused op takes the Add's place so
/// that the Add's other users (the next residual add) see its Sum result.
/// An operand computed from weights and constants alone (GPT-2's position
/// embeddings, [1, S, H]) is a parameter broadcast over the batch, of the
/// sum's type only when the batch is 1: fusing it then would make the
/// program's structure depend on the batch size.
template <class NormOp> struct AddNormPattern : OpRewritePattern<NormOp> {
  using OpRewritePattern<NormOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(NormOp norm,
                                PatternRewriter &rewriter) const override {
    auto add = norm.getX().template getDefiningOp<onnx::AddOp>();
    if (!add || add.getA().getType() != add.getType() ||
        add.getB().getType() != add.getType() ||
        !mayDependOnInputs(add.getA()) || !mayDependOnInputs(add.getB()))
      return failure();
    Value bias;
    if constexpr (std::is_same_v<NormOp, onnx::LayerNormalizationOp>)
      bias = norm.getB();
    if (!definedBefore(norm.getScale(), add) || !definedBefore(bias, add))
      return failure();
    rewriter.setInsertionPoint(add);
    auto fused = rewriter.create<ext::AddNormalizationOp>(
        fusedLoc({add, norm}), add.getType(), add.getType(), add.getA(),
        add.getB(), norm.getScale(), bias, norm.getAxisAttr(),
        norm.getEpsilonAttr(),
        rewriter.getI64IntegerAttr(
            std::is_same_v<NormOp, onnx::RMSNormalizationOp> ? 1 : 0));
    rewriter.replaceOp(norm, fused.getY());
    rewriter.replaceOp(add, fused.getSum());
    return success();
  }
};

struct FuseAddNormPass : FusionPass<impl::FuseAddNormPassBase<FuseAddNormPass>,
                                    AddNormPattern<onnx::LayerNormalizationOp>,
                                    AddNormPattern<onnx::RMSNormalizationOp>> {
};

} // namespace
} // namespace tpc
