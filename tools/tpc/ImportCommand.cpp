//===- ImportCommand.cpp - tpc import -------------------------------------===//
#include "compiler/Engine/RunTimeDims.h"
#include "compiler/Importer/Importer.h"
#include "compiler/Registration.h"
#include "runtime/io/Npy.h"
#include "tools/tpc/Commands.h"
#include "tools/tpc/Diagnostics.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace tpc::cli {

const Command kImportCommand = {
    "import",
    "MODEL.onnx [-o OUT.mlir] [--input-shape NAME=1x16 ...]",
    "Import an ONNX model into the onnx dialect (static shapes, shape "
    "plumbing folded).",
    {
        {"-o", "OUT.mlir", "write the module here instead of stdout"},
        {"--input-shape", "NAME=DxD",
         "static shape for an input with dynamic dimensions", true},
        {"--const-input", "NAME=FILE.npy",
         "bind a graph input to the array in FILE at compile time (shape "
         "operands such as Reshape's shape or Reduce axes must be "
         "constants); the engine no longer takes it",
         true},
        {"--kv-cache", "LENGTH",
         "import one decode step of an export with past inputs, as tpc "
         "compile --kv-cache LENGTH does (caches of LENGTH positions, a "
         "cache_position input)"},
        {"--list-ops", nullptr,
         "print the supported ops as a Markdown table and exit"},
        {"--opset-range", nullptr,
         "print the lowest and highest default-domain opset accepted and "
         "exit"},
    },
    0,
    1,
};

/// Fills import options from --input-shape, --const-input and --kv-cache
/// flags; false after an error.
bool parseImportOptions(const Command &cmd, const ParsedArgs &args,
                        ImportOptions &options) {
  if (args.has("--kv-cache")) {
    std::string text = args.get("--kv-cache");
    if (text.empty() || text.size() > 9 ||
        text.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(text) < 2) {
      fail(cmd, "--kv-cache must be a length of at least 2 positions, not '" +
                    text + "'");
      return false;
    }
    options.kvCacheLength = std::stoll(text);
  }
  for (const std::string &spec : args.all("--const-input")) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      fail(cmd, "malformed --const-input '" + spec +
                    "' (expected NAME=FILE.npy)");
      return false;
    }
    std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    if (options.constInputs.count(name)) {
      fail(cmd, "--const-input given twice for '" + name + "'");
      return false;
    }
    NpyArray array;
    if (Status st = readNpy(file, array); !st) {
      fail(cmd, "--const-input " + name + ": " + st.message());
      return false;
    }
    ConstInput &ci = options.constInputs[name];
    ci.onnxType = int32_t(array.desc.dtype);
    ci.shape = array.desc.shape;
    ci.data = std::move(array.data);
    ci.source = file;
  }
  for (const std::string &spec : args.all("--input-shape")) {
    std::string name;
    std::vector<int64_t> shape;
    // Ranges (run-time dimensions) are tpc compile's: it imports the model
    // at sample points of them (compiler/Engine/RunTimeDims.h).
    if (hasInputShapeRange(spec)) {
      if (cmd.name == std::string("compile"))
        continue;
      fail(cmd, "--input-shape '" + spec + "' has a range; tpc " + cmd.name +
                    " takes static shapes (ranges are for tpc compile)");
      return false;
    }
    if (!parseInputShape(spec, name, shape)) {
      fail(cmd, "malformed --input-shape '" + spec +
                    "' (expected NAME=1x16, dims separated by 'x')");
      return false;
    }
    if (options.inputShapes.count(name)) {
      fail(cmd, "--input-shape given twice for '" + name + "'");
      return false;
    }
    options.inputShapes[name] = shape;
  }
  return true;
}

static int listOps() {
  llvm::outs() << "| ONNX op | since opset | imports as | domain |\n"
               << "|---|---|---|---|\n";
  for (const SupportedOp &op : supportedOps())
    llvm::outs() << "| " << op.opType << " | " << op.sinceVersion << " | "
                 << op.importsAs << " | "
                 << (op.domain.empty() ? "ai.onnx" : op.domain) << " |\n";
  return 0;
}

int runImport(const ParsedArgs &args) {
  const Command &cmd = kImportCommand;
  if (args.has("--list-ops"))
    return listOps();
  if (args.has("--opset-range")) {
    llvm::outs() << kMinOpset << " " << kMaxOpset << "\n";
    return 0;
  }
  if (args.positional.empty())
    return fail(cmd, std::string("usage: tpc import ") + cmd.usage);
  ImportOptions options;
  if (!parseImportOptions(cmd, args, options))
    return 1;
  mlir::MLIRContext ctx;
  ScopedDiagnosticPrinter diag(ctx, "import");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importOnnxModel(ctx, args.positional[0], options);
  if (!module)
    return 1;
  std::string err;
  std::string out = args.get("-o", "-");
  auto file = mlir::openOutputFile(out, &err);
  if (!file)
    return fail(cmd, "cannot write '" + out + "': " + err);
  module->print(file->os());
  file->keep();
  return 0;
}

} // namespace tpc::cli
