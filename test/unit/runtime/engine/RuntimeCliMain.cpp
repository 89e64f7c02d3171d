//===- RuntimeCliMain.cpp - tpc run/inspect without the compiler ----------===//
//
// The runtime subcommands of the tpc driver (run, generate, inspect: the
// same flag tables and command functions) in an executable that needs no
// MLIR, so that the command lines, and runs under mpirun, are tested in
// builds without the compiler, and so that engines compiled on one machine
// run on another that has no MLIR (scripts/gpu-bundle).
//
//===----------------------------------------------------------------------===//
#include "tools/tpc/Commands.h"

#include <cstdio>
#include <iterator>

using namespace tpc::cli;

int main(int argc, char **argv) {
  const Subcommand subcommands[] = {{&kRunCommand, runRun},
                                    {&kGenerateCommand, runGenerate},
                                    {&kInspectCommand, runInspect}};
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s run|generate|inspect ...\n", argv[0]);
    return 1;
  }
  bool found = false;
  int rc =
      runSubcommand(subcommands, std::size(subcommands), argc, argv, found);
  if (found)
    return rc;
  std::fprintf(stderr, "unknown command '%s'\n", argv[1]);
  return 1;
}
