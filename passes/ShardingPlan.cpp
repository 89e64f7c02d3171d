//===- ShardingPlan.cpp - The user's sharding plan file -------------------===//
#include "passes/ShardingPlan.h"
#include "passes/ShardingAnalysis.h"

#include "compiler/Dialect/ONNX/IR/ValueUtils.h"
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/TP/IR/TPOps.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

namespace tpc {

std::string weightNameOf(Operation *matmul) {
  if (onnx::WeightOp w = weightOf(matmul->getOperand(1)))
    return w.getName().str();
  return "";
}

/// tpc's role for a plan word: Hugging Face's tp_plan words or tpc's own.
static std::optional<tp::Role> roleOf(llvm::StringRef word) {
  if (word == "colwise")
    return tp::Role::Column;
  if (word == "rowwise")
    return tp::Role::Row;
  if (word == "replicate")
    return tp::Role::Replicated;
  return tp::symbolizeRole(word);
}

bool ShardingPlan::read(const std::string &path, ShardingPlan &plan,
                        std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    error = "cannot read sharding plan '" + path +
            "': " + buf.getError().message();
    return false;
  }
  llvm::Expected<llvm::json::Value> doc =
      llvm::json::parse((*buf)->getBuffer());
  if (!doc) {
    error = "sharding plan '" + path +
            "' is not JSON: " + llvm::toString(doc.takeError());
    return false;
  }
  const llvm::json::Object *root = doc->getAsObject();
  if (!root) {
    error = "sharding plan '" + path + "' must be a JSON object";
    return false;
  }
  auto addAll = [&](const llvm::json::Object &obj,
                    llvm::StringRef scope) -> bool {
    for (const auto &kv : obj) {
      std::optional<llvm::StringRef> word = kv.second.getAsString();
      std::optional<tp::Role> role =
          word ? roleOf(*word) : std::optional<tp::Role>();
      if (!role) {
        error = "sharding plan '" + path + "': entry '" + kv.first.str() +
                "' has no role tpc knows (colwise, rowwise or replicate)";
        return false;
      }
      ShardingPlanEntry &e = plan.entries.emplace_back();
      e.scope = scope.str();
      e.pattern = kv.first.str();
      e.role = *role;
      e.word = word->str();
      llvm::Expected<llvm::GlobPattern> glob =
          llvm::GlobPattern::create(e.pattern);
      if (!glob) {
        error = "sharding plan '" + path + "': bad pattern '" + e.pattern +
                "': " + llvm::toString(glob.takeError());
        return false;
      }
      e.glob = std::move(*glob);
    }
    return true;
  };
  bool scoped = root->get("nodes") || root->get("weights");
  if (!scoped)
    return addAll(*root, "");
  for (llvm::StringRef scope : {"nodes", "weights"}) {
    const llvm::json::Value *v = root->get(scope);
    if (!v)
      continue;
    const llvm::json::Object *obj = v->getAsObject();
    if (!obj) {
      error = "sharding plan '" + path + "': \"" + scope.str() +
              "\" must be an object";
      return false;
    }
    if (!addAll(*obj, scope))
      return false;
  }
  return true;
}

ShardingPlanEntry *ShardingPlan::lookup(Operation *op) {
  std::string node = nodeNameOf(op->getLoc());
  std::string weight = weightNameOf(op);
  llvm::StringRef module = weight;
  module.consume_back(".weight");
  ShardingPlanEntry *first = nullptr;
  for (ShardingPlanEntry &e : entries) {
    bool byNode = e.scope != "weights" && !node.empty() && e.glob.match(node);
    bool byWeight = e.scope != "nodes" && !weight.empty() &&
                    (e.glob.match(weight) ||
                     (e.scope.empty() && e.glob.match(module)));
    if (!byNode && !byWeight)
      continue;
    e.used = true;
    if (!first)
      first = &e;
  }
  return first;
}

} // namespace tpc
