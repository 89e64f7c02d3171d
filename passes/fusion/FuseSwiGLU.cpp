//===- FuseSwiGLU.cpp - silu(gate) * up into tpc.SwiGLU ------------------===//
#include "passes/fusion/Match.h"
#include "passes/fusion/Passes.h"

namespace tpc {
#define GEN_PASS_DEF_FUSESWIGLUPASS
#include "passes/fusion/Passes.h.inc"
} // namespace tpc

using namespace mlir;
using namespace tpc::fusion;

namespace tpc {
namespace {

/// Root: the Mul of three factors g, Sigmoid(g) and u.
struct SwiGLUPattern : OpRewritePattern<onnx::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::MulOp root,
                                PatternRewriter &rewriter) const override {
    Product p = flattenProduct(root.getResult());
    if (p.factors.size() != 3 || p.constant != 1.0)
      return failure();
    for (int s = 0; s < 3; ++s) {
      auto sigmoid = singleUseDef<onnx::SigmoidOp>(p.factors[s]);
      if (!sigmoid)
        continue;
      Value gate = sigmoid.getX();
      // The other two factors are the gate itself and the up projection.
      Value up;
      int gates = 0;
      for (int i = 0; i < 3; ++i) {
        if (i == s)
          continue;
        if (p.factors[i] == gate && !gates)
          ++gates;
        else
          up = p.factors[i];
      }
      if (gates != 1 || !up || up == gate || gate.getType() != root.getType() ||
          up.getType() != root.getType())
        continue;
      rewriter.replaceOpWithNewOp<ext::SwiGLUOp>(root, root.getType(), gate,
                                                 up);
      return success();
    }
    return failure();
  }
};

struct FuseSwiGLUPass : impl::FuseSwiGLUPassBase<FuseSwiGLUPass> {
  void runOnOperation() override {
    if (failed(applyFusionPatterns<SwiGLUPattern>(getOperation())))
      signalPassFailure();
  }
};

} // namespace
} // namespace tpc
