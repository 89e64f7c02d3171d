//===- TestBadSharding.cpp - A sharding pass with a mistake ---------------===//
//
// A test fixture, not a policy: it shards like tpc-mlp-only-shard and then
// drops every all-reduce, the mistake a hand-written pass is most likely to
// make. The partial sums reach ops annotated as if they were whole, and
// tpc-spmd-partition's check must refuse the program.
//
//===----------------------------------------------------------------------===//
#include "passes/plugin/MlpOnlySharding.h"

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

using namespace mlir;

namespace tpc::test {
#define GEN_PASS_DECL_TESTBADSHARDPASS
#define GEN_PASS_DEF_TESTBADSHARDPASS
#define GEN_PASS_REGISTRATION
#include "test/plugin/bad/Passes.h.inc"

namespace {

struct TestBadShardPass : impl::TestBadShardPassBase<TestBadShardPass> {
  using TestBadShardPassBase::TestBadShardPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(plugin::shardMlpOnly(module, tp)))
      return signalPassFailure();
    SmallVector<tp::AllReduceOp> reduces;
    module.walk([&](tp::AllReduceOp ar) { reduces.push_back(ar); });
    for (tp::AllReduceOp ar : reduces) {
      ar.getResult().replaceAllUsesWith(ar.getInput());
      ar.erase();
    }
  }
};

} // namespace
} // namespace tpc::test

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TPCTestBadSharding", LLVM_VERSION_STRING,
          []() { tpc::test::registerTPCTestBadShardingPasses(); }};
}
