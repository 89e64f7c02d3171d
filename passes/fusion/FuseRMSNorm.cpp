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
struct RMSNormPattern : NormFusionPattern {
  using NormFusionPattern::NormFusionPattern;

  bool withBias() const override { return false; }

  /// x is the numerator itself.
  Value matchInput(Operation *, const NormalizeByStd &n, ArrayRef<int64_t>,
                   SmallVectorImpl<Operation *> &) const override {
    return n.numerator;
  }

  Value createNorm(PatternRewriter &rewriter, const NormReplacement &r,
                   Type type, Value x, int64_t axis,
                   double epsilon) const override {
    return rewriter.create<onnx::RMSNormalizationOp>(
        r.loc, type, x, r.scale, rewriter.getI64IntegerAttr(axis),
        rewriter.getF32FloatAttr(epsilon));
  }
};

struct FuseRMSNormPass : FusionPass<impl::FuseRMSNormPassBase<FuseRMSNormPass>,
                                    RootedAt<RMSNormPattern, onnx::DivOp>,
                                    RootedAt<RMSNormPattern, onnx::MulOp>> {};

} // namespace
} // namespace tpc
