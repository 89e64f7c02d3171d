//===- ShardingRules.cpp - The sharding rules of the onnx ops -------------===//
//
// Each onnx op the importer emits states how shardings flow through it, as
// an external model of ShardingRuleOpInterface attached when the onnx
// dialect loads. The families share the analysis' rules (elementwise, axis
// ops, reshapes, slices); what is particular to one op is written here.
// Ops that run on whole tensors say so with WholeRule. The KV cache ops of
// the tpc dialect get theirs when that dialect loads. The fused ops (the
// tpc dialect's SwiGLU, AddNormalization, MatMulBias and MatMulNBits, and
// onnx's RMSNormalization and Attention, which the importer expands) exist
// only after partitioning and have no rule: a sharding pass never sees them,
// and if one did, the analysis would refuse them rather than guess.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/ONNX/IR/ValueUtils.h"
#include "compiler/Dialect/TPC/IR/TPCOps.h"
#include "passes/ShardingAnalysis.h"
#include "passes/ShardingRuleInterface.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

#include "passes/ShardingRuleInterface.cpp.inc"

namespace tpc {
namespace {

template <typename Model, typename OpT>
struct Rule : ShardingRuleOpInterface::ExternalModel<Model, OpT> {};

/// Attaches `Model<Op>` to each op of `Ops`.
template <template <typename> class Model, typename... Ops>
void attach(MLIRContext *ctx) {
  (Ops::template attachInterface<Model<Ops>>(*ctx), ...);
}

/// Weights and constants are replicated: the MatMuls and Gathers reading
/// them choose how to cut them.
template <typename OpT> struct SourceRule : Rule<SourceRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    for (Value r : op->getResults())
      a.set(r, Sharding::replicated());
    return success();
  }
};

/// The rules that are one of the analysis' families, applied to the whole
/// op: `Model<OpT>` runs `visit` on it.
template <void (ShardingAnalysis::*visit)(Operation *)> struct VisitRule {
  template <typename OpT> struct Model : Rule<Model<OpT>, OpT> {
    LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
      (a.*visit)(op);
      return success();
    }
  };
};

/// Runs on whole tensors.
template <typename OpT>
using WholeRule = VisitRule<&ShardingAnalysis::replicate>::Model<OpT>;

template <typename OpT>
using ElementwiseRule =
    VisitRule<&ShardingAnalysis::visitElementwise>::Model<OpT>;

/// The rule of any op with the Elementwise trait, attached by trait rather
/// than by op class.
struct ElementwiseTraitRule
    : ShardingRuleOpInterface::FallbackModel<ElementwiseTraitRule> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    a.visitElementwise(op);
    return success();
  }
};

template <typename OpT> struct MatMulRule : Rule<MatMulRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    if (isWeightMatMul(op))
      return a.visitWeightMatMul(op);
    if (isa<onnx::MatMulOp>(op))
      a.visitActivationMatMul(op);
    else
      a.replicate(op);
    return success();
  }
};

template <typename OpT> struct ReshapeRule : Rule<ReshapeRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    return a.visitReshape(op);
  }
};

template <typename OpT>
struct TransposeRule : Rule<TransposeRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    a.visitTransposeLike(op, cast<OpT>(op).getPerm());
    return success();
  }
};

template <typename OpT>
using SplitRule = VisitRule<&ShardingAnalysis::visitSplit>::Model<OpT>;

template <typename OpT>
using SliceRule = VisitRule<&ShardingAnalysis::visitSlice>::Model<OpT>;

/// Broadcasting to a larger shape keeps a split of an axis it does not
/// widen, and a partial value partial.
template <typename OpT> struct ExpandRule : Rule<ExpandRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    auto e = cast<onnx::ExpandOp>(op);
    Sharding s = a.of(e.getInput());
    int64_t shift = e.getType().getRank() - e.getInput().getType().getRank();
    if (s.isSplit() && e.getInput().getType().getDimSize(s.axis) ==
                           e.getType().getDimSize(s.axis + shift)) {
      a.set(e.getResult(), s.onAxis(s.axis + shift),
            a.originsOf(e.getInput()));
      return success();
    }
    if (s.isPartial()) {
      a.set(e.getResult(), s);
      return success();
    }
    a.replicate(op);
    return success();
  }
};

template <typename OpT> struct SoftmaxRule : Rule<SoftmaxRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    auto sm = cast<OpT>(op);
    int64_t axis = positiveAxis(sm.getAxis(), sm.getType().getRank());
    a.visitAxisOp(op, {axis}, true, false);
    return success();
  }
};

template <typename OpT>
struct LayerNormRule : Rule<LayerNormRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    auto ln = cast<OpT>(op);
    int64_t rank = ln.getType().getRank();
    SmallVector<int64_t> axes;
    for (int64_t x = positiveAxis(ln.getAxis(), rank); x < rank; ++x)
      axes.push_back(x);
    a.visitAxisOp(op, axes, true, false);
    return success();
  }
};

/// Reductions over `axes`: independent along the others. Only a sum is
/// linear in a partial value.
template <typename OpT> struct ReduceRule : Rule<ReduceRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    auto r = cast<OpT>(op);
    int64_t rank = cast<RankedTensorType>(r.getData().getType()).getRank();
    SmallVector<int64_t> axes;
    for (int64_t x : r.getAxes())
      axes.push_back(positiveAxis(x, rank));
    if (axes.empty() && !r.getNoopWithEmptyAxes())
      for (int64_t x = 0; x < rank; ++x)
        axes.push_back(x);
    a.visitAxisOp(op, axes, r.getKeepdims(), isa<onnx::ReduceSumOp>(op));
    return success();
  }
};

/// A running sum is linear, and independent along the other axes.
template <typename OpT> struct CumSumRule : Rule<CumSumRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    auto cs = cast<onnx::CumSumOp>(op);
    Sharding s = a.of(cs.getInput());
    int64_t axis = positiveAxis(cs.getAxis(), cs.getType().getRank());
    if (s.isPartial() || (s.isSplit() && s.axis != axis))
      a.set(cs.getResult(), s, a.originsOf(cs.getInput()));
    else
      a.replicate(op);
    return success();
  }
};

/// TopK works on each line along its axis on its own: a split of another
/// axis passes to both results (the values and their indices along the
/// axis, which every rank holds whole). It is not linear, so a partial
/// value is summed first.
template <typename OpT> struct TopKRule : Rule<TopKRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    auto t = cast<onnx::TopKOp>(op);
    Sharding s = a.of(t.getX());
    int64_t axis = positiveAxis(t.getAxis(), t.getX().getType().getRank());
    if (!s.isSplit() || s.axis == axis) {
      a.replicate(op);
      return success();
    }
    for (Value r : op->getResults())
      a.set(r, s, a.originsOf(t.getX()));
    return success();
  }
};

template <typename OpT> struct GatherRule : Rule<GatherRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    auto g = cast<onnx::GatherOp>(op);
    int64_t tp = a.size();
    // Picking entries of an axis the split is not on keeps the split (the
    // indices' dims replace the gathered axis).
    Sharding s = a.of(g.getData());
    int64_t rank = g.getData().getType().getRank();
    int64_t axis = positiveAxis(g.getAxis(), rank);
    if (s.isSplit() && s.axis != axis && a.of(g.getIndices()).isReplicated()) {
      int64_t shift = g.getIndices().getType().getRank() - 1;
      a.set(g.getResult(), s.onAxis(s.axis < axis ? s.axis : s.axis + shift),
            a.originsOf(g.getData()));
      return success();
    }
    if (a.vocabParallelEmbedding && axis == 0 && rank == 2 &&
        s.isReplicated() && g.getData().getDefiningOp<onnx::WeightOp>() &&
        a.of(g.getIndices()).isReplicated()) {
      Sharding rows =
          Sharding::split(0, {g.getData().getType().getDimSize(0)}, tp);
      a.require(op, 0, rows);
      s = rows;
    }
    // Constant indices that pick one part of a fused projection: a part
    // every rank holds whole is whole; a split one (rank-1 indices) stays
    // split, and partitioning picks the rank's share.
    if (s.isSplit() && s.axis == axis) {
      auto range = cutRange(op, axis);
      int64_t start = 0;
      for (auto [i, part] : llvm::enumerate(s.parts)) {
        if (range && range->first == start && range->second == start + part) {
          if (s.isWholePart(i)) {
            a.set(g.getResult(), Sharding::replicated());
            return success();
          }
          if (g.getIndices().getType().getRank() == 1) {
            a.set(g.getResult(), Sharding::split(axis, {part}, tp),
                  a.originsOf(g.getData()));
            return success();
          }
        }
        start += part;
      }
    }
    // A lookup in a table split by rows (one part): each rank finds the
    // rows it holds and zeros for the others (partitioning masks the ids),
    // so the ranks' results sum to the lookup.
    if (s.isSplit() && s.axis == axis && s.parts.size() == 1 &&
        s.whole.empty() && a.of(g.getIndices()).isReplicated()) {
      a.set(g.getResult(), Sharding::partial());
      return success();
    }
    a.replicate(op);
    return success();
  }
};

/// Concatenating along an unsplit axis keeps one common split.
template <typename OpT> struct ConcatRule : Rule<ConcatRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    auto c = cast<onnx::ConcatOp>(op);
    int64_t axis = positiveAxis(c.getAxis(), c.getType().getRank());
    std::optional<Sharding> split;
    OpSet from;
    bool ok = true;
    for (Value v : c.getInputs()) {
      Sharding s = a.of(v);
      if (s.isPartial())
        ok = false;
      if (!s.isSplit())
        continue;
      if (s.axis == axis || (split && *split != s))
        ok = false;
      split = s;
      for (Operation *m : a.originsOf(v))
        from.insert(m);
    }
    if (!split || !ok) {
      a.replicate(op);
      return success();
    }
    a.requireAll(op, *split);
    a.set(c.getResult(), *split, from);
    return success();
  }
};

/// A scatter of partial updates into zeros (adding them, or writing them:
/// ONNX leaves duplicate targets undefined without a reduction) is linear
/// in the updates, so it stays partial: a mixture of experts scatters each
/// expert's row-parallel output back to its tokens and reduces once, after
/// the experts' sum.
template <typename OpT> struct ScatterRule : Rule<ScatterRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    auto sc = cast<OpT>(op);
    StringRef reduction = sc.getReduction();
    if (a.of(sc.getUpdates()).isPartial() &&
        a.of(sc.getIndices()).isReplicated() &&
        onnx::isZeroTensor(sc.getData()) &&
        (reduction == "add" || reduction == "none")) {
      a.require(op, 0, Sharding::replicated());
      a.require(op, 1, Sharding::replicated());
      a.set(sc.getResult(), Sharding::partial());
      return success();
    }
    a.replicate(op);
    return success();
  }
};

/// A KV cache write keeps the split of the new entries (kv heads): each
/// rank's cache holds its heads. The cache itself is a state of the
/// rank's local shape (partitioning makes a Shard of it a smaller state).
template <typename OpT>
struct CacheWriteRule : Rule<CacheWriteRule<OpT>, OpT> {
  LogicalResult propagateSharding(Operation *op, ShardingAnalysis &a) const {
    auto w = cast<ext::CacheWriteOp>(op);
    Sharding s = a.of(w.getUpdate());
    if (s.isSplit() && s.axis != w.getAxis() && s.parts.size() == 1 &&
        s.whole.empty()) {
      a.require(op, 0, s);
      a.require(op, 2, Sharding::replicated());
      a.set(w.getResult(), s, a.originsOf(w.getUpdate()));
      return success();
    }
    a.replicate(op);
    return success();
  }
};

} // namespace

void registerShardingRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, onnx::ONNXDialect *dialect) {
    using namespace onnx;
    attach<SourceRule, WeightOp, ConstantOp>(ctx);
    // Every op with the Elementwise trait (the unary ops) shards like its
    // operand, whatever it computes.
    for (RegisteredOperationName name : ctx->getRegisteredOperations())
      if (&name.getDialect() == dialect &&
          name.hasTrait<OpTrait::Elementwise>() &&
          !name.hasInterface<ShardingRuleOpInterface>())
        name.attachInterface<ElementwiseTraitRule>();
    attach<ElementwiseRule, AddOp, SubOp, MulOp, DivOp, PowOp, PReluOp,
           EqualOp, LessOp, GreaterOp, LessOrEqualOp, GreaterOrEqualOp, AndOp,
           OrOp, XorOp, ModOp, MaxOp, MinOp, SumOp, MeanOp, WhereOp,
           CastOp, BitCastOp, BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, BitShiftOp>(ctx);
    attach<MatMulRule, MatMulOp, GemmOp>(ctx);
    attach<ReshapeRule, ReshapeOp>(ctx);
    attach<TransposeRule, TransposeOp>(ctx);
    attach<ExpandRule, ExpandOp>(ctx);
    attach<SoftmaxRule, SoftmaxOp, LogSoftmaxOp>(ctx);
    attach<LayerNormRule, LayerNormalizationOp>(ctx);
    attach<ReduceRule, ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp,
           ReduceProdOp, ReduceL2Op, ReduceSumSquareOp>(ctx);
    attach<SplitRule, SplitOp>(ctx);
    attach<SliceRule, SliceOp>(ctx);
    attach<CumSumRule, CumSumOp>(ctx);
    attach<TopKRule, TopKOp>(ctx);
    attach<GatherRule, GatherOp>(ctx);
    attach<ConcatRule, ConcatOp>(ctx);
    // Index and shape ops, and those that move entries across every axis.
    attach<ScatterRule, ScatterNDOp, ScatterElementsOp>(ctx);
    attach<WholeRule, GatherElementsOp, GatherNDOp, TileOp, PadOp, TriluOp,
           ShapeOp, SizeOp, RangeOp,
           ConstantOfShapeOp, ArgMaxOp, ArgMinOp>(ctx);
  });
  // The KV cache ops; the fusion targets run after sharding and need none.
  registry.addExtension(+[](MLIRContext *ctx, ext::TPCDialect *) {
    attach<SourceRule, ext::KVStateOp>(ctx);
    attach<CacheWriteRule, ext::CacheWriteOp>(ctx);
  });
}

} // namespace tpc
