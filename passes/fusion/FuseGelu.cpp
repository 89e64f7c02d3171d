//===- FuseGelu.cpp - erf and tanh GELU into onnx.Gelu --------------------===//
#include "passes/fusion/Match.h"
#include "passes/fusion/Passes.h"

#include <cmath>

namespace tpc {
#define GEN_PASS_DEF_FUSEGELUPASS
#include "passes/fusion/Passes.h.inc"
} // namespace tpc

using namespace mlir;
using namespace tpc::fusion;

namespace tpc {
namespace {

/// True when `p` is exactly `scale * x * x * ... (n times)`.
static bool isPowerOf(const Product &p, Value x, int n, double scale) {
  if (int(p.factors.size()) != n ||
      std::abs(p.constant - scale) > 1e-5 * std::abs(scale))
    return false;
  return llvm::all_of(p.factors, [&](Value f) { return f == x; });
}

/// sqrt(2/pi) * (x + 0.044715 * x^3), the argument of the tanh form.
static bool isTanhArgument(Value arg, Value x) {
  Product outer = flattenProduct(arg);
  if (outer.factors.size() != 1 ||
      std::abs(outer.constant - std::sqrt(2.0 / M_PI)) > 1e-5)
    return false;
  auto add = singleUseDef<onnx::AddOp>(outer.factors.front());
  if (!add)
    return false;
  Value cubic = otherOperand(add, x);
  return cubic && cubic.hasOneUse() &&
         isPowerOf(flattenProduct(cubic), x, 3, 0.044715);
}

/// Root: the outermost Mul of 0.5 * x * (1 + act(arg(x))).
struct GeluPattern : OpRewritePattern<onnx::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::MulOp root,
                                PatternRewriter &rewriter) const override {
    Product p = flattenProduct(root.getResult());
    if (p.factors.size() != 2 || std::abs(p.constant - 0.5) > 1e-6)
      return failure();
    for (int i = 0; i < 2; ++i) {
      Value x = p.factors[i];
      auto onePlus = singleUseDef<onnx::AddOp>(p.factors[1 - i]);
      if (!onePlus || x.getType() != root.getType())
        continue;
      Value act;
      if (isSplat(onePlus.getA(), 1.0))
        act = onePlus.getB();
      else if (isSplat(onePlus.getB(), 1.0))
        act = onePlus.getA();
      if (!act || !act.hasOneUse() || act.getType() != root.getType())
        continue;
      StringRef approximate;
      if (auto erf = act.getDefiningOp<onnx::ErfOp>()) {
        if (!isPowerOf(flattenProduct(erf.getX()), x, 1, M_SQRT1_2) ||
            (erf.getX() != x && !erf.getX().hasOneUse()))
          continue;
        approximate = "none";
      } else if (auto tanh = act.getDefiningOp<onnx::TanhOp>()) {
        if (!tanh.getX().hasOneUse() || !isTanhArgument(tanh.getX(), x))
          continue;
        approximate = "tanh";
      } else {
        continue;
      }
      rewriter.replaceOpWithNewOp<onnx::GeluOp>(
          root, root.getType(), x, rewriter.getStringAttr(approximate));
      return success();
    }
    return failure();
  }
};

struct FuseGeluPass
    : FusionPass<impl::FuseGeluPassBase<FuseGeluPass>, GeluPattern> {};

} // namespace
} // namespace tpc
