//===- Passes.td - The example sharding plugin's passes ----*- tablegen -*-===//
//
// A plugin declares its passes as tpc's own are declared (passes/Passes.td):
// mlir-tblgen -gen-pass-decls writes each pass's base class with its
// options, and the registration function the plugin's entry point calls.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_PASSES_PLUGIN_PASSES
#define TPC_PASSES_PLUGIN_PASSES

include "mlir/Pass/PassBase.td"

def MlpOnlyShardPass : Pass<"tpc-mlp-only-shard", "mlir::ModuleOp"> {
  let summary = "Shard only the MLPs (column then row parallel); keep "
                "attention replicated";
  let description = [{
    An example sharding policy built on tpc's sharding analysis: the
    attention projections (the weight MatMuls joined by dataflow to a
    MatMul of two activations, the scores or the context) are kept
    replicated, every other weight MatMul is sharded as tpc-tp-shard would
    shard it, so each MLP is column- then row-parallel with one all-reduce
    per layer.
  }];
  let dependentDialects = ["::tpc::tp::TPDialect", "::tpc::onnx::ONNXDialect"];
  let options = [
    Option<"tp", "tp", "int64_t", /*default=*/"1", "Number of ranks">,
  ];
}

#endif
