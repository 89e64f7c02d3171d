//===- MlpOnlySharding.cpp - Shard the MLPs, replicate attention ----------===//
//
// The policy reuses tpc's sharding rules: it runs ShardingAnalysis with the
// attention projections forced replicated, so the only column-parallel
// MatMuls left are the MLPs' up (and gate) projections, whose row-parallel
// down projections end in one all-reduce per layer; the LM head stays
// replicated too (OutputHeadPolicy::Replicated). Attention projections
// are found by dataflow, not by weight names: they are the weight MatMuls
// joined to a MatMul of two activations (scores QK^T or context PV) by a
// path that crosses no other weight MatMul.
//
//===----------------------------------------------------------------------===//
#include "passes/plugin/MlpOnlySharding.h"

#include "passes/ShardingMaterialize.h"

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace tpc::plugin {
#define GEN_PASS_DECL_MLPONLYSHARDPASS
#define GEN_PASS_DEF_MLPONLYSHARDPASS
#define GEN_PASS_REGISTRATION
#include "passes/plugin/Passes.h.inc"

namespace {

bool isActivationMatMul(Operation *op) {
  return isa<onnx::MatMulOp>(op) && !isWeightMatMul(op);
}

/// Whether an activation MatMul is reachable from `start` along uses
/// (`forward`) or definitions, without crossing a weight MatMul.
bool reachesActivationMatMul(Operation *start, bool forward) {
  SmallVector<Operation *> work;
  auto next = [&](Operation *op) {
    if (forward) {
      for (Value r : op->getResults())
        for (Operation *user : r.getUsers())
          work.push_back(user);
      return;
    }
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.push_back(def);
  };
  next(start);
  llvm::SmallPtrSet<Operation *, 32> seen;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!seen.insert(op).second)
      continue;
    if (isActivationMatMul(op))
      return true;
    if (!isWeightMatMul(op))
      next(op);
  }
  return false;
}

/// The q/k/v projections lead into an activation MatMul; the output
/// projection reads (through its activation operand) from one.
OpSet attentionProjections(func::FuncOp func) {
  OpSet out;
  for (Operation &op : func.getBody().front()) {
    if (!isWeightMatMul(&op))
      continue;
    Operation *activation = op.getOperand(0).getDefiningOp();
    if (reachesActivationMatMul(&op, /*forward=*/true) ||
        (activation && (isActivationMatMul(activation) ||
                        reachesActivationMatMul(activation, false))))
      out.insert(&op);
  }
  return out;
}

struct MlpOnlyShardPass : impl::MlpOnlyShardPassBase<MlpOnlyShardPass> {
  using MlpOnlyShardPassBase::MlpOnlyShardPassBase;

  void runOnOperation() override {
    if (failed(shardMlpOnly(getOperation(), tp)))
      signalPassFailure();
  }
};

} // namespace

LogicalResult shardMlpOnly(ModuleOp module, int64_t tp) {
  return shardModule(module, tp, "tpc-mlp-only-shard",
                     [](func::FuncOp func, ShardingHints &hints) {
                       hints.forced = attentionProjections(func);
                     },
                     OutputHeadPolicy::Replicated);
}

void registerMlpOnlyShardingPasses() { registerTPCMlpOnlyShardingPasses(); }

} // namespace tpc::plugin
