//===- RunCommand.cpp - tpc run -------------------------------------------===//
//
// Maps the flags onto runtime::RunToolOptions; the work is in
// runtime/engine/Tools.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/engine/Tools.h"
#include "tools/tpc/Commands.h"

#include <iostream>

namespace tpc::cli {

const Command kRunCommand = {
    "run",
    "ENGINE_DIR --input NAME=FILE.npy ... [--output-dir DIR] [--threads N] "
    "[--warmup W] [--iterations N] [--json] [--comm inprocess|mpi]",
    "Run an engine on the CPU: every rank as a thread of this process, or "
    "one rank per process under mpirun.",
    {
        {"--input", "NAME=FILE.npy", "a graph input and the .npy file that "
                                     "holds it", true},
        {"--output-dir", "DIR",
         "write rank 0's outputs here as <output name>.npy"},
        {"--threads", "N", "kernel threads per rank (default 1)"},
        {"--warmup", "W", "forwards run before timing (default 0)"},
        {"--iterations", "N", "timed forwards (default 1)"},
        {"--json", nullptr,
         "print only {\"latency_ms\": {median, min, max}, \"tp\", "
         "\"threads\", \"iterations\"} on stdout"},
        {"--comm", "inprocess|mpi",
         "how ranks communicate (default: mpi under mpirun, else inprocess)"},
        {"--oversubscribe", nullptr,
         "allow ranks x threads to exceed the available cores"},
    },
    1,
    1,
};

int runRun(const ParsedArgs &args) {
  const Command &cmd = kRunCommand;
  runtime::RunToolOptions o;
  o.engineDir = args.positional[0];
  for (const std::string &spec : args.all("--input")) {
    std::string name, file;
    if (Status st = runtime::parseInputSpec(spec, name, file); !st)
      return fail(cmd, st.message());
    o.inputs.push_back({name, file});
  }
  o.outputDir = args.get("--output-dir");
  struct IntFlag {
    const char *name;
    int min;
    int *value;
  } ints[] = {{"--threads", 1, &o.threadsPerRank},
              {"--warmup", 0, &o.warmup},
              {"--iterations", 1, &o.iterations}};
  for (const IntFlag &f : ints)
    if (args.has(f.name))
      if (Status st = runtime::parseIntFlag(f.name, args.get(f.name), f.min,
                                            1000000, *f.value);
          !st)
        return fail(cmd, st.message());
  if (args.has("--comm"))
    if (Status st = runtime::parseCommMode(args.get("--comm"), o.comm); !st)
      return fail(cmd, st.message());
  o.json = args.has("--json");
  o.oversubscribe = args.has("--oversubscribe");
  return runtime::runTool(o, std::cout, std::cerr);
}

} // namespace tpc::cli
