//===- FuseLayerNorm.cpp - decomposed layer norms -------------------------===//
#include "passes/fusion/Match.h"
#include "passes/fusion/Passes.h"

namespace tpc {
#define GEN_PASS_DEF_FUSELAYERNORMPASS
#include "passes/fusion/Passes.h.inc"
} // namespace tpc

using namespace mlir;
using namespace tpc::fusion;

namespace tpc {
namespace {

/// Root: the op dividing x - mean(x) by the standard deviation.
template <class OpTy> struct LayerNormPattern : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    std::optional<NormalizeByStd> n = matchNormalizeByStd(op);
    if (!n)
      return failure();
    // numerator = x - ReduceMean(x); variance = ReduceMean(numerator^2).
    auto sub = n->numerator.template getDefiningOp<onnx::SubOp>();
    if (!sub)
      return failure();
    Value x = sub.getA();
    auto mean = singleUseDef<onnx::ReduceMeanOp>(sub.getB());
    Value sq = n->variance->getOperand(0);
    if (!mean || mean.getData() != x || mean.getKeepdims() != 1 ||
        !sq.hasOneUse() || !isSquareOf(sq, n->numerator) ||
        x.getType() != op.getType())
      return failure();
    // The centred value feeds only the square and the normalization.
    for (Operation *user : n->numerator.getUsers())
      if (user != op && user != sq.getDefiningOp())
        return failure();
    auto rank = cast<RankedTensorType>(x.getType()).getRank();
    FailureOr<SmallVector<int64_t>> meanAxes = reduceAxes(mean);
    FailureOr<SmallVector<int64_t>> varAxes = reduceAxes(n->variance);
    if (failed(meanAxes) || failed(varAxes) || *meanAxes != *varAxes)
      return failure();
    std::optional<int64_t> axis = trailingAxis(*meanAxes, rank);
    if (!axis)
      return failure();
    NormReplacement r = prepareNormReplacement(rewriter, x, *axis, *n,
                                               {mean, sub, sq.getDefiningOp()},
                                               /*withBias=*/true);
    auto ln = rewriter.create<onnx::LayerNormalizationOp>(
        r.loc, op.getType(), x, r.scale, r.tail.bias,
        rewriter.getI64IntegerAttr(*axis),
        rewriter.getF32FloatAttr(n->epsilon));
    rewriter.replaceOp(r.tail.last, ln.getResult());
    return success();
  }
};

struct FuseLayerNormPass : impl::FuseLayerNormPassBase<FuseLayerNormPass> {
  void runOnOperation() override {
    if (failed(
            applyFusionPatterns<LayerNormPattern<onnx::DivOp>,
                                LayerNormPattern<onnx::MulOp>>(getOperation())))
      signalPassFailure();
  }
};

} // namespace
} // namespace tpc
