//===- Args.cpp -----------------------------------------------------------===//
#include "tools/tpc/Args.h"
#include "tools/tpc/Commands.h"

#include <cstdio>
#include <cstring>

namespace tpc::cli {

const std::vector<std::string> &ParsedArgs::all(const std::string &flag) const {
  static const std::vector<std::string> none;
  auto it = values.find(flag);
  return it == values.end() ? none : it->second;
}

static const Flag *findFlag(const Command &cmd, const std::string &name) {
  for (const Flag &f : cmd.flags)
    if (name == f.name)
      return &f;
  return nullptr;
}

bool parseArgs(const Command &cmd, int argc, char **argv, int first,
               ParsedArgs &out, bool &helpRequested) {
  helpRequested = false;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      helpRequested = true;
      return true;
    }
    if (a.size() > 1 && a[0] == '-') {
      std::string name = a, value;
      bool inlineValue = false;
      size_t eq = a.find('=');
      if (eq != std::string::npos && a.rfind("--", 0) == 0) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        inlineValue = true;
      }
      const Flag *f = findFlag(cmd, name);
      if (!f) {
        fail(cmd, "unknown flag '" + name + "' (see 'tpc " + cmd.name +
                      " --help')");
        return false;
      }
      if (f->metavar) {
        if (!inlineValue) {
          if (i + 1 >= argc) {
            fail(cmd, std::string("flag '") + f->name + "' needs a value (" +
                          f->metavar + ")");
            return false;
          }
          value = argv[++i];
        }
      } else if (inlineValue) {
        fail(cmd, std::string("flag '") + f->name + "' takes no value");
        return false;
      }
      auto &vals = out.values[f->name];
      if (!f->repeated && !vals.empty()) {
        fail(cmd, std::string("flag '") + f->name + "' given more than once");
        return false;
      }
      vals.push_back(value);
      continue;
    }
    out.positional.push_back(a);
  }
  int n = int(out.positional.size());
  if (n < cmd.minPositional || n > cmd.maxPositional) {
    fail(cmd, std::string("usage: tpc ") + cmd.name + " " + cmd.usage);
    return false;
  }
  return true;
}

void printHelp(const Command &cmd) {
  std::printf("usage: tpc %s %s\n\n%s\n\nflags:\n", cmd.name, cmd.usage,
              cmd.summary);
  for (const Flag &f : cmd.flags) {
    std::string left = std::string(f.name) + (f.metavar ? std::string(" ") + f.metavar : "");
    std::printf("  %-28s %s%s\n", left.c_str(), f.help,
                f.repeated ? " (repeatable)" : "");
  }
  std::printf("  %-28s %s\n", "-h, --help", "show this help");
}

int fail(const Command &cmd, const std::string &msg) {
  std::fprintf(stderr, "tpc %s: error: %s\n", cmd.name, msg.c_str());
  return 1;
}

int runSubcommand(const Subcommand *subcommands, size_t count, int argc,
                  char **argv, bool &found) {
  found = false;
  for (size_t i = 0; i < count && argc >= 2; ++i) {
    const Subcommand &s = subcommands[i];
    if (std::strcmp(argv[1], s.command->name) != 0)
      continue;
    found = true;
    ParsedArgs args;
    bool help = false;
    if (!parseArgs(*s.command, argc, argv, 2, args, help))
      return 1;
    if (help) {
      printHelp(*s.command);
      return 0;
    }
    return s.run(args);
  }
  return 1;
}

} // namespace tpc::cli
