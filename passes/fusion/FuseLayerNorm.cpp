//===- FuseLayerNorm.cpp - decomposed layer norms -------------------------===//
#include "passes/fusion/Match.h"
#include "passes/fusion/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

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
    ArrayRef<int64_t> normDims =
        cast<RankedTensorType>(x.getType()).getShape().drop_front(*axis);
    AffineTail tail = matchAffineTail(op, normDims, /*withBias=*/true);

    SmallVector<Operation *> ops = {mean, sub, sq.getDefiningOp()};
    ops.append(n->ops.begin(), n->ops.end());
    ops.push_back(op);
    ops.append(tail.ops.begin(), tail.ops.end());
    Location loc = fusedLoc(ops);
    rewriter.setInsertionPoint(tail.last);
    Type elem = cast<RankedTensorType>(x.getType()).getElementType();
    Value scale = tail.scale ? tail.scale
                             : onesLike(rewriter, loc, normDims, elem);
    auto ln = rewriter.create<onnx::LayerNormalizationOp>(
        loc, op.getType(), x, scale, tail.bias,
        rewriter.getI64IntegerAttr(*axis),
        rewriter.getF32FloatAttr(n->epsilon));
    rewriter.replaceOp(tail.last, ln.getResult());
    return success();
  }
};

struct FuseLayerNormPass : impl::FuseLayerNormPassBase<FuseLayerNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LayerNormPattern<onnx::DivOp>, LayerNormPattern<onnx::MulOp>>(
        &getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace tpc
