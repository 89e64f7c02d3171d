//===- FuseRMSNorm.cpp - decomposed RMS norms -----------------------------===//
#include "passes/fusion/Match.h"
#include "passes/fusion/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tpc {
#define GEN_PASS_DEF_FUSERMSNORMPASS
#include "passes/fusion/Passes.h.inc"
} // namespace tpc

using namespace mlir;
using namespace tpc::fusion;

namespace tpc {
namespace {

/// Root: the op dividing x by sqrt(mean(x^2) + eps).
template <class OpTy> struct RMSNormPattern : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    std::optional<NormalizeByStd> n = matchNormalizeByStd(op);
    if (!n)
      return failure();
    Value x = n->numerator;
    Value sq = n->variance->getOperand(0);
    if (!sq.hasOneUse() || !isSquareOf(sq, x) || x.getType() != op.getType())
      return failure();
    auto rank = cast<RankedTensorType>(x.getType()).getRank();
    FailureOr<SmallVector<int64_t>> axes = reduceAxes(n->variance);
    if (failed(axes))
      return failure();
    std::optional<int64_t> axis = trailingAxis(*axes, rank);
    if (!axis)
      return failure();
    ArrayRef<int64_t> normDims =
        cast<RankedTensorType>(x.getType()).getShape().drop_front(*axis);
    AffineTail tail = matchAffineTail(op, normDims, /*withBias=*/false);

    SmallVector<Operation *> ops = {sq.getDefiningOp()};
    ops.append(n->ops.begin(), n->ops.end());
    ops.push_back(op);
    ops.append(tail.ops.begin(), tail.ops.end());
    Location loc = fusedLoc(ops);
    rewriter.setInsertionPoint(tail.last);
    Type elem = cast<RankedTensorType>(x.getType()).getElementType();
    Value scale = tail.scale ? tail.scale
                             : onesLike(rewriter, loc, normDims, elem);
    auto rms = rewriter.create<onnx::RMSNormalizationOp>(
        loc, op.getType(), x, scale, rewriter.getI64IntegerAttr(*axis),
        rewriter.getF32FloatAttr(n->epsilon));
    rewriter.replaceOp(tail.last, rms.getResult());
    return success();
  }
};

struct FuseRMSNormPass : impl::FuseRMSNormPassBase<FuseRMSNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RMSNormPattern<onnx::DivOp>, RMSNormPattern<onnx::MulOp>>(
        &getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace tpc
