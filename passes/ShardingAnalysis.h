//===- ShardingAnalysis.h - Sharding propagation rules ----------*- C++ -*-===//
//
// The rules of tensor-parallel sharding, one per kind of op: given the
// shardings of an op's operands, the sharding of its results and the
// sharding it needs of each operand. The sharding pass runs them to choose
// shardings; the partitioning pass runs them to check that a program's
// shardings (perhaps left by a custom pass) are consistent.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_PASSES_SHARDINGANALYSIS_H
#define TPC_PASSES_SHARDINGANALYSIS_H

#include "passes/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <map>

namespace tpc {

using OpSet = llvm::SmallSetVector<mlir::Operation *, 4>;

/// Whether `op` is a MatMul or Gemm whose B operand is a weight (through a
/// transpose of its last two axes at most).
bool isWeightMatMul(mlir::Operation *op);

/// The error for a reshape that splits `heads` heads over `tp` ranks
/// unevenly: it names the node, the dimension and the tp values that work.
mlir::LogicalResult emitHeadError(mlir::Operation *op, int64_t tp, int64_t dim,
                                  int64_t heads);

class ShardingAnalysis {
public:
  ShardingAnalysis(mlir::func::FuncOp func, int64_t tp, bool parallelLmHead,
                   const OpSet &forced)
      : func(func), tp(tp), parallelLmHead(parallelLmHead), forced(forced) {}

  /// Visits every op of the function in order. failure() after an error;
  /// `retry` names MatMuls that should be forced replicated and the
  /// analysis rerun.
  mlir::LogicalResult run();
  /// Applies the rule of one op to the current state.
  mlir::LogicalResult visit(mlir::Operation *op);

  /// The sharding each op needs of each operand, where it differs from the
  /// operand's.
  std::map<std::pair<mlir::Operation *, unsigned>, Sharding> want;
  llvm::DenseMap<mlir::Value, Sharding> state;
  llvm::DenseMap<mlir::Operation *, llvm::StringRef> role;
  OpSet retry;
  /// Reshapes whose heads could not be split (fewer heads than ranks), with
  /// the dimension and head count: their projections were forced replicated.
  llvm::SmallVector<std::tuple<mlir::Operation *, int64_t, int64_t>>
      headFallbacks;

  /// A copy: references into `state` would dangle when it grows.
  Sharding of(mlir::Value v) const {
    auto it = state.find(v);
    return it == state.end() ? Sharding::replicated() : it->second;
  }

private:
  void set(mlir::Value v, const Sharding &s, const OpSet &from = {}) {
    state[v] = s;
    if (s.isSplit() && !from.empty())
      origins[v] = from;
  }
  OpSet originsOf(mlir::Value v) {
    auto it = origins.find(v);
    return it == origins.end() ? OpSet() : it->second;
  }
  /// Records that `op` needs operand `i` as `s`.
  void require(mlir::Operation *op, unsigned i, const Sharding &s) {
    mlir::Value v = op->getOperand(i);
    Sharding cur = of(v);
    if (cur == s)
      return;
    want[{op, i}] = s;
    // A split that is gathered again was not worth making.
    if (cur.isSplit() && !s.isSplit()) {
      bool atOutput = llvm::isa<mlir::func::ReturnOp>(op);
      if (!(parallelLmHead && atOutput))
        for (mlir::Operation *m : originsOf(v))
          retry.insert(m);
    }
  }
  void requireAll(mlir::Operation *op, const Sharding &s) {
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      require(op, i, s);
  }
  void replicate(mlir::Operation *op) {
    requireAll(op, Sharding::replicated());
    for (mlir::Value r : op->getResults())
      set(r, Sharding::replicated());
  }

  mlir::LogicalResult visitWeightMatMul(mlir::Operation *op);
  void visitActivationMatMul(mlir::Operation *op);
  void visitElementwise(mlir::Operation *op);
  mlir::LogicalResult visitReshape(mlir::Operation *op);
  void visitAxisOp(mlir::Operation *op, llvm::ArrayRef<int64_t> reducedAxes,
                   bool keepDims, bool linearOverReduced);
  void visitSplit(mlir::Operation *op);
  void visitTransposeLike(mlir::Operation *op, llvm::ArrayRef<int64_t> perm);

  mlir::func::FuncOp func;
  int64_t tp;
  bool parallelLmHead;
  const OpSet &forced;
  llvm::DenseMap<mlir::Value, OpSet> origins;
  /// Split ops on the output axis of a MatMul: the parts to split apart.
};

} // namespace tpc

#endif
