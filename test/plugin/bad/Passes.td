//===- Passes.td - A sharding pass with a mistake ----------*- tablegen -*-===//
#ifndef TPC_TEST_PLUGIN_BAD_PASSES
#define TPC_TEST_PLUGIN_BAD_PASSES

include "mlir/Pass/PassBase.td"

def TestBadShardPass : Pass<"tpc-test-bad-shard", "mlir::ModuleOp"> {
  let summary = "Test fixture: MLP-only sharding without its all-reduces "
                "(inconsistent on purpose)";
  let dependentDialects = ["::tpc::tp::TPDialect", "::tpc::onnx::ONNXDialect"];
  let options = [
    Option<"tp", "tp", "int64_t", /*default=*/"1", "Number of ranks">,
  ];
}

#endif
