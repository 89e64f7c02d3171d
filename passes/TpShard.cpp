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
#include "passes/ShardingMaterialize.h"

#include "compiler/Dialect/ONNX/IR/KernelBridge.h"

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/GlobPattern.h"

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
    SmallVector<llvm::GlobPattern> allowed;
    for (const std::string &glob : allowReplicated) {
      llvm::Expected<llvm::GlobPattern> pat = llvm::GlobPattern::create(glob);
      if (!pat) {
        module.emitError("allow-replicated: bad pattern '")
            << glob << "': " << llvm::toString(pat.takeError());
        return signalPassFailure();
      }
      allowed.push_back(std::move(*pat));
    }
    ShardingHints hints;
    llvm::DenseMap<Operation *, ReplicationReason> reasons;
    SmallVector<std::tuple<Operation *, int64_t, int64_t>> fallbacks;
    for (int iteration = 0;; ++iteration) {
      ShardingAnalysis a(func, tp, parallelLmHead, hints);
      if (failed(a.run()))
        return signalPassFailure();
      fallbacks.append(a.headFallbacks);
      for (Operation *m : a.retry)
        reasons.try_emplace(m, a.retryReasons.lookup(m));
      if (a.learn(hints) && iteration < 1000)
        continue;
      // Replicated heads are only right where they meet split heads (GQA kv
      // heads broadcast to q heads); otherwise tp does not fit the model.
      for (auto [reshape, dim, heads] : fallbacks)
        if (!meetsSplitHeads(reshape, a)) {
          (void)emitHeadError(reshape, tp, dim, heads);
          return signalPassFailure();
        }
      if (failed(checkReplicated(func, hints.forced, reasons, allowed)))
        return signalPassFailure();
      materializeShardings(func, a);
      return;
    }
  }

  /// Fails closed: a weight MatMul replicated for no stated policy (an op
  /// blocked its split) is an error naming it and the op, unless the user
  /// allowed it. The first such MatMul in program order is usually the
  /// cause of the others, which become notes.
  static LogicalResult
  checkReplicated(func::FuncOp func, const OpSet &forced,
                  const llvm::DenseMap<Operation *, ReplicationReason> &why,
                  ArrayRef<llvm::GlobPattern> allowed) {
    SmallVector<Operation *> blocked;
    for (Operation &op : func.getBody().front()) {
      if (!forced.contains(&op))
        continue;
      auto it = why.find(&op);
      if (it != why.end() && it->second.kind != ReplicationReason::Blocked)
        continue;
      std::string node = nodeNameOf(op.getLoc());
      std::string weight = weightNameOf(&op);
      if (llvm::any_of(allowed, [&](const llvm::GlobPattern &g) {
            return (!node.empty() && g.match(node)) ||
                   (!weight.empty() && g.match(weight));
          }))
        continue;
      blocked.push_back(&op);
    }
    if (blocked.empty())
      return success();
    auto describe = [&](Operation *m) {
      std::string text = "weight MatMul " + nameOf(m);
      auto it = why.find(m);
      if (it != why.end() && it->second.at)
        text += ": its column split reaches " + nameOf(it->second.at) +
                ", which has no sharding rule for that split and needs the "
                "value whole";
      return text;
    };
    InFlightDiagnostic diag =
        blocked.front()->emitError("cannot shard ")
        << describe(blocked.front())
        << "; it would stay replicated on every rank (pass "
           "--allow-replicated '"
        << nodeNameOf(blocked.front()->getLoc()) << "' to accept that)";
    for (Operation *m : ArrayRef(blocked).drop_front().take_front(8))
      diag.attachNote(m->getLoc()) << "also " << describe(m);
    if (blocked.size() > 9)
      diag.attachNote() << blocked.size() - 9 << " more weight MatMuls";
    return failure();
  }

  static std::string nameOf(Operation *op) {
    std::string node = nodeNameOf(op->getLoc());
    return "'" + (node.empty() ? op->getName().getStringRef().str() : node) +
           "' (" + op->getName().getStringRef().str() + ")";
  }

  /// The initializer a weight MatMul reads, "" when it cannot be named.
  static std::string weightNameOf(Operation *op) {
    Value b = op->getOperand(1);
    if (auto t = b.getDefiningOp<onnx::TransposeOp>())
      b = t.getData();
    if (auto w = b.getDefiningOp<onnx::WeightOp>())
      return w.getName().str();
    return "";
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
};

} // namespace
} // namespace tpc
