//===- MlpOnlySharding.cpp - Shard the MLPs, replicate attention ----------===//
//
// The policy reuses tpc's sharding rules: it runs ShardingAnalysis with the
// attention projections forced replicated, so the only column-parallel
// MatMuls left are the MLPs' up (and gate) projections, whose row-parallel
// down projections end in one all-reduce per layer. Attention projections
// are found by dataflow, not by weight names: they are the weight MatMuls
// joined to a MatMul of two activations (scores QK^T or context PV) by a
// path that crosses no other weight MatMul.
//
//===----------------------------------------------------------------------===//
#include "passes/plugin/MlpOnlySharding.h"

#include "passes/ShardingMaterialize.h"

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace tpc::plugin {
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

struct MlpOnlyShardPass
    : PassWrapper<MlpOnlyShardPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MlpOnlyShardPass)

  MlpOnlyShardPass() = default;
  // Options are not copyable; the pass manager copies their values.
  MlpOnlyShardPass(const MlpOnlyShardPass &other) : PassWrapper(other) {}

  StringRef getArgument() const override { return "tpc-mlp-only-shard"; }
  StringRef getDescription() const override {
    return "Shard only the MLPs (column then row parallel); keep attention "
           "replicated";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<tp::TPDialect, onnx::ONNXDialect>();
  }

  void runOnOperation() override {
    if (failed(shardMlpOnly(getOperation(), tp)))
      signalPassFailure();
  }

  Option<int64_t> tp{*this, "tp", llvm::cl::desc("Number of ranks"),
                     llvm::cl::init(1)};
};

} // namespace

LogicalResult shardMlpOnly(ModuleOp module, int64_t tp) {
  if (tp < 1)
    return module.emitError("tp must be at least 1");
  func::FuncOp func = module.lookupSymbol<func::FuncOp>("main");
  if (!func || func.isExternal())
    return module.emitError("tpc-mlp-only-shard expects a function @main");
  module->setAttr(tp::kSizeAttr, OpBuilder(module).getI64IntegerAttr(tp));
  if (tp == 1) {
    annotateReplicated(func);
    return success();
  }
  splitGemmBias(func);
  ShardingHints hints;
  hints.forced = attentionProjections(func);
  // The analysis learns from later uses (a column split that is only
  // gathered again, as for the LM head; partial sums that can share one
  // all-reduce) and reruns with what it learned. The hints only grow, so
  // this ends.
  for (;;) {
    ShardingAnalysis analysis(func, tp, /*parallelLmHead=*/false, hints);
    if (failed(analysis.run()))
      return failure();
    if (analysis.learn(hints))
      continue;
    materializeShardings(func, analysis);
    return success();
  }
}

void registerMlpOnlyShardPass() { PassRegistration<MlpOnlyShardPass>(); }

} // namespace tpc::plugin
