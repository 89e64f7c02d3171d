//===- ShardingMaterialize.cpp - Writing shardings into the IR ------------===//
#include "passes/ShardingMaterialize.h"

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"

#include <map>

using namespace mlir;

namespace tpc {

void splitGemmBias(func::FuncOp func) {
  SmallVector<onnx::GemmOp> gemms;
  func.walk([&](onnx::GemmOp g) {
    if (g.getC() && isWeightMatMul(g))
      gemms.push_back(g);
  });
  for (onnx::GemmOp g : gemms) {
    OpBuilder b(g);
    Value c = g.getC();
    if (g.getBeta().convertToFloat() != 1.0f) {
      auto beta = b.create<onnx::ConstantOp>(
          g.getLoc(), RankedTensorType::get({}, g.getType().getElementType()),
          DenseElementsAttr::get(
              RankedTensorType::get({}, g.getType().getElementType()),
              g.getBeta()));
      c = b.create<onnx::MulOp>(g.getLoc(), c, beta.getResult()).getResult();
    }
    auto gemm = b.create<onnx::GemmOp>(
        g.getLoc(), g.getType(), g.getA(), g.getB(), Value(),
        g.getAlphaAttr(), b.getF32FloatAttr(1.0f), g.getTransAAttr(),
        g.getTransBAttr());
    auto add = b.create<onnx::AddOp>(g.getLoc(), gemm.getResult(), c);
    g.getResult().replaceAllUsesWith(add.getResult());
    g.erase();
  }
}

void annotateShardings(Operation *op, ArrayRef<Sharding> shardings) {
  SmallVector<Attribute> attrs;
  for (const Sharding &s : shardings)
    attrs.push_back(s.toAttr(op->getContext()));
  op->setAttr(tp::kShardingAttr, ArrayAttr::get(op->getContext(), attrs));
}

void annotateReplicated(func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    SmallVector<Sharding> s(op.getNumResults(), Sharding::replicated());
    if (op.getNumResults())
      annotateShardings(&op, s);
    if (isWeightMatMul(&op))
      tp::setRole(&op, tp::Role::Replicated);
  }
}

namespace {

/// The split of a Reshape's input that gives its result the split `to`
/// (one part, every rank's block whole): the input axis that starts where
/// the split axis starts, the same axis (a scale [N] made [1, N]), its
/// major factor ([K] made [K / b, b]: sizes times b) or the major axis of
/// those it merges ([K / b, b] made [K]: sizes over b, when they divide).
std::optional<Sharding> reshapeSource(onnx::ReshapeOp r, const Sharding &to) {
  ArrayRef<int64_t> in = r.getData().getType().getShape();
  ArrayRef<int64_t> out = r.getType().getShape();
  if (to.parts.size() != 1 || !to.whole.empty())
    return std::nullopt;
  int64_t before = 1;
  for (int64_t d = 0; d < to.axis; ++d)
    before *= out[d];
  int64_t outDim = out[to.axis];
  int64_t prod = 1;
  for (int64_t a = 0; a < int64_t(in.size()); ++a) {
    if (prod == before && in[a] != 1) {
      Sharding s = to.onAxis(a);
      s.parts = {in[a]};
      if (in[a] == outDim)
        return s;
      if (in[a] % outDim == 0) {
        int64_t m = in[a] / outDim;
        for (int64_t &z : s.sizes)
          z *= m;
        return s;
      }
      if (outDim % in[a] == 0) {
        int64_t m = outDim / in[a];
        for (int64_t &z : s.sizes) {
          if (z % m)
            return std::nullopt;
          z /= m;
        }
        return s;
      }
      return std::nullopt;
    }
    prod *= in[a];
    if (prod > before)
      return std::nullopt;
  }
  return std::nullopt;
}

/// Rebuilds weight expressions (a dequantized weight: its quantized tensor,
/// zero point and scale combined by weight-expression ops) split as a
/// MatMul needs them: every leaf weight or constant is split the same way
/// (broadcast dims stay whole), so each rank reads and computes only its
/// block and no rank holds a whole weight.
class WeightExprSharder {
public:
  explicit WeightExprSharder(func::FuncOp func) : func(func) {}

  /// `v` split as `to`, rebuilt over split leaves; null where an op of the
  /// expression cannot be split so (the caller then slices the whole).
  Value shard(Value v, const Sharding &to) {
    std::string key = to.str();
    auto hit = cache.find({v.getAsOpaquePointer(), key});
    if (hit != cache.end())
      return hit->second;
    Value r = build(v, to);
    if (r)
      cache[{v.getAsOpaquePointer(), key}] = r;
    return r;
  }

private:
  func::FuncOp func;
  std::map<std::pair<void *, std::string>, Value> cache;

  Value leaf(Value v, const Sharding &to) {
    OpBuilder b(v.getContext());
    b.setInsertionPointAfter(v.getDefiningOp());
    auto sh = b.create<tp::ShardOp>(v.getLoc(), v.getType(), v,
                                    b.getI64IntegerAttr(to.axis),
                                    b.getDenseI64ArrayAttr(to.sizes),
                                    b.getDenseI64ArrayAttr(to.parts));
    annotateShardings(sh, {to});
    return sh.getResult();
  }

  /// Operand `x` of an elementwise op with a result of rank `rank`: split on
  /// the aligned axis, or whole where it broadcasts there.
  Value operandFor(Value x, int64_t rank, const Sharding &to) {
    auto t = cast<RankedTensorType>(x.getType());
    int64_t axis = to.axis - (rank - t.getRank());
    if (axis < 0 || t.getDimSize(axis) == 1)
      return x;
    return shard(x, to.onAxis(axis));
  }

  Value build(Value v, const Sharding &to) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return Value();
    if (isa<onnx::WeightOp, onnx::ConstantOp>(def))
      return leaf(v, to);
    SmallVector<Value> operands;
    if (isa<onnx::CastOp, onnx::SubOp, onnx::MulOp, onnx::AddOp,
            onnx::DivOp>(def)) {
      int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
      for (Value x : def->getOperands())
        operands.push_back(operandFor(x, rank, to));
    } else if (auto t = dyn_cast<onnx::TransposeOp>(def)) {
      operands.push_back(shard(t.getData(), to.onAxis(t.getPerm()[to.axis])));
    } else if (auto r = dyn_cast<onnx::ReshapeOp>(def)) {
      std::optional<Sharding> from = reshapeSource(r, to);
      if (!from)
        return Value();
      operands.push_back(shard(r.getData(), *from));
    } else if (auto g = dyn_cast<onnx::GatherOp>(def)) {
      // 1-D indices keep the data's rank; a split off the gathered axis
      // splits the data the same way.
      auto idx = cast<RankedTensorType>(g.getIndices().getType());
      int64_t rank = g.getData().getType().getRank();
      int64_t axis = g.getAxis() < 0 ? g.getAxis() + rank : g.getAxis();
      if (idx.getRank() != 1 || axis == to.axis ||
          !isa_and_nonnull<onnx::ConstantOp>(g.getIndices().getDefiningOp()))
        return Value();
      operands = {shard(g.getData(), to), g.getIndices()};
    } else {
      return Value();
    }
    for (Value x : operands)
      if (!x)
        return Value();
    OpBuilder b(def->getContext());
    b.setInsertionPointAfter(def);
    for (Value x : operands)
      if (Operation *xd = x.getDefiningOp())
        if (xd->getBlock() == def->getBlock() && def->isBeforeInBlock(xd))
          b.setInsertionPointAfter(xd);
    Operation *clone = b.clone(*def);
    clone->setOperands(operands);
    annotateShardings(clone, {to});
    return clone->getResult(0);
  }
};

} // namespace

void materializeShardings(func::FuncOp func, const ShardingAnalysis &a) {
  MLIRContext *ctx = func.getContext();
  auto get = [&](Value v) {
    auto it = a.state.find(v);
    return it == a.state.end() ? Sharding::replicated() : it->second;
  };
  std::map<std::pair<void *, std::string>, Value> cache;
  WeightExprSharder weightExprs(func);
  auto convert = [&](OpBuilder &b, Value v, const Sharding &to) -> Value {
    Sharding from = get(v);
    std::string key = to.str();
    auto hit = cache.find({v.getAsOpaquePointer(), key});
    if (hit != cache.end())
      return hit->second;
    Location loc = v.getLoc();
    Value cur = v;
    Sharding curS = from;
    auto place = [&](Value x) {
      if (Operation *def = x.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(&func.getBody().front());
    };
    // Makes `cur` replicated with the collective `collect` creates, once
    // per value: a later conversion of `v` reuses the replicated value.
    auto replicate = [&](function_ref<Operation *()> collect) {
      auto key2 = std::make_pair(v.getAsOpaquePointer(),
                                 Sharding::replicated().str());
      auto c2 = cache.find(key2);
      if (c2 != cache.end()) {
        cur = c2->second;
      } else {
        place(cur);
        Operation *op = collect();
        annotateShardings(op, {Sharding::replicated()});
        cache[key2] = op->getResult(0);
        cur = op->getResult(0);
      }
      curS = Sharding::replicated();
    };
    if (curS.isPartial())
      replicate([&] { return b.create<tp::AllReduceOp>(loc, cur); });
    if (curS.isSplit() && curS != to)
      replicate([&] {
        return b.create<tp::AllGatherOp>(loc, cur.getType(), cur,
                                         b.getI64IntegerAttr(curS.axis),
                                         b.getDenseI64ArrayAttr(curS.sizes),
                                         b.getDenseI64ArrayAttr(curS.parts));
      });
    if (to.isPartial() && curS.isReplicated()) {
      // Added once: rank 0 keeps it, the others add nothing.
      place(cur);
      auto tpOp = b.create<tp::ToPartialOp>(loc, cur);
      annotateShardings(tpOp, {to});
      cur = tpOp.getResult();
      curS = to;
    }
    // A weight computed from weights (dequantized): split its leaves.
    // (A weight itself, or its transpose, is sliced from the file instead.)
    bool transposed;
    bool direct = directWeight(cur, transposed) ||
                  isa_and_nonnull<onnx::ConstantOp>(cur.getDefiningOp());
    if (to.isSplit() && curS.isReplicated() && !direct && weightOf(cur))
      if (Value split = weightExprs.shard(cur, to)) {
        cache[{v.getAsOpaquePointer(), key}] = split;
        return split;
      }
    if (to.isSplit() && curS.isReplicated()) {
      place(cur);
      auto sh = b.create<tp::ShardOp>(loc, cur.getType(), cur,
                                      b.getI64IntegerAttr(to.axis),
                                      b.getDenseI64ArrayAttr(to.sizes),
                                      b.getDenseI64ArrayAttr(to.parts));
      annotateShardings(sh, {to});
      cur = sh.getResult();
    }
    cache[{v.getAsOpaquePointer(), key}] = cur;
    return cur;
  };
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    if (isa<tp::TPDialect>(op.getDialect()))
      continue;
    for (unsigned i = 0; i < op.getNumOperands(); ++i) {
      auto it = a.want.find({&op, i});
      if (it == a.want.end())
        continue;
      OpBuilder b(ctx);
      Value nv = convert(b, op.getOperand(i), it->second);
      op.setOperand(i, nv);
    }
    SmallVector<Sharding> rs;
    for (Value r : op.getResults())
      rs.push_back(get(r));
    if (!rs.empty())
      annotateShardings(&op, rs);
    auto role = a.role.find(&op);
    if (role != a.role.end())
      // The analysis names roles by the enum's spellings.
      tp::setRole(&op, role->second);
  }
}

func::FuncOp beginSharding(ModuleOp module, int64_t tp, StringRef passName) {
  if (tp < 1) {
    module.emitError(passName) << ": tp must be at least 1, not " << tp;
    return nullptr;
  }
  func::FuncOp func = module.lookupSymbol<func::FuncOp>("main");
  if (!func || func.isExternal()) {
    module.emitError(passName) << " expects a function @main";
    return nullptr;
  }
  module->setAttr(tp::kSizeAttr, OpBuilder(module).getI64IntegerAttr(tp));
  return func;
}

std::unique_ptr<ShardingAnalysis>
analyzeUntilStable(func::FuncOp func, int64_t tp, OutputHeadPolicy outputHeads,
                   ShardingHints &hints,
                   function_ref<void(ShardingAnalysis &)> configure,
                   function_ref<void(const ShardingAnalysis &)> inspect) {
  // The analysis learns from later uses (a column split that is only
  // gathered again, as for the LM head; partial sums that can share one
  // all-reduce) and reruns with what it learned. The hints only grow, so
  // this ends; the bound is a guard.
  for (int run = 0;; ++run) {
    auto a =
        std::make_unique<ShardingAnalysis>(func, tp, outputHeads, hints);
    if (configure)
      configure(*a);
    if (failed(a->run()))
      return nullptr;
    if (inspect)
      inspect(*a);
    if (!a->learn(hints) || run >= 1000)
      return a;
  }
}

LogicalResult
shardModule(ModuleOp module, int64_t tp, StringRef passName,
            function_ref<void(func::FuncOp, ShardingHints &)> seed,
            OutputHeadPolicy outputHeads) {
  func::FuncOp func = beginSharding(module, tp, passName);
  if (!func)
    return failure();
  if (tp == 1) {
    annotateReplicated(func);
    return success();
  }
  splitGemmBias(func);
  ShardingHints hints;
  if (seed)
    seed(func, hints);
  std::unique_ptr<ShardingAnalysis> a =
      analyzeUntilStable(func, tp, outputHeads, hints);
  if (!a)
    return failure();
  materializeShardings(func, *a);
  return success();
}

} // namespace tpc
