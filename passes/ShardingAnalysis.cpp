//===- ShardingAnalysis.cpp - Sharding propagation rules ------------------===//
#include "passes/ShardingAnalysis.h"
#include "passes/ShardingMaterialize.h"
#include "passes/ShardingRuleInterface.h"
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/ONNX/IR/ValueUtils.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <optional>

using namespace mlir;

namespace tpc {
namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

} // namespace

onnx::WeightOp directWeight(Value b, bool &transposed) {
  transposed = false;
  // A sharded program reads its weights through tp.Shard.
  if (auto sh = b.getDefiningOp<tp::ShardOp>())
    b = sh.getInput();
  if (auto w = b.getDefiningOp<onnx::WeightOp>())
    return w;
  if (auto t = b.getDefiningOp<onnx::TransposeOp>()) {
    ArrayRef<int64_t> p = t.getPerm();
    int64_t n = p.size();
    bool lastTwo = n >= 2 && p[n - 1] == n - 2 && p[n - 2] == n - 1;
    for (int64_t i = 0; i + 2 < n; ++i)
      lastTwo &= p[i] == i;
    if (lastTwo)
      if (auto w = t.getData().getDefiningOp<onnx::WeightOp>()) {
        transposed = true;
        return w;
      }
  }
  return nullptr;
}

namespace {

/// Collects the weights of the expression `v` into `leaves`; false when it
/// reads anything but weights and constants through weight-expression ops.
bool collectWeightLeaves(Value v, SmallVectorImpl<onnx::WeightOp> &leaves,
                         int depth) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return false;
  if (auto w = dyn_cast<onnx::WeightOp>(def)) {
    leaves.push_back(w);
    return true;
  }
  if (isa<onnx::ConstantOp>(def))
    return true;
  if (!isWeightExpressionOp(def))
    return false;
  for (Value operand : def->getOperands())
    if (!collectWeightLeaves(operand, leaves, depth + 1))
      return false;
  return true;
}

} // namespace

bool isWeightExpressionOp(Operation *op) {
  if (isa<tp::ShardOp, onnx::CastOp, onnx::SubOp, onnx::MulOp, onnx::AddOp,
          onnx::DivOp, onnx::ReshapeOp, onnx::TransposeOp>(op))
    return true;
  // A Gather of constant indices: the block scales of a block-quantized
  // weight spread over their blocks.
  if (auto g = dyn_cast<onnx::GatherOp>(op))
    return isa_and_nonnull<onnx::ConstantOp>(g.getIndices().getDefiningOp());
  return false;
}

onnx::WeightOp weightOf(Value b) {
  bool transposed;
  if (onnx::WeightOp w = directWeight(b, transposed))
    return w;
  SmallVector<onnx::WeightOp> leaves;
  if (!collectWeightLeaves(b, leaves, 0) || leaves.empty())
    return nullptr;
  // The leaf with B's elements (the quantized tensor), else the largest.
  int64_t n = tensorType(b).getNumElements();
  onnx::WeightOp best = leaves.front();
  for (onnx::WeightOp w : leaves) {
    int64_t m = w.getType().getNumElements();
    if (m == n)
      return w;
    if (m > best.getType().getNumElements())
      best = w;
  }
  return best;
}

/// A 2-D constant of distinct values: a weight the importer folded (the
/// dequantization of a small quantized initializer).
static bool isFoldedWeight(Value b) {
  if (auto sh = b.getDefiningOp<tp::ShardOp>())
    b = sh.getInput();
  auto c = b.getDefiningOp<onnx::ConstantOp>();
  if (!c || tensorType(b).getRank() != 2)
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
  return dense && !dense.isSplat() && isa<FloatType>(dense.getElementType());
}

std::optional<bool> anyUserOf(Operation *from, size_t limit,
                              function_ref<bool(Operation *)> pred) {
  SmallVector<Operation *> work;
  for (Value r : from->getResults())
    for (Operation *user : r.getUsers())
      work.push_back(user);
  llvm::SmallPtrSet<Operation *, 32> seen;
  seen.insert(from);
  while (!work.empty()) {
    Operation *cur = work.pop_back_val();
    if (!seen.insert(cur).second)
      continue;
    if (seen.size() > limit)
      return std::nullopt;
    if (pred(cur))
      return true;
    for (Value r : cur->getResults())
      for (Operation *user : r.getUsers())
        work.push_back(user);
  }
  return false;
}

bool isWeightMatMul(Operation *op) {
  Value b;
  if (auto mm = dyn_cast<onnx::MatMulOp>(op)) {
    if (tensorType(mm.getB()).getRank() != 2)
      return false;
    b = mm.getB();
  } else if (auto g = dyn_cast<onnx::GemmOp>(op)) {
    if (g.getTransA())
      return false;
    b = g.getB();
  } else {
    return false;
  }
  return weightOf(b) || isFoldedWeight(b);
}

std::optional<std::pair<int64_t, int64_t>> cutRange(Operation *op,
                                                    int64_t axis) {
  if (auto g = dyn_cast<onnx::GatherOp>(op)) {
    int64_t rank = g.getData().getType().getRank();
    if (positiveAxis(g.getAxis(), rank) != axis)
      return std::nullopt;
    int64_t dim = g.getData().getType().getDimSize(axis);
    auto c = g.getIndices().getDefiningOp<onnx::ConstantOp>();
    auto dense = c ? dyn_cast<DenseIntElementsAttr>(c.getValue()) : nullptr;
    auto none = std::make_pair(int64_t(-1), int64_t(-1));
    if (!dense || g.getIndices().getType().getRank() > 1 ||
        dense.getNumElements() == 0)
      return none;
    SmallVector<int64_t> idx;
    for (const APInt &x : dense.getValues<APInt>()) {
      int64_t v = x.getSExtValue();
      idx.push_back(v < 0 ? v + dim : v);
    }
    for (size_t k = 1; k < idx.size(); ++k)
      if (idx[k] != idx[k - 1] + 1)
        return none;
    if (idx.front() < 0 || idx.back() >= dim)
      return none;
    return std::make_pair(idx.front(), idx.back() + 1);
  }
  auto sl = dyn_cast<onnx::SliceOp>(op);
  if (!sl)
    return std::make_pair(int64_t(-1), int64_t(-1));
  int64_t rank = sl.getData().getType().getRank();
  int64_t dim = sl.getData().getType().getDimSize(axis);
  for (auto [j, a] : llvm::enumerate(sl.getAxes())) {
    if (positiveAxis(a, rank) != axis)
      continue;
    if (sl.getSteps()[j] != 1)
      return std::make_pair(int64_t(-1), int64_t(-1));
    auto clamp = [&](int64_t x) {
      if (x < 0)
        x += dim;
      return std::clamp<int64_t>(x, 0, dim);
    };
    return std::make_pair(clamp(sl.getStarts()[j]), clamp(sl.getEnds()[j]));
  }
  return std::nullopt;
}

namespace {
/// The part sizes when every use of `v` is a Slice (or a Gather of
/// constant indices) of `axis` and together they cut it into two or more
/// contiguous parts: a fused projection cut by slices (Phi-3's qkv_proj and
/// gate_up_proj, Falcon's query_key_value).
std::optional<SmallVector<int64_t>> sliceParts(Value v, int64_t axis) {
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  for (Operation *user : v.getUsers()) {
    if (!isa<onnx::SliceOp, onnx::GatherOp>(user) || user->getOperand(0) != v)
      return std::nullopt;
    std::optional<std::pair<int64_t, int64_t>> r = cutRange(user, axis);
    if (!r || r->first < 0 || r->first >= r->second)
      return std::nullopt;
    ranges.push_back(*r);
  }
  llvm::sort(ranges);
  ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
  SmallVector<int64_t> parts;
  int64_t at = 0;
  for (auto [start, end] : ranges) {
    if (start != at)
      return std::nullopt;
    parts.push_back(end - start);
    at = end;
  }
  if (parts.size() < 2 || at != tensorType(v).getDimSize(axis))
    return std::nullopt;
  return parts;
}

/// Whether `op` computes each element of its result from the same element
/// of `v` (and broadcast operands) with `v`'s shape: bias adds, scalings,
/// casts, activations, and the arithmetic of a QuantizeLinear /
/// DequantizeLinear pair on the way to a projection's parts.
bool keepsLayout(Operation *op, Value v) {
  if (op->getNumResults() != 1 ||
      tensorType(op->getResult(0)).getShape() != tensorType(v).getShape())
    return false;
  return isa<onnx::AddOp, onnx::SubOp, onnx::MulOp, onnx::DivOp, onnx::MaxOp,
             onnx::MinOp, onnx::CastOp>(op) ||
         op->hasTrait<OpTrait::Elementwise>();
}

/// The heads a part of a fused projection holds: the part (through bias
/// adds and other layout-keeping ops) is reshaped from [..., heads * dim]
/// to [..., heads, dim]. 0 when no such reshape follows.
int64_t headsOfPart(Value v) {
  for (int depth = 0; depth < 16 && v.hasOneUse(); ++depth) {
    Operation *user = *v.getUsers().begin();
    if (auto r = dyn_cast<onnx::ReshapeOp>(user)) {
      ArrayRef<int64_t> in = tensorType(v).getShape();
      ArrayRef<int64_t> out = r.getType().getShape();
      if (out.size() == in.size() + 1 &&
          out[out.size() - 2] * out.back() == in.back())
        return out[out.size() - 2];
      return 0;
    }
    if (!keepsLayout(user, v))
      return 0;
    v = user->getResult(0);
  }
  return 0;
}

/// The parts of a fused projection and those every rank must hold whole:
/// the parts with fewer heads than ranks (GQA/MQA kv heads), when others
/// can still be split.
struct FusedParts {
  SmallVector<int64_t> parts;
  SmallVector<int64_t> whole;
};

FusedParts withWholeParts(SmallVector<int64_t> parts,
                          ArrayRef<int64_t> heads, int64_t tp) {
  FusedParts fp{std::move(parts), {}};
  for (auto [i, h] : llvm::enumerate(heads))
    if (h > 0 && h % tp != 0 && tp % h == 0)
      fp.whole.push_back(i);
  if (fp.whole.size() == fp.parts.size())
    fp.whole.clear();
  return fp;
}

/// The parts of a weight MatMul's output when it feeds (through bias adds)
/// a Split or Slices of its last axis (a fused QKV or gate|up projection),
/// or a reshape of the last axis into [slots, head_dim] whose slots Slices
/// cut (Falcon's multi-query query_key_value: heads + 2 slots).
FusedParts fusedOutputParts(Operation *mm, int64_t tp) {
  Value v = mm->getResult(0);
  int64_t last = tensorType(v).getRank() - 1;
  auto partsOfUsers = [&](Value x, int64_t axis)
      -> std::optional<std::pair<SmallVector<int64_t>, SmallVector<Value>>> {
    if (std::optional<SmallVector<int64_t>> parts = sliceParts(x, axis)) {
      // The slices in order of their start, one value per part.
      SmallVector<Value> values(parts->size());
      for (Operation *user : x.getUsers()) {
        auto r = cutRange(user, axis);
        int64_t at = 0;
        for (auto [i, p] : llvm::enumerate(*parts)) {
          if (r->first == at && !values[i])
            values[i] = user->getResult(0);
          at += p;
        }
      }
      return std::make_pair(*parts, values);
    }
    if (x.hasOneUse())
      if (auto split = dyn_cast<onnx::SplitOp>(*x.getUsers().begin()))
        if (positiveAxis(split.getAxis(), tensorType(x).getRank()) == axis)
          return std::make_pair(SmallVector<int64_t>(split.getSplit()),
                                SmallVector<Value>(split.getResults()));
    return std::nullopt;
  };
  for (int depth = 0; depth < 16; ++depth) {
    if (auto found = partsOfUsers(v, last)) {
      SmallVector<int64_t> heads;
      for (Value part : found->second)
        heads.push_back(part && part.hasOneUse() ? headsOfPart(part) : 0);
      return withWholeParts(found->first, heads, tp);
    }
    if (!v.hasOneUse())
      break;
    Operation *user = *v.getUsers().begin();
    // [..., slots * dim] -> [..., slots, dim] with the slots cut by Slices.
    if (auto r = dyn_cast<onnx::ReshapeOp>(user)) {
      ArrayRef<int64_t> in = tensorType(v).getShape();
      ArrayRef<int64_t> out = r.getType().getShape();
      if (out.size() == in.size() + 1 && out.drop_back(2) == in.drop_back() &&
          out[out.size() - 2] * out.back() == in.back())
        if (auto found = partsOfUsers(r.getResult(), out.size() - 2)) {
          SmallVector<int64_t> parts;
          for (int64_t slots : found->first)
            parts.push_back(slots * out.back());
          return withWholeParts(parts, found->first, tp);
        }
      // [..., groups * slots * dim] -> [..., groups, slots, dim] with the
      // slots of each group cut (Falcon's grouped query_key_value: per kv
      // group its q heads, k and v). With fewer groups than ranks, each rank
      // takes its share of every group's q heads and holds every k and v
      // whole, as for separate kv projections with kv heads < tp; with
      // groups that tp divides, the groups are split as one part.
      if (out.size() == in.size() + 2 && out.drop_back(3) == in.drop_back() &&
          out[out.size() - 3] * out[out.size() - 2] * out.back() ==
              in.back()) {
        int64_t groups = out[out.size() - 3], dim = out.back();
        if (groups % tp != 0 && tp % groups == 0)
          if (auto found = partsOfUsers(r.getResult(), out.size() - 2)) {
            SmallVector<int64_t> heads;
            for (int64_t slots : found->first)
              heads.push_back(slots * groups);
            FusedParts one = withWholeParts(found->first, heads, tp);
            FusedParts fp;
            for (int64_t g = 0; g < groups; ++g) {
              for (int64_t w : one.whole)
                fp.whole.push_back(g * int64_t(one.parts.size()) + w);
              for (int64_t slots : one.parts)
                fp.parts.push_back(slots * dim);
            }
            return fp;
          }
      }
    }
    // Layout-keeping ops (bias adds, the dequantization of an integer
    // MatMul's product, an activation's QuantizeLinear / DequantizeLinear
    // pair) and reshapes that keep the last axis lead on to the parts.
    bool keepsLast =
        keepsLayout(user, v) ||
        (isa<onnx::ReshapeOp>(user) &&
         tensorType(user->getResult(0)).getShape().back() ==
             tensorType(v).getShape().back());
    if (!keepsLast)
      break;
    v = user->getResult(0);
    last = tensorType(v).getRank() - 1;
  }
  return {{tensorType(mm->getResult(0)).getShape().back()}, {}};
}

} // namespace

void ShardingAnalysis::require(Operation *op, unsigned i, const Sharding &s) {
  Value v = op->getOperand(i);
  Sharding cur = produced(v);
  if (cur == s) {
    want.erase({op, i});
    return;
  }
  want[{op, i}] = s;
  if (cur.isPartial() && !s.isPartial())
    reduced.insert(v);
  if (!cur.isSplit() || s.isSplit())
    return;
  // A split that is gathered again was not worth making, except at a graph
  // output that reshapes made (a KV cache output split by heads).
  if (isa<func::ReturnOp>(op)) {
    if (!isOutputProjection(v, cur))
      return;
    if (std::optional<ReplicationReason::Kind> kind =
            outputHeadReplication(cur))
      forceOrigins(v, {*kind, op});
    else
      for (Operation *m : originsOf(v))
        splitOutputHeads.insert(m);
    return;
  }
  forceOrigins(v, {feedsTopK(op) ? ReplicationReason::Router
                                 : ReplicationReason::Blocked,
                   op});
}

bool ShardingAnalysis::feedsTopK(Operation *op) {
  // Scores reach the TopK through normalisations and casts (softmax or
  // sigmoid gating, a cast to float for the routing).
  SmallVector<Operation *> work{op};
  for (int depth = 0; depth < 4 && !work.empty(); ++depth) {
    SmallVector<Operation *> next;
    for (Operation *o : work) {
      if (isa<onnx::TopKOp>(o))
        return true;
      if (!isa<onnx::SoftmaxOp, onnx::LogSoftmaxOp, onnx::SigmoidOp,
               onnx::CastOp>(o))
        continue;
      for (Operation *u : o->getUsers())
        next.push_back(u);
    }
    work = std::move(next);
  }
  return false;
}

void ShardingAnalysis::forceOrigins(Value v, ReplicationReason why) {
  bool outputHead = ReplicationReason::isOutputHead(why.kind);
  for (Operation *m : originsOf(v)) {
    if (outputHead && hints.keepColumn.contains(m)) {
      splitOutputHeads.insert(m);
      continue;
    }
    if (retry.insert(m))
      retryReasons.try_emplace(m, why);
  }
}

std::optional<ReplicationReason::Kind>
ShardingAnalysis::outputHeadReplication(const Sharding &s) const {
  switch (outputHeads) {
  case OutputHeadPolicy::Column:
    return std::nullopt;
  case OutputHeadPolicy::Replicated:
    return ReplicationReason::OutputHead;
  case OutputHeadPolicy::Auto:
    break;
  }
  int64_t narrowest = *llvm::min_element(s.sizes);
  if (narrowest >= kMinOutputHeadColumns)
    return std::nullopt;
  return ReplicationReason::NarrowOutputHead;
}

std::optional<OutputHeadPolicy> parseOutputHeadPolicy(StringRef name) {
  return llvm::StringSwitch<std::optional<OutputHeadPolicy>>(name)
      .Case("auto", OutputHeadPolicy::Auto)
      .Case("column", OutputHeadPolicy::Column)
      .Case("replicated", OutputHeadPolicy::Replicated)
      .Default(std::nullopt);
}

const char *outputHeadPolicyNames() { return "auto, column or replicated"; }

bool ShardingAnalysis::isOutputProjection(Value v, const Sharding &s) {
  OpSet from = originsOf(v);
  if (from.empty())
    return true;
  return llvm::any_of(from, [&](Operation *m) {
    Sharding made = produced(m->getResult(0));
    return made.sizes == s.sizes && made.parts == s.parts;
  });
}

bool ShardingAnalysis::learn(ShardingHints &h) const {
  bool grew = false;
  for (Operation *m : retry)
    grew |= h.forced.insert(m);
  for (Value v : reduced)
    grew |= h.reduced.insert(v).second;
  for (Operation *add : newDeferred)
    grew |= h.deferred.insert(add);
  return grew;
}

LogicalResult emitHeadError(Operation *op, int64_t tp, int64_t dim,
                            int64_t heads, int64_t groups) {
  std::string ok;
  for (int64_t t = 1; t <= heads * groups; ++t)
    if ((t <= heads && heads % t == 0) ||
        (groups > 1 && groupedSplitApplies(op, t)))
      ok += (ok.empty() ? "" : ", ") + std::to_string(t);
  std::string node = nodeNameOf(op->getLoc());
  return op->emitError("tp=")
         << tp << " does not divide the " << heads << " heads (dimension "
         << dim << " of " << op->getResult(0).getType() << ") of node '"
         << node << "'; tp values that work: " << ok;
}

LogicalResult ShardingAnalysis::visitWeightMatMul(Operation *op) {
  Value a = op->getOperand(0);
  RankedTensorType at = tensorType(a);
  int64_t kAxisA = at.getRank() - 1;
  // Axes of the B operand: [K, N], or [N, K] for Gemm with transB.
  bool transB = false;
  if (auto g = dyn_cast<onnx::GemmOp>(op))
    transB = g.getTransB();
  int64_t nAxisB = transB ? 0 : 1, kAxisB = transB ? 1 : 0;
  Sharding sa = of(a);
  Value result = op->getResult(0);
  int64_t outLast = tensorType(result).getRank() - 1;
  if (hints.forced.contains(op)) {
    role[op] = tp::Role::Replicated;
    replicate(op);
    return success();
  }
  if (sa.isPartial()) {
    // A sum the MatMul could carry through, but then its weight would stay
    // whole: reduce first and shard the MatMul (column -> row -> column).
    require(op, 0, Sharding::replicated());
    sa = Sharding::replicated();
  }
  if (sa.isReplicated()) {
    FusedParts fp = fusedOutputParts(op, tp);
    Sharding out = Sharding::split(outLast, fp.parts, tp, fp.whole);
    require(op, 1, out.onAxis(nAxisB));
    role[op] = tp::Role::Column;
    OpSet self;
    self.insert(op);
    set(result, out, self);
    return success();
  }
  if (sa.isSplit() && sa.axis == kAxisA) {
    require(op, 1, sa.onAxis(kAxisB));
    role[op] = tp::Role::Row;
    set(result, Sharding::partial());
    return success();
  }
  // Split on a batch or row axis: the weight stays whole.
  require(op, 1, Sharding::replicated());
  role[op] = tp::Role::Replicated;
  set(result, sa, originsOf(a));
  return success();
}

void ShardingAnalysis::visitActivationMatMul(Operation *mmOp) {
  auto op = cast<onnx::MatMulOp>(mmOp);
  Value a = op.getA(), b = op.getB();
  RankedTensorType at = tensorType(a), bt = tensorType(b),
                   rt = tensorType(op.getResult());
  Sharding sa = of(a), sb = of(b);
  int64_t R = rt.getRank();
  if (at.getRank() < 2 || bt.getRank() < 2)
    return replicate(op);
  if (sa.isPartial() && sb.isReplicated()) {
    set(op.getResult(), Sharding::partial());
    return;
  }
  if (sb.isPartial() && sa.isReplicated()) {
    set(op.getResult(), Sharding::partial());
    return;
  }
  // Contraction split on both: partial sums.
  if (sa.isSplit() && sb.isSplit() && sa.axis == at.getRank() - 1 &&
      sb.axis == bt.getRank() - 2 && sa.sizes == sb.sizes &&
      sa.parts == sb.parts) {
    set(op.getResult(), Sharding::partial());
    return;
  }
  // A split batch axis (aligned from the right) carries over.
  auto batchAxis = [&](const Sharding &s, RankedTensorType t) -> int64_t {
    if (!s.isSplit() || s.axis >= t.getRank() - 2)
      return -1;
    return s.axis + (R - t.getRank());
  };
  int64_t ba = batchAxis(sa, at), bb = batchAxis(sb, bt);
  if (ba >= 0 || bb >= 0) {
    const Sharding &s = ba >= 0 ? sa : sb;
    int64_t axis = ba >= 0 ? ba : bb;
    Sharding res = s.onAxis(axis);
    OpSet from = originsOf(ba >= 0 ? a : b);
    for (unsigned i = 0; i < 2; ++i) {
      RankedTensorType t = i == 0 ? at : bt;
      int64_t local = axis - (R - t.getRank());
      if (local < 0 || t.getDimSize(local) == 1)
        require(op, i, Sharding::replicated());
      else
        require(op, i, s.onAxis(local));
    }
    set(op.getResult(), res, from);
    return;
  }
  // Rows of A or columns of B.
  if (sa.isSplit() && sa.axis == at.getRank() - 2 && sb.isReplicated()) {
    set(op.getResult(), sa.onAxis(R - 2), originsOf(a));
    return;
  }
  if (sb.isSplit() && sb.axis == bt.getRank() - 1 && sa.isReplicated()) {
    set(op.getResult(), sb.onAxis(R - 1), originsOf(b));
    return;
  }
  replicate(op);
}

bool ShardingAnalysis::visitPartialAdd(Operation *op) {
  if (!isa<onnx::AddOp, onnx::SubOp>(op) || op->getNumOperands() != 2)
    return false;
  Value res = op->getResult(0);
  Value x[2] = {op->getOperand(0), op->getOperand(1)};
  Sharding s[2] = {of(x[0]), of(x[1])};
  bool p[2] = {s[0].isPartial(), s[1].isPartial()};
  // A replicated operand made by eager reductions that nothing else reads.
  auto eager = [&](int k) -> const OpSet * {
    auto it = eagerSources.find(x[k]);
    return it != eagerSources.end() && x[k].hasOneUse() ? &it->second
                                                        : nullptr;
  };
  const OpSet *e[2] = {eager(0), eager(1)};
  // Two sums meet here, and at least one was reduced on its way: had its
  // reductions waited, one all-reduce after this add would do.
  if ((p[0] || e[0]) && (p[1] || e[1]) && (e[0] || e[1]))
    for (const OpSet *src : e)
      if (src)
        for (Operation *add : *src)
          newDeferred.insert(add);
  if (p[0] && p[1]) {
    set(res, Sharding::partial());
    return true;
  }
  if (!p[0] && !p[1]) {
    // A replicated value added on the way keeps the chain deferrable.
    if (s[0].isReplicated() && s[1].isReplicated() && (!e[0] != !e[1]))
      eagerSources[res] = e[0] ? *e[0] : *e[1];
    return false;
  }
  int k = p[0] ? 0 : 1;
  if (!s[1 - k].isReplicated())
    return false;
  // Deferring adds (or subtracts) the replicated operand on rank 0 only,
  // which is exact for either operand order; the sum must not broadcast the
  // partial operand, which would grow the all-reduce.
  bool deferrable =
      tensorType(res) == tensorType(x[k]) && x[k].hasOneUse();
  if (deferrable && hints.deferred.contains(op)) {
    require(op, 1 - k, Sharding::partial());
    set(res, Sharding::partial());
    return true;
  }
  require(op, k, Sharding::replicated());
  set(res, Sharding::replicated());
  if (deferrable) {
    // This add is the partial operand's only use: its reduction is this
    // add's choice, which a later run may defer, not a fact about the value.
    reduced.erase(x[k]);
    OpSet self;
    self.insert(op);
    eagerSources[res] = self;
  }
  return true;
}

void ShardingAnalysis::visitElementwise(Operation *op) {
  if (visitPartialAdd(op))
    return;
  Value res = op->getResult(0);
  int64_t R = tensorType(res).getRank();
  bool anyPartial = false, anySplit = false;
  for (Value v : op->getOperands()) {
    anyPartial |= of(v).isPartial();
    anySplit |= of(v).isSplit();
  }
  if (anyPartial) {
    // Sums of partials stay partial; a partial scaled by replicated values
    // stays partial; anything else needs the full value.
    bool allPartial = llvm::all_of(op->getOperands(),
                                   [&](Value v) { return of(v).isPartial(); });
    unsigned partials = llvm::count_if(
        op->getOperands(), [&](Value v) { return of(v).isPartial(); });
    bool othersReplicated = llvm::all_of(op->getOperands(), [&](Value v) {
      return of(v).isPartial() || of(v).isReplicated();
    });
    bool linear = false;
    if (isa<onnx::AddOp, onnx::SubOp, onnx::SumOp>(op))
      linear = allPartial;
    else if (isa<onnx::MulOp>(op))
      linear = partials == 1 && othersReplicated;
    else if (isa<onnx::DivOp>(op))
      linear = of(op->getOperand(0)).isPartial() && partials == 1 &&
               othersReplicated;
    else if (isa<onnx::NegOp>(op))
      linear = true;
    else if (isa<onnx::WhereOp>(op))
      // Picking a partial value or zero (masked rows) is linear in it.
      linear = partials == 1 && othersReplicated &&
               !of(op->getOperand(0)).isPartial() &&
               (onnx::isZeroTensor(op->getOperand(1)) ||
                onnx::isZeroTensor(op->getOperand(2)));
    else if (auto c = dyn_cast<onnx::CastOp>(op))
      linear = isa<FloatType>(c.getType().getElementType());
    if (linear) {
      set(res, Sharding::partial());
      return;
    }
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      if (of(op->getOperand(i)).isPartial())
        require(op, i, Sharding::replicated());
    if (!anySplit) {
      set(res, Sharding::replicated());
      return;
    }
  }
  // Agree on one split (in result axes); operands broadcast along it are
  // fine as they are, replicated operands with the full axis are sharded.
  std::optional<Sharding> split;
  OpSet from;
  bool conflict = false;
  for (Value v : op->getOperands()) {
    Sharding s = of(v);
    if (!s.isSplit())
      continue;
    Sharding inRes = s.onAxis(s.axis + (R - tensorType(v).getRank()));
    if (split && *split != inRes)
      conflict = true;
    if (!split)
      split = inRes;
    for (Operation *m : originsOf(v))
      from.insert(m);
  }
  if (!split || conflict)
    return replicate(op);
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    Value v = op->getOperand(i);
    RankedTensorType t = tensorType(v);
    int64_t local = split->axis - (R - t.getRank());
    if (local < 0 || t.getDimSize(local) == 1)
      require(op, i, Sharding::replicated());
    else
      require(op, i, split->onAxis(local));
  }
  set(res, *split, from);
}

/// Maps a split axis through a reshape: the split must be on the major
/// (first non-unit) dim of its group of input dims, and lands on the major
/// dim of the matching output group, whose per-rank sizes must be whole.
LogicalResult ShardingAnalysis::visitReshape(Operation *reshapeOp) {
  auto op = cast<onnx::ReshapeOp>(reshapeOp);
  Value in = op.getData();
  Sharding s = of(in);
  if (!s.isSplit()) {
    set(op.getResult(), s);
    return success();
  }
  ArrayRef<int64_t> is = tensorType(in).getShape();
  ArrayRef<int64_t> os = op.getType().getShape();
  // Group dims into runs with equal products.
  int64_t i = 0, o = 0;
  while (i < int64_t(is.size()) || o < int64_t(os.size())) {
    int64_t i0 = i, o0 = o, pi = 1, po = 1;
    if (i < int64_t(is.size()))
      pi *= is[i++];
    if (o < int64_t(os.size()))
      po *= os[o++];
    while (pi != po) {
      if (pi < po && i < int64_t(is.size()))
        pi *= is[i++];
      else if (o < int64_t(os.size()))
        po *= os[o++];
      else
        break;
    }
    if (s.axis < i0 || s.axis >= i)
      continue;
    int64_t majorIn = i0;
    while (majorIn < i && is[majorIn] == 1)
      ++majorIn;
    int64_t majorOut = o0;
    while (majorOut < o && os[majorOut] == 1)
      ++majorOut;
    int64_t restOut = 1;
    for (int64_t k = majorOut + 1; k < o; ++k)
      restOut *= os[k];
    // Every non-whole part must give each rank the same share before and
    // after a reshape that scales it.
    auto evenParts = [&](ArrayRef<int64_t> parts) {
      for (auto [k, p] : llvm::enumerate(parts))
        if (!s.isWholePart(k) && p % tp != 0)
          return false;
      return true;
    };
    if (majorOut < o && restOut == 1 && s.axis > majorIn) {
      // [outer..., split, inner...] merged into one axis: the axis is the
      // split axis' parts repeated for each outer index, each scaled by the
      // inner size (a grouped layout's q heads, merged across groups).
      int64_t outer = 1, inner = 1;
      for (int64_t k = majorIn; k < s.axis; ++k)
        outer *= is[k];
      for (int64_t k = s.axis + 1; k < i; ++k)
        inner *= is[k];
      if (inner != 1 && !evenParts(s.parts)) {
        replicate(op);
        return success();
      }
      SmallVector<int64_t> parts, whole;
      for (int64_t g = 0; g < outer; ++g)
        for (auto [k, p] : llvm::enumerate(s.parts)) {
          if (s.isWholePart(k))
            whole.push_back(int64_t(parts.size()));
          parts.push_back(p * inner);
        }
      set(op.getResult(), Sharding::split(majorOut, parts, tp, whole),
          originsOf(in));
      return success();
    }
    if (majorIn != s.axis || majorOut >= o) {
      replicate(op);
      return success();
    }
    OpSet from = originsOf(in);
    // Fewer heads than ranks: the projections are replicated, which is
    // right for GQA and MQA kv heads; the pass checks afterwards that they
    // meet split q heads.
    auto replicateHeads = [&](int64_t dim, int64_t heads) {
      for (Operation *m : from)
        if (retry.insert(m))
          retryReasons.try_emplace(
              m, ReplicationReason{ReplicationReason::KvHeads, op});
      headFallbacks.push_back({op, dim, heads});
      replicate(op);
      return success();
    };
    // [..., D] -> [..., 1, D] on the way to attention's MatMuls, into a
    // [batch, sequence, heads, head_dim]-like view: a projection's columns
    // as one head (multi-query attention's kv); a column split would cut
    // that head's dims. (A [B*S, N] -> [B, 1, N] at sequence 1 is no head.)
    if (s.parts.size() == 1 && majorIn == i0 && majorOut == o0 + 1 &&
        os.size() >= 4 && os.size() == is.size() + 1 &&
        i == int64_t(is.size()) && o == int64_t(os.size()) && !from.empty() &&
        anyUserOf(op, 256, [](Operation *cur) {
          return isa<onnx::MatMulOp>(cur) && !isWeightMatMul(cur);
        }).value_or(false))
      return replicateHeads(majorOut - 1, 1);
    int64_t restIn = 1;
    for (int64_t k = majorIn + 1; k < i; ++k)
      restIn *= is[k];
    int64_t dimOut = os[majorOut];
    if (is[majorIn] == dimOut && restIn == restOut) {
      // The split dim itself is unchanged (only unit dims move).
      set(op.getResult(), s.onAxis(majorOut), originsOf(in));
      return success();
    }
    if (s.parts.size() != 1 && restOut == 1 && restIn > 1) {
      // Heads of several parts merged with their dims into one axis.
      if (!evenParts(s.parts)) {
        replicate(op);
        return success();
      }
      SmallVector<int64_t> parts;
      for (int64_t p : s.parts)
        parts.push_back(p * restIn);
      set(op.getResult(), Sharding::split(majorOut, parts, tp, s.whole),
          originsOf(in));
      return success();
    }
    if (s.parts.size() > 1 && restIn == 1 && majorOut + 1 < o &&
        s.parts.size() % size_t(dimOut) == 0) {
      // [groups * slots * dim] -> [groups, slots, dim] where the parts
      // repeat for each group: the split moves to the slots axis, the
      // groups are whole.
      size_t period = s.parts.size() / dimOut;
      int64_t perSlot = restOut / os[majorOut + 1];
      bool periodic = true;
      int64_t groupSize = 0;
      for (size_t k = 0; k < s.parts.size(); ++k) {
        periodic &= s.parts[k] == s.parts[k % period] &&
                    s.isWholePart(k) == s.isWholePart(k % period) &&
                    s.parts[k] % perSlot == 0;
        if (k < period)
          groupSize += s.parts[k];
      }
      if (periodic && groupSize == restOut && dimOut > 1) {
        SmallVector<int64_t> slots, whole;
        for (size_t k = 0; k < period; ++k) {
          if (s.isWholePart(k))
            whole.push_back(int64_t(k));
          slots.push_back(s.parts[k] / perSlot);
        }
        for (auto [k, n] : llvm::enumerate(slots))
          if (!llvm::is_contained(whole, int64_t(k)) && n % tp != 0)
            return emitHeadError(op, tp, majorOut + 1, n, dimOut);
        set(op.getResult(), Sharding::split(majorOut + 1, slots, tp, whole),
            originsOf(in));
        return success();
      }
    }
    if (s.parts.size() != 1) {
      // A fused projection's axis cut into [slots, dim]: each part becomes
      // whole slots, split (whole heads per rank) or held whole.
      SmallVector<int64_t> slots;
      bool ok = restIn == 1;
      for (int64_t p : s.parts) {
        ok &= p % restOut == 0;
        slots.push_back(ok ? p / restOut : 0);
      }
      if (!ok) {
        replicate(op);
        return success();
      }
      // A split part must give every rank whole heads.
      for (auto [k, n] : llvm::enumerate(slots))
        if (!s.isWholePart(k) && n % tp != 0)
          return emitHeadError(op, tp, majorOut, n);
      set(op.getResult(), Sharding::split(majorOut, slots, tp, s.whole),
          originsOf(in));
      return success();
    }
    bool whole = true;
    for (int64_t sz : s.sizes)
      whole &= (sz * restIn) % restOut == 0;
    if (!whole) {
      if (tp % dimOut == 0 && !from.empty())
        return replicateHeads(majorOut, dimOut);
      return emitHeadError(op, tp, majorOut, dimOut);
    }
    Sharding out = s;
    out.axis = majorOut;
    out.parts = {dimOut};
    for (int64_t &sz : out.sizes)
      sz = sz * restIn / restOut;
    set(op.getResult(), out, originsOf(in));
    return success();
  }
  replicate(op);
  return success();
}

void ShardingAnalysis::visitTransposeLike(Operation *op, ArrayRef<int64_t> perm) {
  Value in = op->getOperand(0);
  Sharding s = of(in);
  if (!s.isSplit()) {
    set(op->getResult(0), s);
    return;
  }
  for (auto [j, p] : llvm::enumerate(perm))
    if (p == s.axis) {
      set(op->getResult(0), s.onAxis(j), originsOf(in));
      return;
    }
  replicate(op);
}

void ShardingAnalysis::visitAxisOp(Operation *op, ArrayRef<int64_t> reducedAxes,
                           bool keepDims, bool linearOverReduced) {
  Value in = op->getOperand(0);
  Sharding s = of(in);
  bool linear = isa<onnx::ReduceSumOp, onnx::ReduceMeanOp>(op);
  if (s.isPartial()) {
    if (linear) {
      set(op->getResult(0), s);
      return;
    }
    return replicate(op);
  }
  if (!s.isSplit()) {
    replicate(op);
    return;
  }
  if (llvm::is_contained(reducedAxes, s.axis)) {
    if (linearOverReduced) {
      // A sum over the split axis is the sum of the ranks' local sums.
      set(op->getResult(0), Sharding::partial());
      return;
    }
    return replicate(op);
  }
  int64_t axis = s.axis;
  if (!keepDims)
    for (int64_t a : reducedAxes)
      if (a < s.axis)
        --axis;
  for (unsigned i = 1; i < op->getNumOperands(); ++i)
    require(op, i, Sharding::replicated());
  set(op->getResult(0), s.onAxis(axis), originsOf(in));
}

void ShardingAnalysis::visitSplit(Operation *splitOp) {
  auto op = cast<onnx::SplitOp>(splitOp);
  Value in = op.getInput();
  Sharding s = of(in);
  int64_t rank = tensorType(in).getRank();
  int64_t axis = positiveAxis(op.getAxis(), rank);
  if (s.isPartial() || s.isReplicated()) {
    for (Value r : op.getResults())
      set(r, s);
    return;
  }
  if (s.axis != axis) {
    for (Value r : op.getResults())
      set(r, s, originsOf(in));
    return;
  }
  if (ArrayRef<int64_t>(s.parts) != op.getSplit())
    return replicate(op);
  for (auto [i, r, part] :
       llvm::enumerate(op.getResults(), op.getSplit())) {
    if (s.isWholePart(i))
      set(r, Sharding::replicated());
    else
      set(r, Sharding::split(axis, {part}, tp), originsOf(in));
  }
}

void ShardingAnalysis::visitSlice(Operation *op) {
  auto sl = cast<onnx::SliceOp>(op);
  Value data = sl.getData();
  Sharding s = of(data);
  if (s.isPartial()) {
    set(sl.getResult(), s);
    return;
  }
  if (!s.isSplit())
    return replicate(op);
  std::optional<std::pair<int64_t, int64_t>> range = cutRange(sl, s.axis);
  if (!range) {
    set(sl.getResult(), s, originsOf(data));
    return;
  }
  // One whole part of a fused projection: each rank keeps its share of it.
  int64_t start = 0;
  for (auto [i, part] : llvm::enumerate(s.parts)) {
    if (range->first == start && range->second == start + part) {
      if (s.isWholePart(i))
        set(sl.getResult(), Sharding::replicated());
      else
        set(sl.getResult(), Sharding::split(s.axis, {part}, tp),
            originsOf(data));
      return;
    }
    start += part;
  }
  replicate(op);
}

LogicalResult ShardingAnalysis::visit(Operation *op) {
  // A partial value that some use needs whole is read whole by every use:
  // one all-reduce serves them all.
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    Value v = op->getOperand(i);
    if (reduced.contains(v) && produced(v).isPartial())
      want[{op, i}] = Sharding::replicated();
  }
  if (isa<func::ReturnOp>(op)) {
    requireAll(op, Sharding::replicated());
    return success();
  }
  if (auto rule = dyn_cast<ShardingRuleOpInterface>(op))
    return rule.propagateSharding(*this);
  // An op without a rule may run where nothing is distributed; anything
  // else would be a guess (gathering its operands silently undoes the
  // sharding that reaches it).
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    Sharding s = of(v);
    if (s.isReplicated())
      continue;
    std::string node = nodeNameOf(op->getLoc());
    return op->emitError("'")
           << op->getName() << "'"
           << (node.empty() ? "" : " (node '" + node + "')")
           << " has no sharding rule, and its operand " << i << " is "
           << s.str()
           << "; its dialect must attach a ShardingRuleOpInterface model "
              "(see docs/custom-sharding.md)";
  }
  replicate(op);
  return success();
}

LogicalResult ShardingAnalysis::run() {
  for (Operation &op : func.getBody().front())
    if (failed(visit(&op)))
      return failure();
  return success();
}

} // namespace tpc
