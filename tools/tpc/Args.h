//===- Args.h - Command-line flags of the tpc subcommands -------*- C++ -*-===//
//
// Each subcommand declares its flags in one table; parsing, validation and
// --help all come from that table.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_TOOLS_TPC_ARGS_H
#define TPC_TOOLS_TPC_ARGS_H

#include <map>
#include <string>
#include <vector>

namespace tpc::cli {

struct Flag {
  const char *name;    // "--tp"
  const char *metavar; // "N"; nullptr for a switch
  const char *help;
  bool repeated = false;
};

struct Command {
  const char *name;
  const char *usage;   // "MODEL.onnx [-o OUT.mlir]"
  const char *summary;
  std::vector<Flag> flags;
  int minPositional = 0, maxPositional = 0;
};

struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values;
  bool has(const std::string &flag) const { return values.count(flag) != 0; }
  std::string get(const std::string &flag, const std::string &dflt = "") const {
    auto it = values.find(flag);
    return it == values.end() || it->second.empty() ? dflt : it->second.back();
  }
  const std::vector<std::string> &all(const std::string &flag) const;
};

/// Parses argv[first..]; prints a clear error naming the flag and returns
/// false on bad input. Sets `helpRequested` for -h/--help.
bool parseArgs(const Command &cmd, int argc, char **argv, int first,
               ParsedArgs &out, bool &helpRequested);
void printHelp(const Command &cmd);

/// Prints "tpc <cmd>: error: <msg>" to stderr and returns 1.
int fail(const Command &cmd, const std::string &msg);

} // namespace tpc::cli

#endif
