//===- main.cpp - The tpc driver ------------------------------------------===//
#include "compiler/Engine/PlanSerializer.h"
#include "tools/tpc/Commands.h"

#include "llvm/Config/llvm-config.h"

#include <cstdio>
#include <cstring>
#include <iterator>

using namespace tpc::cli;

static const Subcommand kSubcommands[] = {
    {&kImportCommand, runImport},
    {&kCompileCommand, runCompile},
    {&kRunCommand, runRun},
    {&kGenerateCommand, runGenerate},
    {&kInspectCommand, runInspect},
};

static void printUsage() {
  std::printf("usage: tpc <command> [flags]\n\ntpc compiles ONNX transformers "
              "into tensor-parallel engines.\n\ncommands:\n");
  for (const Subcommand &s : kSubcommands)
    std::printf("  %-10s %s\n", s.command->name, s.command->summary);
  std::printf("\n'tpc <command> --help' lists a command's flags; "
              "'tpc --version' prints the version.\n");
}

int main(int argc, char **argv) {
  if (argc == 2 && !std::strcmp(argv[1], "--version")) {
    std::printf("tpc %s (MLIR/LLVM %s, engine format %d)\n", TPC_VERSION,
                LLVM_VERSION_STRING, int(tpc::kPlanFormatVersion));
    return 0;
  }
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    printUsage();
    return argc < 2 ? 1 : 0;
  }
  bool found = false;
  int rc =
      runSubcommand(kSubcommands, std::size(kSubcommands), argc, argv, found);
  if (found)
    return rc;
  std::fprintf(stderr, "tpc: error: unknown command '%s' (see 'tpc --help')\n",
               argv[1]);
  return 1;
}
