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
struct LayerNormPattern : NormFusionPattern {
  using NormFusionPattern::NormFusionPattern;

  bool withBias() const override { return true; }

  Value matchInput(Operation *op, const NormalizeByStd &n,
                   ArrayRef<int64_t> axes,
                   SmallVectorImpl<Operation *> &leading) const override {
    // numerator = x - ReduceMean(x), over the variance's axes.
    auto sub = n.numerator.getDefiningOp<onnx::SubOp>();
    if (!sub)
      return nullptr;
    Value x = sub.getA();
    auto mean = singleUseDef<onnx::ReduceMeanOp>(sub.getB());
    if (!mean || mean.getData() != x || mean.getKeepdims() != 1)
      return nullptr;
    // The centred value feeds only the square and the normalization.
    Operation *square = n.variance->getOperand(0).getDefiningOp();
    for (Operation *user : n.numerator.getUsers())
      if (user != op && user != square)
        return nullptr;
    FailureOr<SmallVector<int64_t>> meanAxes = reduceAxes(mean);
    if (failed(meanAxes) || *meanAxes != axes)
      return nullptr;
    leading.append({mean, sub});
    return x;
  }

  Value createNorm(PatternRewriter &rewriter, const NormReplacement &r,
                   Type type, Value x, int64_t axis,
                   double epsilon) const override {
    return rewriter.create<onnx::LayerNormalizationOp>(
        r.loc, type, x, r.scale, r.tail.bias, rewriter.getI64IntegerAttr(axis),
        rewriter.getF32FloatAttr(epsilon));
  }
};

struct FuseLayerNormPass
    : FusionPass<impl::FuseLayerNormPassBase<FuseLayerNormPass>,
                 RootedAt<LayerNormPattern, onnx::DivOp>,
                 RootedAt<LayerNormPattern, onnx::MulOp>> {};

} // namespace
} // namespace tpc
