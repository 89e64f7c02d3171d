//===- TestRuleOps.cpp - A dialect plugin with its own sharding rule ------===//
//
// tpc-opt --load-dialect-plugin loads it; its `scale` op tells tpc's
// sharding analysis how shardings flow through it.
//
//===----------------------------------------------------------------------===//
#include "passes/ShardingAnalysis.h"
#include "passes/ShardingRuleInterface.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "llvm/Config/llvm-config.h"

#include "TestRuleOpsDialect.h.inc"
#define GET_OP_CLASSES
#include "TestRuleOps.h.inc"

#include "TestRuleOpsDialect.cpp.inc"
#define GET_OP_CLASSES
#include "TestRuleOps.cpp.inc"

namespace tpctest {

void TestRuleDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "TestRuleOps.cpp.inc"
      >();
}

/// Multiplying by a constant is linear: a partial sum stays one, and a split
/// stays where it is.
mlir::LogicalResult ScaleOp::propagateSharding(tpc::ShardingAnalysis &a) {
  tpc::Sharding s = a.of(getInput());
  a.set(getOutput(), s, a.originsOf(getInput()));
  return mlir::success();
}

} // namespace tpctest

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TPCTestRules", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<tpctest::TestRuleDialect>();
          }};
}
