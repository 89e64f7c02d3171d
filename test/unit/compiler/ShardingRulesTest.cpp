//===- ShardingRulesTest.cpp - Every onnx op states its sharding rule -----===//
//
// An op the importer can emit without a sharding rule would make the
// analysis refuse any model where a sharded value reaches it: adding an op
// to the dialect means adding its rule (passes/ShardingRules.cpp).
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/TPC/IR/TPCOps.h"
#include "passes/ShardingRuleInterface.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

/// Ops that exist only after partitioning (fusions), never before a
/// sharding pass: the analysis refuses them if one does reach it.
const std::set<std::string> kFusedOnly = {
    "tpc.SwiGLU", "tpc.AddNormalization", "tpc.MatMulBias", "tpc.MatMulNBits",
    "onnx.RMSNormalization", "onnx.Attention"};

TEST(ShardingRules, EveryOnnxAndTpcOpHasOne) {
  mlir::DialectRegistry registry;
  registry.insert<tpc::onnx::ONNXDialect, tpc::ext::TPCDialect>();
  tpc::registerShardingRules(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadDialect<tpc::onnx::ONNXDialect, tpc::ext::TPCDialect>();
  int checked = 0;
  for (mlir::RegisteredOperationName op : ctx.getRegisteredOperations()) {
    std::string name = op.getStringRef().str();
    if (name.rfind("onnx.", 0) != 0 && name.rfind("tpc.", 0) != 0)
      continue;
    bool hasRule = op.hasInterface<tpc::ShardingRuleOpInterface>();
    if (kFusedOnly.count(name))
      EXPECT_FALSE(hasRule) << name << " is fused after partitioning; "
                            << "update kFusedOnly if it now has a rule";
    else
      EXPECT_TRUE(hasRule) << name << " has no sharding rule";
    ++checked;
  }
  // The dialects are loaded: a test that checks nothing would pass too.
  EXPECT_GT(checked, 70);
  // The KV cache ops are sharded (split by kv heads); their rules come with
  // the tpc dialect.
  for (const char *name : {"tpc.KVState", "tpc.CacheWrite"}) {
    auto op = mlir::RegisteredOperationName::lookup(name, &ctx);
    ASSERT_TRUE(op.has_value()) << name;
    EXPECT_TRUE(op->hasInterface<tpc::ShardingRuleOpInterface>()) << name;
  }
}

} // namespace
