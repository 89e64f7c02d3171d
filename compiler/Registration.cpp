//===- Registration.cpp ---------------------------------------------------===//
#include "compiler/Registration.h"
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/Plan/IR/PlanOps.h"
#include "compiler/Dialect/TP/IR/TPOps.h"
#include "compiler/Dialect/TPC/IR/TPCOps.h"
#include "compiler/Pipeline.h"
#include "compiler/Transforms/Passes.h"
#include "passes/Passes.h"
#include "passes/ShardingRuleInterface.h"
#include "passes/fusion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

namespace tpc {

void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::func::FuncDialect, onnx::ONNXDialect, plan::PlanDialect,
                  tp::TPDialect, ext::TPCDialect>();
  registerShardingRules(registry);
}

void registerAllPasses() {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  registerTPCCompilerPasses();
  registerTPCShardingPasses();
  registerTPCFusionPasses();
  registerCompilePipeline();
}

} // namespace tpc
