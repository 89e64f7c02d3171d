//===- Match.h - Dataflow matchers shared by the fusion passes --*- C++ -*-===//
//
// The fusion passes recognise decomposed subgraphs by their dataflow and the
// values of their constants, never by names. These helpers read constants
// and flatten chains of products so that each pattern accepts the operand
// orders and groupings that different exporters write.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_PASSES_FUSION_MATCH_H
#define TPC_PASSES_FUSION_MATCH_H

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <optional>

namespace tpc::fusion {

/// The value of a float constant whose elements are all equal.
std::optional<double> splatValue(mlir::Value v);

/// True when `v` is a constant whose elements all equal `want` within a
/// relative tolerance (exporters write 1/sqrt(2) with 7 to 17 digits).
bool isSplat(mlir::Value v, double want, double rtol = 1e-5);

/// `v` as constant * factors[0] * factors[1] * ...: looks through Mul,
/// Div by a constant, Pow by 2 or 3 and Neg. Ops below the root are looked
/// through only when `v`'s chain is their single use, so that a value used
/// elsewhere stays a factor (and the pattern does not match).
struct Product {
  double constant = 1.0;
  llvm::SmallVector<mlir::Value, 4> factors;
};
Product flattenProduct(mlir::Value v);

/// The op of type OpTy defining `v` when `v` has a single use; null otherwise.
template <class OpTy> OpTy singleUseDef(mlir::Value v) {
  if (!v || !v.hasOneUse())
    return nullptr;
  return v.getDefiningOp<OpTy>();
}

/// Of a binary op's two operands, the one that is not `known`; null when
/// neither is.
mlir::Value otherOperand(mlir::Operation *op, mlir::Value known);

/// Axes of a Reduce op normalised to [0, rank), sorted; failure when any is
/// out of range.
mlir::FailureOr<llvm::SmallVector<int64_t>> reduceAxes(mlir::Operation *op);

/// The first axis when `axes` are the trailing axes [first, rank) of a
/// tensor of that rank; nullopt otherwise.
std::optional<int64_t> trailingAxis(llvm::ArrayRef<int64_t> axes,
                                    int64_t rank);

/// Whether `v` may depend on the function's arguments (the graph inputs):
/// a bounded walk up its producers, in which a long chain counts as
/// dependent. False means `v` is computed from weights and constants only.
bool mayDependOnInputs(mlir::Value v);

/// True when `w`'s shape, without leading unit dims, equals `dims` without
/// leading unit dims (a per-element scale or bias of normalized dims), and
/// `w` is one value for every row: it has no leading dims, or is computed
/// from weights and constants only (not one row of an activation).
bool matchesNormalizedDims(mlir::Value w, llvm::ArrayRef<int64_t> dims);

/// A location naming every op of a matched subgraph, so that the fused op
/// keeps the ONNX node names.
mlir::Location fusedLoc(llvm::ArrayRef<mlir::Operation *> ops);

} // namespace tpc::fusion


namespace tpc::fusion {

/// `numerator / Sqrt(ReduceMean(...) + eps)`, the core of both norms.
struct NormalizeByStd {
  mlir::Operation *normOp = nullptr; ///< the Div or Mul giving the result
  mlir::Value numerator;
  mlir::Operation *variance = nullptr; ///< the ReduceMean
  double epsilon = 0;
  llvm::SmallVector<mlir::Operation *, 6> ops; ///< every op matched
};

/// Matches `op` as n / Sqrt(v + eps), n * Reciprocal(Sqrt(v + eps)) or
/// n * (1 / Sqrt(v + eps)), where v is a keepdims ReduceMean over trailing
/// axes and every op between has a single use.
std::optional<NormalizeByStd> matchNormalizeByStd(mlir::Operation *op);

/// The square of `x` (Pow(x, 2) or Mul(x, x)), when `sq` is one.
bool isSquareOf(mlir::Value sq, mlir::Value x);

/// After a normalization `y` of dims `normDims`: the optional `* scale` and
/// (when `withBias`) `+ bias` that follow with single uses.
struct AffineTail {
  mlir::Operation *last = nullptr; ///< the op whose result is replaced
  mlir::Value scale, bias;
  llvm::SmallVector<mlir::Operation *, 2> ops;
};
AffineTail matchAffineTail(mlir::Operation *normOp,
                           llvm::ArrayRef<int64_t> normDims, bool withBias);

/// A constant of ones with `dims` and `like`'s element type, for a norm
/// without a scale.
mlir::Value onesLike(mlir::PatternRewriter &rewriter, mlir::Location loc,
                     llvm::ArrayRef<int64_t> dims, mlir::Type elementType);

/// Where and with what a fused norm replaces the matched ops: the affine
/// tail after `n` (which normalizes `x` over its dims from `axis` on), a
/// location naming every matched op (`leading`, then `n`'s and the
/// tail's), and the scale (ones when the model has none).
struct NormReplacement {
  AffineTail tail;
  mlir::Location loc;
  mlir::Value scale;
};

/// Matches the tail and sets the rewriter's insertion point before its last
/// op, where the fused norm goes.
NormReplacement
prepareNormReplacement(mlir::PatternRewriter &rewriter, mlir::Value x,
                       int64_t axis, const NormalizeByStd &n,
                       llvm::ArrayRef<mlir::Operation *> leading,
                       bool withBias);

/// The pattern of both norm fusions, rooted at the Div or Mul that
/// normalizes: it matches NormalizeByStd whose variance is the mean of the
/// numerator's square, lets `matchInput` find the normalized value, requires
/// the reduction over trailing axes, and replaces the matched ops and their
/// affine tail by `createNorm`'s op.
class NormFusionPattern : public mlir::RewritePattern {
public:
  /// Tried on the ops named `rootName` (a normalization by std ends in a
  /// Div or a Mul: see RootedAt).
  NormFusionPattern(llvm::StringRef rootName, mlir::MLIRContext *ctx)
      : RewritePattern(rootName, /*benefit=*/1, ctx) {}

  mlir::LogicalResult
  matchAndRewrite(mlir::Operation *op,
                  mlir::PatternRewriter &rewriter) const final;

protected:
  /// Whether the norm takes a bias: the `+ bias` of its affine tail.
  virtual bool withBias() const = 0;
  /// The value that `n` (rooted at `op`, reducing `axes`) normalizes, when
  /// the ops before it are this norm's; null otherwise. Appends the ops the
  /// fused op also replaces to `leading`.
  virtual mlir::Value
  matchInput(mlir::Operation *op, const NormalizeByStd &n,
             llvm::ArrayRef<int64_t> axes,
             llvm::SmallVectorImpl<mlir::Operation *> &leading) const = 0;
  /// The fused norm of `x` over its dims from `axis` on, created at the
  /// rewriter's insertion point with `r`'s location and scale.
  virtual mlir::Value createNorm(mlir::PatternRewriter &rewriter,
                                 const NormReplacement &r, mlir::Type type,
                                 mlir::Value x, int64_t axis,
                                 double epsilon) const = 0;
};

/// `Pattern` (constructed from a root op name) tried on the ops `Root` only.
template <class Pattern, class Root> struct RootedAt : Pattern {
  explicit RootedAt(mlir::MLIRContext *ctx)
      : Pattern(Root::getOperationName(), ctx) {}
};

/// Runs the rewrite patterns `Patterns` greedily on `op` (a fusion pass's
/// whole work).
template <class... Patterns>
mlir::LogicalResult applyFusionPatterns(mlir::Operation *op) {
  mlir::RewritePatternSet patterns(op->getContext());
  patterns.add<Patterns...>(op->getContext());
  return mlir::applyPatternsAndFoldGreedily(op, std::move(patterns));
}

/// A fusion pass whose whole work is applying `Patterns` to the module;
/// `Base` is its ODS-generated base class.
template <class Base, class... Patterns> struct FusionPass : Base {
  void runOnOperation() override {
    if (mlir::failed(applyFusionPatterns<Patterns...>(this->getOperation())))
      this->signalPassFailure();
  }
};

} // namespace tpc::fusion

#endif // TPC_PASSES_FUSION_MATCH_H
