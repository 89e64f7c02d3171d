//===- FuseRMSNorm.cpp - decomposed RMS norms -----------------------------===//
#include "passes/fusion/Match.h"
#include "passes/fusion/Passes.h"

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
    NormReplacement r = prepareNormReplacement(
        rewriter, x, *axis, *n, {sq.getDefiningOp()}, /*withBias=*/false);
    auto rms = rewriter.create<onnx::RMSNormalizationOp>(
        r.loc, op.getType(), x, r.scale, rewriter.getI64IntegerAttr(*axis),
        rewriter.getF32FloatAttr(n->epsilon));
    rewriter.replaceOp(r.tail.last, rms.getResult());
    return success();
  }
};

struct FuseRMSNormPass : impl::FuseRMSNormPassBase<FuseRMSNormPass> {
  void runOnOperation() override {
    if (failed(
            applyFusionPatterns<RMSNormPattern<onnx::DivOp>,
                                RMSNormPattern<onnx::MulOp>>(getOperation())))
      signalPassFailure();
  }
};

} // namespace
} // namespace tpc
