//===- CompileCommand.cpp - tpc compile -----------------------------------===//
#include "compiler/Engine/EngineWriter.h"
#include "compiler/Importer/Importer.h"
#include "compiler/Pipeline.h"
#include "compiler/Registration.h"
#include "tools/tpc/Commands.h"
#include "tools/tpc/Diagnostics.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <filesystem>
#include <unistd.h>

namespace tpc::cli {

bool parseImportOptions(const Command &cmd, const ParsedArgs &args,
                        ImportOptions &options);

const Command kCompileCommand = {
    "compile",
    "MODEL.onnx --tp N -o ENGINE_DIR [--input-shape NAME=1x16 ...]",
    "Compile an ONNX model into a tensor-parallel engine: one plan and one "
    "weight shard per rank.",
    {
        {"--tp", "N", "tensor-parallel degree (ranks), default 1"},
        {"-o", "ENGINE_DIR", "the engine folder to write (required)"},
        {"--input-shape", "NAME=DxD",
         "static shape for an input with dynamic dimensions", true},
        {"--replicate-unclassified", nullptr,
         "keep weight MatMuls the sharding pass cannot classify replicated "
         "(a warning each) instead of failing"},
        {"--vocab-parallel-embedding", nullptr,
         "split embedding tables by vocabulary rows (Megatron layout)"},
        {"--parallel-lm-head", nullptr,
         "column-parallel LM head with an all-gather of the logits"},
        {"--dump-mlir", "FILE", "write the planned module to FILE"},
    },
    1,
    1,
};

int runCompile(const ParsedArgs &args) {
  const Command &cmd = kCompileCommand;
  if (!args.has("-o"))
    return fail(cmd, "missing -o ENGINE_DIR");
  CompileOptions opts;
  std::string tpText = args.get("--tp", "1");
  if (tpText.empty() || tpText.size() > 4 ||
      tpText.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(tpText) < 1)
    return fail(cmd, "--tp must be a positive integer, not '" + tpText + "'");
  opts.tp = std::stoi(tpText);
  opts.replicateUnclassified = args.has("--replicate-unclassified");
  opts.vocabParallelEmbedding = args.has("--vocab-parallel-embedding");
  opts.parallelLmHead = args.has("--parallel-lm-head");
  ImportOptions importOpts;
  if (!parseImportOptions(cmd, args, importOpts))
    return 1;

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  ScopedDiagnosticPrinter diag(ctx, "compile");
  const std::string &model = args.positional[0];
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importOnnxModel(ctx, model, importOpts);
  if (!module)
    return 1;
  mlir::PassManager pm(&ctx);
  buildCompilePipeline(pm, opts);
  if (mlir::failed(pm.run(*module)))
    return 1;
  if (args.has("--dump-mlir")) {
    std::error_code ec;
    llvm::raw_fd_ostream os(args.get("--dump-mlir"), ec);
    if (ec)
      return fail(cmd, "cannot write '" + args.get("--dump-mlir") +
                           "': " + ec.message());
    module->print(os);
  }

  EngineWriteOptions wopts;
  wopts.outDir = args.get("-o");
  wopts.progress = ::isatty(2);
  llvm::json::Object shapes;
  for (const auto &[name, shape] : importOpts.inputShapes) {
    llvm::json::Array dims;
    for (int64_t d : shape)
      dims.push_back(d);
    shapes[name] = std::move(dims);
  }
  wopts.compileOptions = llvm::json::Object{
      {"source", std::filesystem::path(model).filename().string()},
      {"tp", opts.tp},
      {"input_shapes", std::move(shapes)},
      {"replicate_unclassified", opts.replicateUnclassified},
      {"vocab_parallel_embedding", opts.vocabParallelEmbedding},
      {"parallel_lm_head", opts.parallelLmHead},
      {"dtype", "fp32"}};
  if (mlir::failed(writeEngine(*module, wopts)))
    return 1;
  return 0;
}

} // namespace tpc::cli
