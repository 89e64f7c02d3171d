//===- FuzzOnnx.cpp - libFuzzer harness: the ONNX importer ----------------===//
//
// Input: a .onnx file. Importing must produce a verified module or
// diagnostics; a module that imports is compiled at tp 1 and tp 2 (through
// the plan, without writing an engine), which must succeed or fail with
// diagnostics. (Inputs with symbolic dimensions are refused by the
// importer; scripts/fuzz pins them in the seed corpus.)

#include "compiler/Importer/Importer.h"
#include "compiler/Pipeline.h"
#include "compiler/Registration.h"
#include "test/fuzz/FuzzSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <cstdlib>

using namespace tpc;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  registerAllPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeScratch("in.onnx", data, size);
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.disableMultithreading();
  // Diagnostics are the expected outcome of most inputs: swallow them.
  mlir::ScopedDiagnosticHandler quiet(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  ImportOptions options;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importOnnxModel(ctx, path, options);
  if (!module)
    return 0;
  // The importer promises a verified module.
  if (mlir::failed(mlir::verify(*module)))
    std::abort();
  for (int tp : {1, 2}) {
    mlir::OwningOpRef<mlir::ModuleOp> copy(module->clone());
    mlir::PassManager pm(&ctx);
    CompileOptions opts;
    opts.tp = tp;
    if (mlir::failed(buildCompilePipeline(
            pm, opts, [](const llvm::Twine &) { return mlir::failure(); })))
      std::abort();
    (void)pm.run(*copy);
  }
  return 0;
}
