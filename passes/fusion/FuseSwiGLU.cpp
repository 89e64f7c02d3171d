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

/// The gate g and up projection u of a product g * Sigmoid(g) * u, each of
/// type `type`; nullopt when `p` is not one.
static std::optional<std::pair<Value, Value>> gateAndUp(const Product &p,
                                                        Type type) {
  if (p.factors.size() != 3 || p.constant != 1.0)
    return std::nullopt;
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
    if (gates == 1 && up && up != gate && gate.getType() == type &&
        up.getType() == type)
      return std::make_pair(gate, up);
  }
  return std::nullopt;
}

/// Root: the Mul of three factors g, Sigmoid(g) and u.
struct SwiGLUPattern : OpRewritePattern<onnx::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::MulOp root,
                                PatternRewriter &rewriter) const override {
    std::optional<std::pair<Value, Value>> gu =
        gateAndUp(flattenProduct(root.getResult()), root.getType());
    if (!gu)
      return failure();
    rewriter.replaceOpWithNewOp<ext::SwiGLUOp>(root, root.getType(), gu->first,
                                               gu->second);
    return success();
  }
};

struct FuseSwiGLUPass
    : FusionPass<impl::FuseSwiGLUPassBase<FuseSwiGLUPass>, SwiGLUPattern> {};

} // namespace
} // namespace tpc
