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

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

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
      materializeShardings(func, a);
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
};

} // namespace
} // namespace tpc
