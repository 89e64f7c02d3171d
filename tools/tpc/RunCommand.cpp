//===- RunCommand.cpp - tpc run -------------------------------------------===//
//
// Maps the flags onto runtime::RunToolOptions; the work is in
// runtime/engine/Tools.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/engine/EngineManifest.h"
#include "runtime/support/ParseChoice.h"
#include "tools/run/Tools.h"
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
    "[--comm-timeout SECONDS] [--profile TRACE.json] "
    "[--backend cpu|cuda] [--cuda-graph on|off] [--emulate-ranks] "
    "[--device N] [--random-inputs [--seed N]] [--check [--check-against "
    "onnxruntime|tp1] [--atol A] [--rtol R]]",
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
        {"--profile", "TRACE.json",
         "time every step of every rank over the timed runs: a Chrome trace "
         "(open it in Perfetto; each collective also gives the time it "
         "waited for the slowest peer) and a table of the 10 slowest steps "
         "(CPU backend)"},
        {"--no-collective-checks", nullptr,
         "under mpirun, skip the check that every rank makes the same "
         "collective call (one small all-reduce per collective)"},
        {"--comm-timeout", "SECONDS",
         "how long a rank waits in a collective for its peers before the run "
         "fails, naming the collective (default 60; CPU backend, in process "
         "and under mpirun)"},
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
        {"--check-against", "onnxruntime|tp1",
         "with --check: the reference, onnxruntime on the source model "
         "(default) or a tp=1 build of it compiled and run on the same inputs"},
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
int spawn(const std::vector<std::string> &argv, bool quiet = false) {
  std::vector<char *> cargv;
  for (const std::string &a : argv)
    cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    if (quiet)
      if (FILE *null = std::fopen("/dev/null", "w"))
        dup2(fileno(null), 1);
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
    return -1;
  return WEXITSTATUS(status);
}

/// What engine.json's options record for the check: `opts` itself, the
/// source model and the --const-input files.
Status checkSources(const std::string &engineDir, nlohmann::json &opts,
                    std::string &model, std::vector<std::string> &constSpecs) {
  runtime::EngineManifest manifest;
  TPC_RETURN_IF_ERROR(runtime::EngineManifest::load(engineDir, manifest));
  opts = nlohmann::json::parse(manifest.optionsJson, nullptr, false);
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

/// The reference outputs of --check-against tp1: the source model compiled
/// at tp 1 with the engine's input shapes, const inputs and dtype (`opts`,
/// engine.json's options; by this driver), run on `inputs` into `dir`/out.
Status tp1Reference(const nlohmann::json &opts, const std::string &model,
                    const std::vector<std::string> &constSpecs,
                    const std::vector<std::string> &inputs,
                    const std::string &dir) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0)
    return Status::error("--check-against tp1: cannot find this tpc");
  const std::string tpc(self, size_t(n));
  std::vector<std::string> compile = {tpc, "compile", model, "--tp", "1",
                                      "-o", dir + "/e1", "--quiet"};
  if (opts.is_object() && opts.contains("dtype") && opts["dtype"].is_string())
    compile.insert(compile.end(), {"--dtype", opts["dtype"].get<std::string>()});
  // A quantized engine's reference is quantized the same way.
  if (opts.is_object() && opts.contains("quantize") &&
      opts["quantize"].is_object()) {
    const nlohmann::json &q = opts["quantize"];
    compile.insert(compile.end(),
                   {"--quantize", q.value("type", std::string("int4")),
                    "--block-size", std::to_string(q.value("block_size", 32)),
                    q.value("symmetric", true) ? "--symmetric"
                                               : "--asymmetric"});
    if (q.contains("skip") && q["skip"].is_array())
      for (const auto &g : q["skip"])
        if (g.is_string())
          compile.insert(compile.end(),
                         {"--quantize-skip", g.get<std::string>()});
  }
  if (opts.is_object() && opts.contains("input_shapes") &&
      opts["input_shapes"].is_object())
    for (const auto &[name, dims] : opts["input_shapes"].items()) {
      std::string shape;
      if (dims.is_string()) // with run-time dimensions: "1xsequence:1..64"
        shape = dims.get<std::string>();
      for (const auto &d : dims)
        if (d.is_number_integer())
          shape +=
              (shape.empty() ? "" : "x") + std::to_string(d.get<int64_t>());
      compile.insert(compile.end(),
                     {"--input-shape", name + "=" + (shape.empty() ? "scalar" : shape)});
    }
  for (const std::string &c : constSpecs)
    compile.insert(compile.end(), {"--const-input", c});
  if (spawn(compile, true) != 0)
    return Status::error("--check-against tp1: compiling '" + model +
                         "' at tp 1 failed (see above)");
  std::vector<std::string> run = {tpc, "run", dir + "/e1", "--output-dir",
                                  dir + "/out"};
  run.insert(run.end(), inputs.begin(), inputs.end());
  if (spawn(run, true) != 0)
    return Status::error("--check-against tp1: running the tp 1 build "
                         "failed (see above)");
  return Status::ok();
}

/// tpc run --check: the run, then the outputs against onnxruntime.
int runChecked(const Command &cmd, const ParsedArgs &args,
               runtime::RunToolOptions o) {
  double atol, rtol;
  if (!parseTolerance(cmd, args, "--atol", 1e-4, atol) ||
      !parseTolerance(cmd, args, "--rtol", 1e-3, rtol))
    return 1;
  bool againstTp1 = false;
  if (Status st = parseChoice(
          "--check-against", args.get("--check-against", "onnxruntime"),
          {{"onnxruntime", false}, {"tp1", true}}, againstTp1);
      !st)
    return fail(cmd, st.message());
  nlohmann::json opts;
  std::string model;
  std::vector<std::string> constSpecs;
  if (Status st = checkSources(o.engineDir, opts, model, constSpecs); !st)
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
  std::string refDir;
  if (rc == 0 && launcherRank() == 0) {
    // The inputs as name=file specs (and .npz archives), for either check.
    std::vector<std::string> inputSpecs, runFlags;
    for (const auto &[name, file] : o.inputs)
      inputSpecs.push_back(name + "=" + file);
    // --random-inputs wrote what it generated beside the outputs.
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(
             std::filesystem::path(o.outputDir) / "inputs", ec))
      if (entry.path().extension() == ".npy")
        inputSpecs.push_back(entry.path().stem().string() + "=" +
                             entry.path().string());
    for (const std::string &spec : inputSpecs)
      runFlags.insert(runFlags.end(), {"--input", spec});
    for (const std::string &a : o.inputArchives)
      runFlags.insert(runFlags.end(), {"--inputs", a});
    const char *python = std::getenv("TPC_PYTHON");
    std::vector<std::string> argv = {python && *python ? python : "python3",
                                     "-c", kCheckOutputsScript, model,
                                     o.outputDir, std::to_string(atol),
                                     std::to_string(rtol)};
    if (againstTp1) {
      std::string pattern =
          (std::filesystem::temp_directory_path() / "tpc-tp1-XXXXXX").string();
      if (!mkdtemp(pattern.data()))
        return fail(cmd, "--check: cannot create a temporary folder");
      refDir = pattern;
      if (Status st = tp1Reference(opts, model, constSpecs, runFlags,
                                   refDir);
          !st) {
        fail(cmd, st.message());
        rc = 1;
      }
      argv[3] = "dir:" + refDir + "/out";
    } else {
      argv.insert(argv.end(), inputSpecs.begin(), inputSpecs.end());
      argv.insert(argv.end(), o.inputArchives.begin(), o.inputArchives.end());
      argv.insert(argv.end(), constSpecs.begin(), constSpecs.end());
    }
    std::cout.flush();
    int check = rc != 0 ? 0 : spawn(argv);
    if (check < 0 || check == 127) {
      fail(cmd, "--check: cannot run '" + argv[0] +
                    "' (set TPC_PYTHON to a Python with onnxruntime)");
      rc = 1;
    } else if (rc == 0) {
      rc = check == 0 ? 0 : 1;
    }
  }
  std::error_code ec;
  if (!tempDir.empty())
    std::filesystem::remove_all(tempDir, ec);
  if (!refDir.empty())
    std::filesystem::remove_all(refDir, ec);
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
  o.profilePath = args.get("--profile");
  if (args.has("--profile") && o.profilePath.empty())
    return fail(cmd, "--profile needs a file name");
  struct IntFlag {
    const char *name;
    int min;
    int *value;
  } ints[] = {{"--threads", 1, &o.threadsPerRank},
              {"--comm-timeout", 1, &o.commTimeoutSeconds},
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
  if (args.has("--cuda-graph"))
    if (Status st =
            parseChoice("--cuda-graph", args.get("--cuda-graph"),
                        {{"on", true}, {"off", false}}, o.gpu.cudaGraph);
        !st)
      return fail(cmd, st.message());
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
  o.checkCollectives = !args.has("--no-collective-checks");
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
    for (const char *flag : {"--atol", "--rtol", "--check-against"})
      if (args.has(flag))
        return fail(cmd, std::string(flag) + " applies with --check");
    return runtime::runTool(o, std::cout, std::cerr);
  }
  return runChecked(cmd, args, o);
}

} // namespace tpc::cli
