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

using namespace mlir;

namespace tpc::plugin {
namespace {

struct TestBadShardPass
    : PassWrapper<TestBadShardPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestBadShardPass)

  TestBadShardPass() = default;
  TestBadShardPass(const TestBadShardPass &other) : PassWrapper(other) {}

  StringRef getArgument() const override { return "tpc-test-bad-shard"; }
  StringRef getDescription() const override {
    return "Test fixture: MLP-only sharding without its all-reduces "
           "(inconsistent on purpose)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<tp::TPDialect, onnx::ONNXDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(shardMlpOnly(module, tp)))
      return signalPassFailure();
    SmallVector<tp::AllReduceOp> reduces;
    module.walk([&](tp::AllReduceOp ar) { reduces.push_back(ar); });
    for (tp::AllReduceOp ar : reduces) {
      ar.getResult().replaceAllUsesWith(ar.getInput());
      ar.erase();
    }
  }

  Option<int64_t> tp{*this, "tp", llvm::cl::desc("Number of ranks"),
                     llvm::cl::init(1)};
};

} // namespace

void registerTestBadShardPass() { PassRegistration<TestBadShardPass>(); }

} // namespace tpc::plugin
