//===- TpShard.cpp - Megatron sharding by dataflow ------------------------===//
//
// An analysis walks @main in program order and gives each value a sharding
// from its operands' shardings, recording the sharding each op wants of each
// operand. Where the choice of a column-parallel MatMul turns out to be
// useless (its split is only gathered again: an LM head, k/v projections with
// fewer kv heads than ranks) the MatMul is forced replicated and the
// analysis reruns. Then the wanted conversions are materialised as tp
// collectives and every op is annotated.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/ShardingAnalysis.h"

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <numeric>

namespace tpc {
#define GEN_PASS_DEF_TPSHARDPASS
#include "passes/Passes.h.inc"
} // namespace tpc

using namespace mlir;

namespace tpc {
namespace {

struct TpShardPass : impl::TpShardPassBase<TpShardPass> {
  using TpShardPassBase::TpShardPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (tp < 1) {
      module.emitError("tp must be at least 1");
      return signalPassFailure();
    }
    if (vocabParallelEmbedding) {
      module.emitError("--vocab-parallel-embedding is not supported yet");
      return signalPassFailure();
    }
    func::FuncOp func = module.lookupSymbol<func::FuncOp>("main");
    if (!func || func.isExternal()) {
      module.emitError("tpc-tp-shard expects a function @main");
      return signalPassFailure();
    }
    OpBuilder b(module.getContext());
    module->setAttr("tp.size", b.getI64IntegerAttr(tp));
    if (tp == 1) {
      annotateReplicated(func);
      return;
    }
    splitGemmBias(func);
    OpSet forced;
    SmallVector<std::tuple<Operation *, int64_t, int64_t>> fallbacks;
    for (int iteration = 0;; ++iteration) {
      ShardingAnalysis a(func, tp, parallelLmHead, forced);
      if (failed(a.run()))
        return signalPassFailure();
      fallbacks.append(a.headFallbacks);
      bool grew = false;
      for (Operation *m : a.retry)
        grew |= forced.insert(m);
      if (grew && iteration < 1000)
        continue;
      // Replicated heads are only right where they meet split heads (GQA kv
      // heads broadcast to q heads); otherwise tp does not fit the model.
      for (auto [reshape, dim, heads] : fallbacks)
        if (!meetsSplitHeads(reshape, a)) {
          (void)emitHeadError(reshape, tp, dim, heads);
          return signalPassFailure();
        }
      materialize(func, a);
      return;
    }
  }

  /// Whether a value derived from `op` reaches an activation MatMul whose
  /// result is split.
  static bool meetsSplitHeads(Operation *op, ShardingAnalysis &a) {
    SmallVector<Operation *> work{op};
    llvm::SmallPtrSet<Operation *, 32> seen;
    while (!work.empty() && seen.size() < 256) {
      Operation *cur = work.pop_back_val();
      if (!seen.insert(cur).second)
        continue;
      if (isa<onnx::MatMulOp>(cur) && !isWeightMatMul(cur) &&
          a.of(cur->getResult(0)).isSplit())
        return true;
      for (Value r : cur->getResults())
        for (Operation *user : r.getUsers())
          work.push_back(user);
    }
    return false;
  }

  /// Gemm(A, W, C) with a weight B becomes Gemm(A, W) + C, so that a bias
  /// after a row-parallel Gemm is added once, after the all-reduce.
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

  void annotate(Operation *op, ArrayRef<Sharding> shardings) {
    SmallVector<Attribute> attrs;
    for (const Sharding &s : shardings)
      attrs.push_back(s.toAttr(op->getContext()));
    op->setAttr("tp.sharding", ArrayAttr::get(op->getContext(), attrs));
  }

  void annotateReplicated(func::FuncOp func) {
    for (Operation &op : func.getBody().front()) {
      SmallVector<Sharding> s(op.getNumResults(), Sharding::replicated());
      if (op.getNumResults())
        annotate(&op, s);
      if (isWeightMatMul(&op))
        op.setAttr("tp.role", StringAttr::get(op.getContext(), "replicated"));
    }
  }

  void materialize(func::FuncOp func, ShardingAnalysis &a) {
    MLIRContext *ctx = func.getContext();
    auto get = [&](Value v) {
      auto it = a.state.find(v);
      return it == a.state.end() ? Sharding::replicated() : it->second;
    };
    std::map<std::pair<void *, std::string>, Value> cache;
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
      if (curS.isPartial()) {
        auto key2 = std::make_pair(v.getAsOpaquePointer(),
                                   Sharding::replicated().str());
        auto c2 = cache.find(key2);
        if (c2 != cache.end()) {
          cur = c2->second;
        } else {
          place(cur);
          auto ar = b.create<tp::AllReduceOp>(loc, cur);
          annotate(ar, {Sharding::replicated()});
          cache[key2] = ar.getResult();
          cur = ar.getResult();
        }
        curS = Sharding::replicated();
      }
      if (curS.isSplit() && curS != to) {
        auto key2 = std::make_pair(v.getAsOpaquePointer(),
                                   Sharding::replicated().str());
        auto c2 = cache.find(key2);
        if (c2 != cache.end()) {
          cur = c2->second;
        } else {
          place(cur);
          auto ag = b.create<tp::AllGatherOp>(
              loc, cur.getType(), cur, b.getI64IntegerAttr(curS.axis),
              b.getDenseI64ArrayAttr(curS.sizes),
              b.getDenseI64ArrayAttr(curS.parts));
          annotate(ag, {Sharding::replicated()});
          cache[key2] = ag.getResult();
          cur = ag.getResult();
        }
        curS = Sharding::replicated();
      }
      if (to.isSplit() && curS.isReplicated()) {
        place(cur);
        auto sh = b.create<tp::ShardOp>(loc, cur.getType(), cur,
                                        b.getI64IntegerAttr(to.axis),
                                        b.getDenseI64ArrayAttr(to.sizes),
                                        b.getDenseI64ArrayAttr(to.parts));
        annotate(sh, {to});
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
        annotate(&op, rs);
      auto role = a.role.find(&op);
      if (role != a.role.end())
        op.setAttr("tp.role", StringAttr::get(ctx, role->second));
    }
  }
};

} // namespace
} // namespace tpc
