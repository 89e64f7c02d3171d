//===- GroupedProjections.cpp - Splitting a grouped fused projection ------===//
//
// A grouped fused projection (Falcon's query_key_value in the new decoder
// layout) computes, per kv group, its q heads, its k and its v in one
// MatMul, reshaped to [..., groups, slots, head_dim] and cut on the slots
// axis. The analysis shards it fused when tp divides the groups, or when
// tp is a multiple of the groups and divides each group's q heads (k and v
// then held whole). Otherwise no one-axis split of the fused output gives
// every rank whole heads, yet the q heads together may still divide evenly:
// 2 groups of 4 q heads at tp 8. This rewrite gives each cut of the slots
// its own MatMul over a view of the weight's columns, so that q is split
// by heads like any q projection and k and v, with fewer groups than ranks,
// are replicated by the kv-heads policy, as for separate projections.
//
//===----------------------------------------------------------------------===//
#include "passes/ShardingMaterialize.h"

#include "compiler/Dialect/ONNX/IR/ValueUtils.h"
#include "compiler/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace tpc {
namespace {

RankedTensorType rankedOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// A 1-D or 2-D weight operand the rewrite can take columns of: an
/// onnx.Weight that is not a view yet, or a dense constant.
bool isColumnSource(Value v, int64_t rank) {
  if (rankedOf(v).getRank() != rank)
    return false;
  if (auto w = v.getDefiningOp<onnx::WeightOp>())
    return !w->hasAttr(tp::kRangesAttr);
  if (auto c = v.getDefiningOp<onnx::ConstantOp>())
    return isa<DenseElementsAttr>(c.getValue());
  return false;
}

/// The columns [start, size) pairs of `v`'s last axis, as a new weight or
/// constant: a view of the same bytes for onnx.Weight.
Value takeColumns(OpBuilder &b, Value v, ArrayRef<int64_t> ranges) {
  RankedTensorType full = rankedOf(v);
  int64_t axis = full.getRank() - 1, n = 0;
  for (size_t k = 1; k < ranges.size(); k += 2)
    n += ranges[k];
  SmallVector<int64_t> shape(full.getShape());
  shape[axis] = n;
  auto type = RankedTensorType::get(shape, full.getElementType());
  if (auto w = v.getDefiningOp<onnx::WeightOp>()) {
    auto view = b.create<onnx::WeightOp>(w.getLoc(), type, w.getNameAttr(),
                                         w.getFileAttr(), w.getOffsetAttr(),
                                         w.getLengthAttr());
    for (NamedAttribute a : w->getDiscardableAttrs())
      view->setAttr(a.getName(), a.getValue());
    view->setAttr(tp::kSourceShapeAttr,
                  b.getDenseI64ArrayAttr(full.getShape()));
    view->setAttr(tp::kAxisAttr, b.getI64IntegerAttr(axis));
    view->setAttr(tp::kRangesAttr, b.getDenseI64ArrayAttr(ranges));
    return view.getResult();
  }
  auto c = v.getDefiningOp<onnx::ConstantOp>();
  auto dense = cast<DenseElementsAttr>(c.getValue());
  if (dense.isSplat())
    return b.create<onnx::ConstantOp>(c.getLoc(), type, dense.resizeSplat(type))
        .getResult();
  SmallVector<Attribute> all(dense.getValues<Attribute>());
  int64_t cols = full.getShape().back(), rows = full.getNumElements() / cols;
  SmallVector<Attribute> taken;
  taken.reserve(rows * n);
  for (int64_t r = 0; r < rows; ++r)
    for (size_t k = 0; k < ranges.size(); k += 2)
      for (int64_t j = 0; j < ranges[k + 1]; ++j)
        taken.push_back(all[r * cols + ranges[k] + j]);
  return b.create<onnx::ConstantOp>(c.getLoc(), type,
                                    DenseElementsAttr::get(type, taken))
      .getResult();
}

/// One grouped projection to split: the MatMul, its bias add (or null),
/// the reshape to [..., groups, slots, dim] and the cuts of the slots.
struct Grouped {
  onnx::MatMulOp matmul;
  onnx::AddOp bias;
  unsigned biasOperand = 0;
  onnx::ReshapeOp reshape;
  SmallVector<std::pair<Operation *, std::pair<int64_t, int64_t>>> cuts;
};

std::optional<Grouped> matchGrouped(onnx::MatMulOp mm, int64_t tp) {
  if (!isWeightMatMul(mm) || !isColumnSource(mm.getB(), 2))
    return std::nullopt;
  Grouped g;
  g.matmul = mm;
  Value v = mm.getResult();
  int64_t n = rankedOf(v).getShape().back();
  if (!v.hasOneUse())
    return std::nullopt;
  if (auto add = dyn_cast<onnx::AddOp>(*v.getUsers().begin())) {
    unsigned other = add.getOperand(0) == v ? 1 : 0;
    Value bias = add->getOperand(other);
    if (!isColumnSource(bias, 1) || rankedOf(bias).getDimSize(0) != n ||
        add.getType() != rankedOf(v))
      return std::nullopt;
    g.bias = add;
    g.biasOperand = other;
    v = add.getResult();
    if (!v.hasOneUse())
      return std::nullopt;
  }
  g.reshape = dyn_cast<onnx::ReshapeOp>(*v.getUsers().begin());
  if (!g.reshape)
    return std::nullopt;
  ArrayRef<int64_t> in = rankedOf(v).getShape();
  ArrayRef<int64_t> out = g.reshape.getType().getShape();
  if (out.size() != in.size() + 2 || out.drop_back(3) != in.drop_back())
    return std::nullopt;
  int64_t groups = out[out.size() - 3], slots = out[out.size() - 2];
  int64_t slotAxis = int64_t(out.size()) - 2;
  // Fewer groups than ranks, tp a multiple of them: the only case where the
  // fused layout keeps the groups whole on every rank.
  if (groups < 2 || groups % tp == 0 || tp % groups != 0)
    return std::nullopt;
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  for (Operation *user : g.reshape->getUsers()) {
    if (user->getOperand(0) != g.reshape.getResult())
      return std::nullopt;
    if (auto sl = dyn_cast<onnx::SliceOp>(user))
      if (sl.getAxes().size() != 1)
        return std::nullopt;
    if (!isa<onnx::SliceOp, onnx::GatherOp>(user))
      return std::nullopt;
    std::optional<std::pair<int64_t, int64_t>> r = cutRange(user, slotAxis);
    if (!r || r->first < 0 || r->first >= r->second)
      return std::nullopt;
    g.cuts.push_back({user, *r});
    ranges.push_back(*r);
  }
  llvm::sort(ranges);
  ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
  int64_t at = 0;
  bool blocked = false;
  for (auto [start, end] : ranges) {
    if (start != at)
      return std::nullopt;
    at = end;
    int64_t heads = (end - start) * groups;
    // Each cut must shard unfused: split by whole heads, or held whole by
    // every rank (fewer heads than ranks). One that the fused layout
    // cannot split is why the rewrite is worth making.
    if (heads % tp != 0 && tp % heads != 0)
      return std::nullopt;
    blocked |= heads % tp == 0 && (end - start) % tp != 0;
  }
  if (ranges.size() < 2 || at != slots || !blocked)
    return std::nullopt;
  return g;
}

void splitGrouped(Grouped &g) {
  ArrayRef<int64_t> out = g.reshape.getType().getShape();
  int64_t groups = out[out.size() - 3], slots = out[out.size() - 2],
          dim = out.back();
  std::string node = nodeNameOf(g.matmul.getLoc());
  for (auto &[cut, range] : g.cuts) {
    auto [start, end] = range;
    OpBuilder b(cut);
    // Columns of group k's slots [start, end), adjacent ones merged.
    SmallVector<int64_t> cols;
    for (int64_t k = 0; k < groups; ++k) {
      int64_t from = (k * slots + start) * dim, size = (end - start) * dim;
      if (!cols.empty() && cols[cols.size() - 2] + cols.back() == from)
        cols.back() += size;
      else
        cols.append({from, size});
    }
    std::string name = node + "[slots " + std::to_string(start) + ":" +
                       std::to_string(end) + "]";
    Location loc = NameLoc::get(b.getStringAttr(name), g.matmul.getLoc());
    Value w = takeColumns(b, g.matmul.getB(), cols);
    SmallVector<int64_t> shape(rankedOf(g.matmul.getResult()).getShape());
    shape.back() = groups * (end - start) * dim;
    auto type = RankedTensorType::get(
        shape, rankedOf(g.matmul.getResult()).getElementType());
    Value v = b.create<onnx::MatMulOp>(loc, type, g.matmul.getA(), w);
    if (g.bias) {
      Value bias = takeColumns(b, g.bias->getOperand(g.biasOperand), cols);
      Value lhs = g.biasOperand == 1 ? v : bias;
      Value rhs = g.biasOperand == 1 ? bias : v;
      v = b.create<onnx::AddOp>(g.bias.getLoc(), type, lhs, rhs);
    }
    // Straight to the shape the cut's single reshape wants (q heads merged
    // across groups), else to the cut's own shape.
    Operation *replaced = cut;
    if (cut->hasOneUse())
      if (auto next = dyn_cast<onnx::ReshapeOp>(*cut->getUsers().begin()))
        replaced = next;
    auto reshaped = b.create<onnx::ReshapeOp>(
        g.reshape.getLoc(), replaced->getResult(0).getType(), v);
    replaced->getResult(0).replaceAllUsesWith(reshaped.getResult());
    if (replaced != cut)
      replaced->erase();
    cut->erase();
  }
  g.reshape->erase();
  SmallVector<Operation *> sources{g.matmul.getB().getDefiningOp()};
  if (g.bias) {
    sources.push_back(g.bias->getOperand(g.biasOperand).getDefiningOp());
    g.bias->erase();
  }
  g.matmul->erase();
  for (Operation *src : sources)
    if (src->use_empty())
      src->erase();
}

} // namespace

bool groupedSplitApplies(Operation *reshape, int64_t tp) {
  if (!isa<onnx::ReshapeOp>(reshape))
    return false;
  Value in = reshape->getOperand(0);
  if (auto add = in.getDefiningOp<onnx::AddOp>()) {
    // The bias add: its MatMul operand is the one matchGrouped starts at.
    for (Value operand : add->getOperands())
      if (auto mm = operand.getDefiningOp<onnx::MatMulOp>())
        if (std::optional<Grouped> g = matchGrouped(mm, tp))
          return g->reshape == reshape;
    return false;
  }
  if (auto mm = in.getDefiningOp<onnx::MatMulOp>())
    if (std::optional<Grouped> g = matchGrouped(mm, tp))
      return g->reshape == reshape;
  return false;
}

int64_t splitGroupedProjections(func::FuncOp func, int64_t tp) {
  SmallVector<Grouped> found;
  func.walk([&](onnx::MatMulOp mm) {
    if (std::optional<Grouped> g = matchGrouped(mm, tp))
      found.push_back(std::move(*g));
  });
  for (Grouped &g : found)
    splitGrouped(g);
  return int64_t(found.size());
}

} // namespace tpc
