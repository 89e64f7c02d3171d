//===- tpc-opt.cpp - MlirOptMain with every tpc dialect and pass ----------===//
#include "compiler/Pipeline.h"
#include "compiler/Registration.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
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
      count, args.data(), "tpc optimizer driver\n", registry));
}
