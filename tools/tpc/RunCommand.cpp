//===- RunCommand.cpp - tpc run -------------------------------------------===//
//
// Maps the flags onto runtime::RunToolOptions; the work is in
// runtime/engine/Tools.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/engine/EngineManifest.h"
#include "runtime/engine/Tools.h"
#include "tools/tpc/Commands.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/tpc/CheckOutputsScript.inc"

namespace tpc::cli {

const Command kRunCommand = {
    "run",
    "ENGINE_DIR --input NAME=FILE.npy ... [--inputs FILE.npz] "
    "[--output-dir DIR] [--threads N] "
    "[--warmup W] [--iterations N] [--json] [--comm inprocess|mpi] "
    "[--backend cpu|cuda] [--cuda-graph on|off] [--emulate-ranks] "
    "[--device N] [--random-inputs [--seed N]] [--check [--atol A] "
    "[--rtol R]]",
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
        {"--inputs", "FILE.npz",
         "inputs by name from a numpy.savez / savez_compressed archive",
         true},
        {"--random-inputs", nullptr,
         "generate the inputs not given by --input: token ids uniform below "
         "the table they index, other integers 1 (masks), floats standard "
         "normal"},
        {"--seed", "N", "with --random-inputs: the generator's seed (default 0)"},
        {"--check", nullptr,
         "also run the source model in onnxruntime on the same inputs and "
         "compare every output (max abs and relative error, top-1 agreement "
         "for logits); exit 1 outside --atol + --rtol * |expected| (Python: "
         "$TPC_PYTHON, else python3)"},
        {"--atol", "A", "with --check: absolute tolerance (default 1e-4)"},
        {"--rtol", "R", "with --check: relative tolerance (default 1e-3)"},
        {"--tf32", nullptr,
         "with --backend cuda: let f32 matrix products use TF32 tensor cores "
         "(faster, about 1e-3 relative error)"},
    },
    1,
    1,
};

namespace {

/// A tolerance flag: a finite number >= 0.
bool parseTolerance(const Command &cmd, const ParsedArgs &args,
                    const char *flag, double dflt, double &out) {
  out = dflt;
  if (!args.has(flag))
    return true;
  const std::string text = args.get(flag);
  char *end = nullptr;
  out = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(out >= 0) || out > 1e30) {
    fail(cmd, std::string(flag) + " must be a number >= 0, got '" + text +
                  "'");
    return false;
  }
  return true;
}

/// This process's rank under mpirun, 0 when not launched by it.
int launcherRank() {
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char *v = std::getenv(var))
      return std::atoi(v);
  return 0;
}

/// Runs `argv` and returns its exit status (-1 when it could not start or
/// died of a signal).
int spawn(const std::vector<std::string> &argv) {
  std::vector<char *> cargv;
  for (const std::string &a : argv)
    cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
    return -1;
  return WEXITSTATUS(status);
}

/// The paths engine.json's options record for the check: the source model
/// and the --const-input files.
Status checkSources(const std::string &engineDir, std::string &model,
                    std::vector<std::string> &constSpecs) {
  runtime::EngineManifest manifest;
  TPC_RETURN_IF_ERROR(runtime::EngineManifest::load(engineDir, manifest));
  nlohmann::json opts =
      nlohmann::json::parse(manifest.optionsJson, nullptr, false);
  if (!opts.is_object() || !opts.contains("source_path") ||
      !opts["source_path"].is_string())
    return Status::error("--check: engine.json records no source model path "
                         "(the engine was written by an older tpc); "
                         "recompile it");
  model = opts["source_path"].get<std::string>();
  if (!std::filesystem::exists(model))
    return Status::error("--check: the source model '" + model +
                         "' that engine.json records is gone");
  if (opts.contains("const_inputs") && opts["const_inputs"].is_object())
    for (const auto &[name, file] : opts["const_inputs"].items()) {
      if (!file.is_string() ||
          !std::filesystem::exists(file.get<std::string>()))
        return Status::error("--check: the --const-input file of '" + name +
                             "' is gone");
      constSpecs.push_back(name + "=" + file.get<std::string>());
    }
  return Status::ok();
}

/// tpc run --check: the run, then the outputs against onnxruntime.
int runChecked(const Command &cmd, const ParsedArgs &args,
               runtime::RunToolOptions o) {
  double atol, rtol;
  if (!parseTolerance(cmd, args, "--atol", 1e-4, atol) ||
      !parseTolerance(cmd, args, "--rtol", 1e-3, rtol))
    return 1;
  std::string model;
  std::vector<std::string> constSpecs;
  if (Status st = checkSources(o.engineDir, model, constSpecs); !st)
    return fail(cmd, st.message());
  std::string tempDir;
  if (o.outputDir.empty()) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tpc-check-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      return fail(cmd, "--check: cannot create a temporary folder");
    tempDir = o.outputDir = pattern;
  }
  int rc = runtime::runTool(o, std::cout, std::cerr);
  if (rc == 0 && launcherRank() == 0) {
    const char *python = std::getenv("TPC_PYTHON");
    std::vector<std::string> argv = {python && *python ? python : "python3",
                                     "-c", kCheckOutputsScript, model,
                                     o.outputDir, std::to_string(atol),
                                     std::to_string(rtol)};
    for (const auto &[name, file] : o.inputs)
      argv.push_back(name + "=" + file);
    argv.insert(argv.end(), o.inputArchives.begin(), o.inputArchives.end());
    // --random-inputs wrote what it generated beside the outputs.
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(
             std::filesystem::path(o.outputDir) / "inputs", ec))
      if (entry.path().extension() == ".npy")
        argv.push_back(entry.path().stem().string() + "=" +
                       entry.path().string());
    argv.insert(argv.end(), constSpecs.begin(), constSpecs.end());
    std::cout.flush();
    int check = spawn(argv);
    if (check < 0 || check == 127) {
      fail(cmd, "--check: cannot run '" + argv[0] +
                    "' (set TPC_PYTHON to a Python with onnxruntime)");
      rc = 1;
    } else {
      rc = check == 0 ? 0 : 1;
    }
  }
  if (!tempDir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(tempDir, ec);
  }
  return rc;
}

} // namespace

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
  o.inputArchives = args.all("--inputs");
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
  o.randomInputs = args.has("--random-inputs");
  if (args.has("--seed")) {
    if (!o.randomInputs)
      return fail(cmd, "--seed applies with --random-inputs");
    int seed = 0;
    if (Status st = runtime::parseIntFlag("--seed", args.get("--seed"), 0,
                                          2147483647, seed);
        !st)
      return fail(cmd, st.message());
    o.seed = uint64_t(seed);
  }
  if (!args.has("--check")) {
    for (const char *flag : {"--atol", "--rtol"})
      if (args.has(flag))
        return fail(cmd, std::string(flag) + " applies with --check");
    return runtime::runTool(o, std::cout, std::cerr);
  }
  return runChecked(cmd, args, o);
}

} // namespace tpc::cli
