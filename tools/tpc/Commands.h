//===- Commands.h - tpc subcommands -----------------------------*- C++ -*-===//
#ifndef TPC_TOOLS_TPC_COMMANDS_H
#define TPC_TOOLS_TPC_COMMANDS_H

#include "tools/tpc/Args.h"

namespace tpc::cli {

struct Subcommand {
  const Command *command;
  int (*run)(const ParsedArgs &args);
};

/// Runs the one of `subcommands` that argv[1] names, with its flags parsed
/// (or its --help printed); false in `found` when none is named so.
int runSubcommand(const Subcommand *subcommands, size_t count, int argc,
                  char **argv, bool &found);

extern const Command kImportCommand;
int runImport(const ParsedArgs &args);
extern const Command kCompileCommand;
int runCompile(const ParsedArgs &args);
extern const Command kRunCommand;
int runRun(const ParsedArgs &args);
extern const Command kGenerateCommand;
int runGenerate(const ParsedArgs &args);
extern const Command kInspectCommand;
int runInspect(const ParsedArgs &args);

} // namespace tpc::cli

#endif
