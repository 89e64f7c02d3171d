//===- tpc-opt.cpp - MlirOptMain with every tpc dialect and pass ----------===//
#include "compiler/Pipeline.h"
#include "compiler/Registration.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

/// Loads the --load-pass-plugin libraries before MlirOptMain builds its
/// command line: its parser makes one flag per pass registered by then, so a
/// plugin loaded while parsing (MlirOptMain's own handling) could only be
/// used through --pass-pipeline. The flags are removed from `args`; a plugin
/// that does not load is an error rather than a warning.
static bool loadPassPlugins(std::vector<char *> &args) {
  const char *flag = "load-pass-plugin";
  size_t len = std::strlen(flag);
  std::vector<char *> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    // The command line accepts -flag and --flag, with the value after '='
    // or as the next argument.
    const char *name = args[i];
    if (i > 0 && name[0] == '-')
      name += name[1] == '-' ? 2 : 1;
    const char *path = nullptr;
    if (name != args[i] && std::strcmp(name, flag) == 0 && i + 1 < args.size())
      path = args[++i];
    else if (name != args[i] && std::strncmp(name, flag, len) == 0 &&
             name[len] == '=')
      path = name + len + 1;
    if (!path) {
      rest.push_back(args[i]);
      continue;
    }
    std::string error;
    if (mlir::failed(tpc::loadPassPlugin(path, error))) {
      llvm::errs() << "tpc-opt: error: " << error << "\n";
      return false;
    }
  }
  args = std::move(rest);
  return true;
}

/// tpc's passes, in the order `tpc compile` runs them: the head of
/// --help lists them (MLIR's own list is long and alphabetical).
static const char *const kTpcPasses[] = {
    "tpc-compile-pipeline",   "tpc-kv-cache",       "tpc-last-token-logits",
    "tpc-tp-shard",           "tpc-spmd-partition", "tpc-quantize-weights",
    "tpc-fuse-matmul-nbits",
    "tpc-fuse-layer-norm",
    "tpc-fuse-rms-norm",      "tpc-fuse-add-norm",  "tpc-fuse-gelu",
    "tpc-fuse-swiglu",        "tpc-fuse-attention", "tpc-fuse-matmul-bias",
    "tpc-bound-cache-attention", "tpc-convert-float-type", "tpc-lower-to-plan",
    "tpc-plan-memory",
};

/// "tpc optimizer driver" and one line per tpc pass with its summary.
static std::string overview() {
  std::string text = "tpc optimizer driver\n\ntpc's passes and pipeline (each "
                     "is an option below; any slice of `tpc compile`):\n";
  for (const char *name : kTpcPasses) {
    llvm::StringRef summary;
    if (const mlir::PassInfo *info = mlir::PassInfo::lookup(name))
      summary = info->getPassDescription();
    else if (const mlir::PassPipelineInfo *p =
                 mlir::PassPipelineInfo::lookup(name))
      summary = p->getPassDescription();
    text += "  --" + std::string(name);
    const int pad = std::max(2, 29 - int(std::strlen(name)));
    text += std::string(size_t(pad), ' ');
    text += summary.str() + "\n";
  }
  return text;
}

int main(int argc, char **argv) {
  // --version names tpc as well as the LLVM it is built on.
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "tpc " << TPC_VERSION << "\n";
  });
  mlir::DialectRegistry registry;
  tpc::registerAllDialects(registry);
  tpc::registerAllPasses();
  std::vector<char *> args(argv, argv + argc);
  if (!loadPassPlugins(args))
    return 1;
  int count = int(args.size());
  args.push_back(nullptr);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      count, args.data(), overview(), registry));
}
