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
    "[--warmup W] [--iterations N] [--json] [--comm inprocess|mpi] "
    "[--backend cpu|cuda] [--cuda-graph on|off] [--emulate-ranks] "
    "[--device N]",
    "Run an engine on the CPU (every rank as a thread of this process, or "
    "one rank per process under mpirun) or on GPUs (--backend cuda).",
    {
        {"--input", "NAME=FILE.npy", "a graph input and the .npy file that "
                                     "holds it", true},
        {"--output-dir", "DIR",
         "write rank 0's outputs here as <output name>.npy"},
        {"--threads", "N", "kernel threads per rank (default 1)"},
        {"--warmup", "W", "forwards run before timing (default 0)"},
        {"--iterations", "N", "timed forwards (default 1)"},
        {"--json", nullptr,
         "print only {\"latency_ms\": {mean, median, p90, p99, min, max}, "
         "\"throughput_per_s\", \"load_ms\", \"tp\", \"threads\", "
         "\"iterations\"} on stdout"},
        {"--comm", "inprocess|mpi",
         "how ranks communicate (default: mpi under mpirun, else inprocess)"},
        {"--oversubscribe", nullptr,
         "allow ranks x threads to exceed the available cores"},
        {"--backend", "cpu|cuda",
         "where kernels run (default cpu); cuda: one GPU per rank with NCCL, "
         "or one rank per process under mpirun"},
        {"--cuda-graph", "on|off",
         "replay forwards as CUDA graphs after the first (default on)"},
        {"--emulate-ranks", nullptr,
         "with --backend cuda: run every rank on one GPU, collectives summed "
         "on the device"},
        {"--device", "N", "with --backend cuda: the first GPU (default 0)"},
        {"--sync-steps", nullptr,
         "with --backend cuda: synchronise after every step, so that a GPU "
         "fault names its step (slow, no graphs)"},
        {"--tf32", nullptr,
         "with --backend cuda: let f32 matrix products use TF32 tensor cores "
         "(faster, about 1e-3 relative error)"},
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
  if (args.has("--backend"))
    if (Status st = runtime::parseBackend(args.get("--backend"), o.backend);
        !st)
      return fail(cmd, st.message());
  if (args.has("--cuda-graph")) {
    const std::string v = args.get("--cuda-graph");
    if (v != "on" && v != "off")
      return fail(cmd, "--cuda-graph must be 'on' or 'off', got '" + v + "'");
    o.gpu.cudaGraph = v == "on";
  }
  if (args.has("--device"))
    if (Status st = runtime::parseIntFlag("--device", args.get("--device"), 0,
                                          1023, o.gpu.device);
        !st)
      return fail(cmd, st.message());
  o.gpu.emulateRanks = args.has("--emulate-ranks");
  o.gpu.syncEachStep = args.has("--sync-steps");
  o.gpu.allowTf32 = args.has("--tf32");
  o.json = args.has("--json");
  o.oversubscribe = args.has("--oversubscribe");
  return runtime::runTool(o, std::cout, std::cerr);
}

} // namespace tpc::cli
