//===- SpmdPartition.cpp - One program per rank ---------------------------===//
#include "passes/Passes.h"
#include "passes/ShardingAnalysis.h"

#include "compiler/Dialect/ONNX/IR/KernelBridge.h"
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "compiler/Dialect/ONNX/IR/ValueUtils.h"
#include "compiler/Dialect/TPC/IR/TPCOps.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tpc {
#define GEN_PASS_DEF_SPMDPARTITIONPASS
#include "passes/Passes.h.inc"
} // namespace tpc

using namespace mlir;

namespace tpc {
namespace {

SmallVector<Sharding> annotated(Operation *op) {
  SmallVector<Sharding> out;
  auto arr = op->getAttrOfType<ArrayAttr>(tp::kShardingAttr);
  if (!arr)
    return out;
  for (Attribute a : arr)
    if (auto s = dyn_cast<tp::ShardingAttr>(a))
      out.push_back(Sharding::fromAttr(s));
  return out;
}

/// For a tp collective: what is wrong with its operand's sharding in `check`
/// or its result's annotated sharding `ann` ("" when nothing is). Nullopt
/// for other ops.
std::optional<StringRef> collectiveProblem(Operation *op,
                                           const ShardingAnalysis &check,
                                           ArrayRef<Sharding> ann) {
  if (op->getNumResults() != 1 || ann.size() != 1)
    return std::nullopt;
  const Sharding &out = ann[0];
  if (auto ar = dyn_cast<tp::AllReduceOp>(op)) {
    if (!check.of(ar.getInput()).isPartial() || !out.isReplicated())
      return "AllReduce must take a partial value and give a replicated one";
    return "";
  }
  if (auto ag = dyn_cast<tp::AllGatherOp>(op)) {
    Sharding in = check.of(ag.getInput());
    if (!in.isSplit() || in.axis != ag.getAxis() ||
        ArrayRef<int64_t>(in.sizes) != ag.getSizes() || !out.isReplicated())
      return "AllGather does not match the split of its operand";
    return "";
  }
  if (auto tpOp = dyn_cast<tp::ToPartialOp>(op)) {
    if (!check.of(tpOp.getInput()).isReplicated() || !out.isPartial())
      return "ToPartial must take a replicated value and give a partial one";
    return "";
  }
  if (auto sh = dyn_cast<tp::ShardOp>(op)) {
    if (!check.of(sh.getInput()).isReplicated() || !out.isSplit() ||
        out.axis != sh.getAxis() ||
        ArrayRef<int64_t>(out.sizes) != sh.getSizes())
      return "Shard must take a replicated value and give the split it names";
    return "";
  }
  return std::nullopt;
}

/// Checks every op's annotated shardings against the sharding rules, so a
/// program whose shardings disagree (a custom pass's mistake) is refused
/// before anything is partitioned.
LogicalResult verifyShardings(func::FuncOp func, int64_t tp) {
  ShardingHints hints;
  for (Operation &op : func.getBody().front())
    if (tp::roleOf(&op) == tp::Role::Replicated)
      hints.forced.insert(&op);
  ShardingAnalysis check(func, tp, OutputHeadPolicy::Column, hints);
  auto describe = [](Operation *op) {
    std::string node = nodeNameOf(op->getLoc());
    return "'" + op->getName().getStringRef().str() + "'" +
           (node.empty() ? "" : " (node '" + node + "')");
  };
  for (Operation &op : func.getBody().front()) {
    SmallVector<Sharding> ann = annotated(&op);
    if (op.getNumResults() && ann.size() != op.getNumResults())
      return op.emitError("sharding check: ")
             << describe(&op) << " has no tp.sharding for each result";
    for (const Sharding &s : ann)
      if (s.isSplit()) {
        int64_t total = 0;
        for (int64_t x : s.sizes)
          total += x;
        // Every rank holds its share of each part, and whole parts whole.
        int64_t parts = 0;
        for (auto [i, x] : llvm::enumerate(s.parts))
          parts += s.isWholePart(i) ? x * tp : x;
        bool wholeOk = llvm::all_of(s.whole, [&](int64_t i) {
          return i >= 0 && i < int64_t(s.parts.size());
        });
        if (int64_t(s.sizes.size()) != tp || total != parts || !wholeOk)
          return op.emitError("sharding check: ")
                 << describe(&op) << " has a split whose sizes do not "
                 << "cover its axis over " << tp << " ranks";
      }
    // A collective's one result is what it is annotated, once checked.
    if (std::optional<StringRef> problem = collectiveProblem(&op, check, ann)) {
      if (!problem->empty())
        return op.emitError("sharding check: ") << *problem;
      check.state[op.getResult(0)] = ann[0];
      continue;
    }
    check.want.clear();
    if (failed(check.visit(&op)))
      return failure();
    for (auto &[key, s] : check.want)
      if (key.first == &op)
        return op.emitError("sharding check: operand ")
               << key.second << " of " << describe(&op) << " is "
               << check.produced(op.getOperand(key.second)).str()
               << " but the op needs it " << s.str();
    for (auto [r, s] : llvm::zip(op.getResults(), ann)) {
      if (check.of(r) != s)
        return op.emitError("sharding check: ")
               << describe(&op) << " is annotated " << s.str()
               << " but its operands make it " << check.of(r).str();
      check.state[r] = s;
    }
  }
  return success();
}

/// `ranges` ([start, size] pairs) of a view made of the `view` ranges of a
/// source axis, as ranges of the source axis.
SmallVector<int64_t> composeRanges(ArrayRef<int64_t> view,
                                   ArrayRef<int64_t> ranges) {
  SmallVector<int64_t> out;
  for (size_t k = 0; k + 1 < ranges.size(); k += 2) {
    int64_t start = ranges[k], left = ranges[k + 1], at = 0;
    for (size_t v = 0; v + 1 < view.size() && left > 0; v += 2) {
      int64_t size = view[v + 1];
      if (start < at + size) {
        int64_t take = std::min(left, at + size - start);
        int64_t from = view[v] + (start - at);
        if (!out.empty() && out[out.size() - 2] + out.back() == from)
          out.back() += take;
        else
          out.append({from, take});
        start += take;
        left -= take;
      }
      at += size;
    }
  }
  return out;
}

RankedTensorType localType(Type t, const Sharding &s, int64_t rank) {
  auto rt = cast<RankedTensorType>(t);
  if (!s.isSplit())
    return rt;
  SmallVector<int64_t> shape(rt.getShape());
  shape[s.axis] = s.sizes[rank];
  return RankedTensorType::get(shape, rt.getElementType());
}

/// The bytes of rank `rank`'s block of a constant.
DenseElementsAttr shardConstant(DenseElementsAttr value, const Sharding &s,
                                int64_t rank, int64_t tp,
                                RankedTensorType localT) {
  std::optional<std::vector<uint8_t>> bytes = onnx::elementsBytes(value);
  if (!bytes)
    return nullptr;
  auto type = cast<RankedTensorType>(value.getType());
  int64_t elem = onnx::elementBytes(type.getElementType());
  int64_t outer = 1, inner = elem;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d < s.axis)
      outer *= type.getDimSize(d);
    else if (d > s.axis)
      inner *= type.getDimSize(d);
  }
  std::vector<uint8_t> out;
  for (int64_t o = 0; o < outer; ++o)
    for (auto [start, size] : rankRanges(s, rank, tp)) {
      const uint8_t *from =
          bytes->data() + (o * type.getDimSize(s.axis) + start) * inner;
      out.insert(out.end(), from, from + size * inner);
    }
  return onnx::elementsFromBytes(localT, out);
}

struct SpmdPartitionPass : impl::SpmdPartitionPassBase<SpmdPartitionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto sizeAttr = module->getAttrOfType<IntegerAttr>(tp::kSizeAttr);
    func::FuncOp main = module.lookupSymbol<func::FuncOp>("main");
    if (!sizeAttr || !main) {
      module.emitError("tpc-spmd-partition needs a sharded @main (run a "
                       "sharding pass first)");
      return signalPassFailure();
    }
    int64_t tp = sizeAttr.getInt();
    if (failed(verifyShardings(main, tp)))
      return signalPassFailure();
    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(main);
    for (int64_t r = 0; r < tp; ++r) {
      auto clone = cast<func::FuncOp>(b.clone(*main));
      clone.setSymName("rank" + std::to_string(r));
      clone->setAttr(tp::kRankAttr, b.getI64IntegerAttr(r));
      if (failed(localize(clone, r, tp)))
        return signalPassFailure();
      b.setInsertionPointAfter(clone);
    }
    main.erase();
    if (failed(verify(module)))
      return signalPassFailure();
  }

  LogicalResult localize(func::FuncOp func, int64_t rank, int64_t tp) {
    MLIRContext *ctx = func.getContext();
    // Lowering a tp.Shard of a weight leaves a whole-looking weight slice:
    // read the shardings of what Slices and Gathers cut before that.
    llvm::DenseMap<Operation *, Sharding> cutInputs;
    func.walk([&](Operation *op) {
      if (isa<onnx::SliceOp, onnx::GatherOp>(op))
        cutInputs[op] = shardingOf(op->getOperand(0));
    });
    for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
      SmallVector<Sharding> ann = annotated(&op);
      for (auto [r, s] : llvm::zip(op.getResults(), ann))
        r.setType(localType(r.getType(), s, rank));
      if (auto split = dyn_cast<onnx::SplitOp>(op)) {
        SmallVector<int64_t> sizes;
        for (Value r : split.getResults())
          sizes.push_back(cast<RankedTensorType>(r.getType())
                              .getDimSize(positiveAxis(
                                  split.getAxis(),
                                  split.getInput().getType().getRank())));
        split.setSplitAttr(DenseI64ArrayAttr::get(ctx, sizes));
      }
      if (auto sl = dyn_cast<onnx::SliceOp>(op))
        localizeSlice(sl, cutInputs.lookup(sl), rank, tp);
      if (auto g = dyn_cast<onnx::GatherOp>(op))
        localizeGather(g, cutInputs.lookup(g), rank, tp);
      if (auto sh = dyn_cast<tp::ShardOp>(op)) {
        if (failed(lowerShard(sh, ann[0], rank, tp)))
          return failure();
        continue;
      }
      if (auto tpOp = dyn_cast<tp::ToPartialOp>(op)) {
        lowerToPartial(tpOp, rank);
        continue;
      }
      if (auto ag = dyn_cast<tp::AllGatherOp>(op))
        if (ag.getParts().size() > 1)
          return ag.emitError("gathering a value split into several parts "
                              "(a fused projection) is not supported");
    }
    // Whole weights that every use now reads as slices must not reach the
    // rank's weight file.
    Block &block = func.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isOpTriviallyDead(&op) || (isa<ext::KVStateOp>(op) && op.use_empty()))
        op.erase();
    return success();
  }

  /// Where one part of a split axis lies: globally, and in rank r's block
  /// (which holds its share of every part, whole parts whole).
  struct PartPlace {
    int64_t global = 0, size = 0, local = 0, share = 0;
    bool whole = false;
  };
  static SmallVector<PartPlace> partPlaces(const Sharding &s, int64_t rank,
                                           int64_t tp) {
    SmallVector<PartPlace> out;
    int64_t global = 0, local = 0;
    for (auto [i, part] : llvm::enumerate(s.parts)) {
      PartPlace p;
      p.whole = s.isWholePart(i);
      p.global = global;
      p.size = part;
      p.local = local;
      p.share = p.whole ? part : evenShare(part, tp, rank);
      out.push_back(p);
      global += part;
      local += p.share;
    }
    return out;
  }
  /// The extent of the split axis before partitioning.
  static int64_t globalExtent(const Sharding &s) {
    int64_t n = 0;
    for (int64_t part : s.parts)
      n += part;
    return n;
  }

  /// A Slice that takes one part of a split fused projection takes the
  /// rank's share of that part: its offset among the rank's shares of the
  /// parts before it.
  static void localizeSlice(onnx::SliceOp sl, const Sharding &in,
                            int64_t rank, int64_t tp) {
    if (!in.isSplit())
      return;
    int64_t rankOf = sl.getData().getType().getRank();
    SmallVector<int64_t> starts(sl.getStarts()), ends(sl.getEnds());
    int64_t dim = globalExtent(in);
    for (auto [j, a] : llvm::enumerate(sl.getAxes())) {
      if (positiveAxis(a, rankOf) != in.axis)
        continue;
      int64_t start = starts[j] < 0 ? starts[j] + dim : starts[j];
      for (const PartPlace &p : partPlaces(in, rank, tp))
        if (start == p.global) {
          starts[j] = p.local;
          ends[j] = p.local + p.share;
          break;
        }
    }
    sl.setStartsAttr(DenseI64ArrayAttr::get(sl.getContext(), starts));
    sl.setEndsAttr(DenseI64ArrayAttr::get(sl.getContext(), ends));
  }

  /// A Gather of constant indices that picks one part of a split fused
  /// projection picks it from the rank's block: the part's local offset,
  /// and only the rank's share of a split part.
  static void localizeGather(onnx::GatherOp g, const Sharding &in,
                             int64_t rank, int64_t tp) {
    int64_t axis = positiveAxis(g.getAxis(), g.getData().getType().getRank());
    if (!in.isSplit() || in.axis != axis)
      return;
    if (shardingOf(g.getResult()).isPartial())
      return maskLookup(g, in, rank);
    // The indices are global: the type's extent is the rank's block now.
    int64_t dim = globalExtent(in);
    auto c = g.getIndices().getDefiningOp<onnx::ConstantOp>();
    auto dense = c ? dyn_cast<DenseIntElementsAttr>(c.getValue()) : nullptr;
    if (!dense || dense.getNumElements() == 0)
      return;
    int64_t first = (*dense.getValues<APInt>().begin()).getSExtValue();
    if (first < 0)
      first += dim;
    for (const PartPlace &p : partPlaces(in, rank, tp)) {
      if (first < p.global || first >= p.global + p.size)
        continue;
      SmallVector<int64_t> idx;
      if (p.whole)
        for (const APInt &x : dense.getValues<APInt>()) {
          int64_t v = x.getSExtValue();
          idx.push_back((v < 0 ? v + dim : v) - p.global + p.local);
        }
      else
        for (int64_t k = 0; k < p.share; ++k)
          idx.push_back(p.local + k);
      auto it = cast<RankedTensorType>(g.getIndices().getType());
      auto newT = it.getRank() == 0
                      ? it
                      : RankedTensorType::get({int64_t(idx.size())},
                                              it.getElementType());
      SmallVector<APInt> vals;
      for (int64_t v : idx)
        vals.push_back(APInt(it.getElementTypeBitWidth(), v, true));
      OpBuilder b(g);
      auto nc = b.create<onnx::ConstantOp>(
          c.getLoc(), newT, DenseElementsAttr::get(newT, vals));
      nc->setAttr(tp::kShardingAttr, c->getAttr(tp::kShardingAttr));
      g.getIndicesMutable().assign(nc.getResult());
      return;
    }
  }

  /// A lookup in a table split by rows (vocab-parallel embedding): rank r
  /// holds rows [lo, hi); it looks up ids in that range at id - lo and
  /// gives zeros for the others, so the ranks' results sum to the lookup.
  /// Negative ids count from the end, as ONNX defines them.
  static void maskLookup(onnx::GatherOp g, const Sharding &in, int64_t rank) {
    int64_t lo = 0;
    for (int64_t r = 0; r < rank; ++r)
      lo += in.sizes[r];
    int64_t hi = lo + in.sizes[rank], rows = 0;
    for (int64_t x : in.sizes)
      rows += x;
    OpBuilder b(g);
    Location loc = g.getLoc();
    Attribute repl = ArrayAttr::get(
        g.getContext(), {Sharding::replicated().toAttr(g.getContext())});
    auto mark = [&](Operation *op) {
      op->setAttr(tp::kShardingAttr, repl);
      return op->getResult(0);
    };
    if (in.sizes[rank] == 0) {
      // No rows here (a table smaller than tp): look up in one row of
      // zeros, which the mask below zeroes anyway, so that every local id
      // is in range.
      auto dt = cast<RankedTensorType>(g.getData().getType());
      SmallVector<int64_t> shape(dt.getShape());
      shape[positiveAxis(g.getAxis(), dt.getRank())] = 1;
      auto t = RankedTensorType::get(shape, dt.getElementType());
      g.getDataMutable().assign(mark(b.create<onnx::ConstantOp>(
          loc, t, DenseElementsAttr::get(t, b.getZeroAttr(dt.getElementType())))));
    }
    Value ids = g.getIndices();
    auto idsT = cast<RankedTensorType>(ids.getType());
    auto scalar = [&](int64_t v) {
      auto t = RankedTensorType::get({}, idsT.getElementType());
      return mark(b.create<onnx::ConstantOp>(
          loc, t,
          DenseElementsAttr::get(
              t, APInt(idsT.getElementTypeBitWidth(), v, true))));
    };
    Value zero = scalar(0);
    Value wrapped = mark(b.create<onnx::AddOp>(loc, ids, scalar(rows)));
    Value negative = mark(b.create<onnx::LessOp>(loc, ids, zero));
    ids = mark(b.create<onnx::WhereOp>(loc, negative, wrapped, ids));
    Value low = scalar(lo);
    Value mine = mark(b.create<onnx::AndOp>(
        loc, mark(b.create<onnx::GreaterOrEqualOp>(loc, ids, low)),
        mark(b.create<onnx::LessOp>(loc, ids, scalar(hi)))));
    Value local = mark(b.create<onnx::WhereOp>(
        loc, mine, mark(b.create<onnx::SubOp>(loc, ids, low)), zero));
    g.getIndicesMutable().assign(local);
    // Zero the rows of ids another rank holds: the mask broadcast over the
    // looked-up row.
    b.setInsertionPointAfter(g);
    auto outT = cast<RankedTensorType>(g.getType());
    SmallVector<int64_t> maskShape(idsT.getShape());
    while (maskShape.size() < size_t(outT.getRank()))
      maskShape.push_back(1);
    Value mask = mark(b.create<onnx::ReshapeOp>(
        loc, RankedTensorType::get(maskShape, b.getI1Type()), mine));
    auto zt = RankedTensorType::get({}, outT.getElementType());
    Value fzero = mark(b.create<onnx::ConstantOp>(
        loc, zt, DenseElementsAttr::get(zt, b.getZeroAttr(zt.getElementType()))));
    auto masked = b.create<onnx::WhereOp>(loc, mask, g.getResult(), fzero);
    masked->setAttr(tp::kShardingAttr, g->getAttr(tp::kShardingAttr));
    g.getResult().replaceAllUsesExcept(masked.getResult(), masked);
  }

  /// The sharding annotated on the op that defines `v`.
  static Sharding shardingOf(Value v) {
    auto res = dyn_cast<OpResult>(v);
    if (!res)
      return Sharding::replicated();
    SmallVector<Sharding> ann = annotated(res.getOwner());
    return res.getResultNumber() < ann.size() ? ann[res.getResultNumber()]
                                              : Sharding::replicated();
  }

  /// Rank 0 adds a ToPartial value as it is; the other ranks add nothing,
  /// and any other use reads zeros.
  static void lowerToPartial(tp::ToPartialOp tpOp, int64_t rank) {
    Value in = tpOp.getInput();
    if (rank == 0) {
      tpOp.getResult().replaceAllUsesWith(in);
      tpOp.erase();
      return;
    }
    for (OpOperand &use : llvm::make_early_inc_range(tpOp->getUses())) {
      Operation *user = use.getOwner();
      if (!isa<onnx::AddOp, onnx::SubOp>(user) ||
          (isa<onnx::SubOp>(user) && use.getOperandNumber() != 1))
        continue;
      Value other = user->getOperand(1 - use.getOperandNumber());
      if (other == tpOp.getResult() || other.getType() != user->getResult(0).getType())
        continue;
      user->getResult(0).replaceAllUsesWith(other);
      user->erase();
    }
    if (!tpOp->use_empty()) {
      OpBuilder b(tpOp);
      auto type = cast<RankedTensorType>(tpOp.getType());
      Attribute zero = b.getZeroAttr(type.getElementType());
      auto c = b.create<onnx::ConstantOp>(
          tpOp.getLoc(), type, DenseElementsAttr::get(type, zero));
      c->setAttr(tp::kShardingAttr, tpOp->getAttr(tp::kShardingAttr));
      tpOp.getResult().replaceAllUsesWith(c.getResult());
    }
    tpOp.erase();
  }

  /// A rank's block of a replicated value: a slice of the weight file for
  /// weights (also through a transpose), a smaller constant for constants,
  /// and Slice ops for activations.
  LogicalResult lowerShard(tp::ShardOp sh, const Sharding &s, int64_t rank,
                           int64_t tp) {
    OpBuilder b(sh);
    Value in = sh.getInput();
    RankedTensorType localT = cast<RankedTensorType>(sh.getType());
    Sharding weightSplit = s;
    onnx::TransposeOp transpose = in.getDefiningOp<onnx::TransposeOp>();
    if (transpose && transpose.getData().getDefiningOp<onnx::WeightOp>())
      weightSplit.axis = transpose.getPerm()[s.axis];
    else
      transpose = nullptr;
    Value src = transpose ? transpose.getData() : in;
    if (auto w = src.getDefiningOp<onnx::WeightOp>()) {
      RankedTensorType full = w.getType();
      SmallVector<int64_t> shape(full.getShape());
      SmallVector<int64_t> ranges;
      int64_t total = 0;
      for (auto [start, size] : rankRanges(weightSplit, rank, tp)) {
        ranges.push_back(start);
        ranges.push_back(size);
        total += size;
      }
      shape[weightSplit.axis] = total;
      // A weight that is already a view of its file's tensor (a cut of a
      // grouped projection): the rank's ranges are ranges of the view.
      auto view = w->getAttrOfType<DenseI64ArrayAttr>(tp::kRangesAttr);
      SmallVector<int64_t> sourceShape(full.getShape());
      if (view) {
        auto viewAxis = w->getAttrOfType<IntegerAttr>(tp::kAxisAttr);
        if (!viewAxis || viewAxis.getInt() != weightSplit.axis)
          return sh.emitError("cannot split weight '")
                 << w.getName() << "' on axis " << weightSplit.axis
                 << ": it is already a slice on another axis";
        ranges = composeRanges(view.asArrayRef(), ranges);
        ArrayRef<int64_t> src =
            w->getAttrOfType<DenseI64ArrayAttr>(tp::kSourceShapeAttr)
                .asArrayRef();
        sourceShape.assign(src.begin(), src.end());
      }
      auto slicedT = RankedTensorType::get(shape, full.getElementType());
      auto nw = b.create<onnx::WeightOp>(w.getLoc(), slicedT, w.getNameAttr(),
                                         w.getFileAttr(), w.getOffsetAttr(),
                                         w.getLengthAttr());
      // What the engine writer computes the bytes from (a repacked or
      // converted weight) stays with each rank's slice.
      for (StringRef keep : {"onnx.quantize", "onnx.source_type"})
        if (Attribute a = w->getAttr(keep))
          nw->setAttr(keep, a);
      nw->setAttr(tp::kSourceShapeAttr, b.getDenseI64ArrayAttr(sourceShape));
      nw->setAttr(tp::kAxisAttr, b.getI64IntegerAttr(weightSplit.axis));
      nw->setAttr(tp::kRangesAttr, b.getDenseI64ArrayAttr(ranges));
      nw->setAttr(tp::kShardingAttr,
                  b.getArrayAttr({Sharding::replicated().toAttr(b.getContext())}));
      Value v = nw.getResult();
      if (transpose) {
        auto t = b.create<onnx::TransposeOp>(transpose.getLoc(), localT, v,
                                             transpose.getPermAttr());
        t->setAttr(tp::kShardingAttr, sh->getAttr(tp::kShardingAttr));
        v = t.getResult();
      }
      sh.getResult().replaceAllUsesWith(v);
      sh.erase();
      return success();
    }
    if (auto st = in.getDefiningOp<ext::KVStateOp>()) {
      // A cache split by heads: the rank's state holds its heads only.
      if (s.parts.size() != 1)
        return sh.emitError("cannot split a KV cache into several parts");
      auto local =
          b.create<ext::KVStateOp>(st.getLoc(), localT, st.getNameAttr());
      sh.getResult().replaceAllUsesWith(local.getResult());
      sh.erase();
      return success();
    }
    if (auto c = in.getDefiningOp<onnx::ConstantOp>()) {
      auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
      DenseElementsAttr value =
          dense ? shardConstant(dense, s, rank, tp, localT) : nullptr;
      if (!value)
        return sh.emitError("cannot shard this constant");
      auto nc = b.create<onnx::ConstantOp>(c.getLoc(), localT, value);
      sh.getResult().replaceAllUsesWith(nc.getResult());
      sh.erase();
      return success();
    }
    // An activation: slice each of this rank's ranges, concatenated.
    SmallVector<Value> pieces;
    RankedTensorType full = cast<RankedTensorType>(in.getType());
    for (auto [start, size] : rankRanges(s, rank, tp)) {
      SmallVector<int64_t> shape(full.getShape());
      shape[s.axis] = size;
      auto pieceT = RankedTensorType::get(shape, full.getElementType());
      auto slice = b.create<onnx::SliceOp>(
          sh.getLoc(), pieceT, in, b.getDenseI64ArrayAttr({start}),
          b.getDenseI64ArrayAttr({start + size}),
          b.getDenseI64ArrayAttr({s.axis}), b.getDenseI64ArrayAttr({1}));
      pieces.push_back(slice.getResult());
    }
    Value v = pieces.front();
    if (pieces.size() > 1)
      v = b.create<onnx::ConcatOp>(sh.getLoc(), localT, pieces,
                                   b.getI64IntegerAttr(s.axis))
              .getResult();
    sh.getResult().replaceAllUsesWith(v);
    sh.erase();
    return success();
  }
};

} // namespace
} // namespace tpc
