//===- ShardingPlan.h - The user's sharding plan file -----------*- C++ -*-===//
//
// A sharding plan names the role of weight MatMuls in Hugging Face tp_plan
// words (colwise, rowwise, replicate), keyed by globs over ONNX node names
// or weight (initializer) names. `tpc compile --dump-sharding` writes one;
// `--sharding-plan` reads one as intent the sharding pass honours or
// rejects with a reason.
//
//   {"format": "tpc-sharding-plan", "version": 1,
//    "nodes": {"/model/layers.*/mlp/down_proj/MatMul": "rowwise"},
//    "weights": {"lm_head.weight": "replicate"}}
//
// A flat object of "glob": "word" pairs (a Hugging Face tp_plan) is read too,
// each glob matched against node names, weight names, and weight names
// without their ".weight" suffix (module names).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_PASSES_SHARDINGPLAN_H
#define TPC_PASSES_SHARDINGPLAN_H

#include "compiler/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/GlobPattern.h"

#include <list>
#include <string>

namespace tpc {

struct ShardingPlanEntry {
  /// "nodes", "weights", or "" for a flat tp_plan entry.
  std::string scope;
  std::string pattern;
  /// Refers to `pattern`'s characters.
  llvm::GlobPattern glob;
  /// tpc's role for `word`.
  tp::Role role = tp::Role::Replicated;
  /// The word the file used.
  std::string word;
  /// Whether some weight MatMul matched.
  bool used = false;
};

struct ShardingPlan {
  /// A list: each glob points into its entry's `pattern`, which must not
  /// move.
  std::list<ShardingPlanEntry> entries;

  /// Reads `path`; on failure `error` says what is wrong, naming the file.
  static bool read(const std::string &path, ShardingPlan &plan,
                   std::string &error);
  /// The first entry that names weight MatMul `op`, or null; every entry
  /// that names it is marked used.
  ShardingPlanEntry *lookup(mlir::Operation *op);
};

/// The initializer a weight MatMul reads (through a transpose), "" when it
/// cannot be named.
std::string weightNameOf(mlir::Operation *matmul);

} // namespace tpc

#endif
