//===- CompileCommand.cpp - tpc compile -----------------------------------===//
#include "compiler/Engine/EngineWriter.h"
#include "compiler/Engine/Generation.h"
#include "compiler/Engine/RunTimeDims.h"
#include "compiler/Importer/Importer.h"
#include "compiler/Importer/ModelFile.h"
#include "compiler/Importer/ShardingAnnotations.h"
#include "compiler/Pipeline.h"
#include "compiler/Registration.h"
#include "passes/ShardingAnalysis.h"
#include "runtime/engine/Inspect.h"
#include "runtime/engine/RankEngine.h"
#include "tools/tpc/Commands.h"
#include "tools/tpc/Diagnostics.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

namespace tpc::cli {

bool parseImportOptions(const Command &cmd, const ParsedArgs &args,
                        ImportOptions &options);

const Command kCompileCommand = {
    "compile",
    "MODEL.onnx --tp N -o ENGINE_DIR [--input-shape NAME=1x16 ...] "
    "[--dtype bf16]",
    "Compile an ONNX model into a tensor-parallel engine: one plan and one "
    "weight shard per rank.",
    {
        {"--tp", "N", "tensor-parallel degree (ranks), default 1"},
        {"-o", "ENGINE_DIR", "the engine folder to write (required)"},
        {"--input-shape", "NAME=DxD",
         "shape for an input with dynamic dimensions: static (1x16), or "
         "with run-time dimensions given as ranges (1x1..64, named after "
         "the model's axis, or 1xseq:1..64): one engine then runs every "
         "size in the range, its memory planned for the largest",
         true},
        {"--const-input", "NAME=FILE.npy",
         "bind a graph input to the array in FILE at compile time (shape "
         "operands such as Reshape's shape or Reduce axes must be "
         "constants); the engine no longer takes it",
         true},
        {"--allow-replicated", "GLOB",
         "let the weight MatMuls whose ONNX node or weight name matches GLOB "
         "stay replicated where an op blocks their split (otherwise an "
         "error)",
         true},
        {"--sharding-plan", "PLAN.json",
         "roles for weight MatMuls (colwise, rowwise, replicate) by node or "
         "weight name glob, as --dump-sharding writes or in Hugging Face "
         "tp_plan form; a role the dataflow cannot give is an error"},
        {"--kv-cache", "LENGTH",
         "compile a decode engine for an export with past inputs: its "
         "past/present pairs become per-rank KV caches of LENGTH positions "
         "(prompt and generated tokens), split by kv heads, and each "
         "forward adds one token; for tpc generate"},
        {"--ignore-sharding-annotations", nullptr,
         "compile as if the model carried no ONNX sharding annotations "
         "(ShardingSpecProto), which are otherwise honoured or refused"},
        {"--vocab-parallel-embedding", nullptr,
         "split embedding tables by vocabulary rows (Megatron layout)"},
        {"--lm-head", "auto|column|replicated",
         "how output projections (the LM head, a classifier) are sharded: "
         "auto (default) splits one by columns and all-gathers its output "
         "when every rank gets at least 64 columns and keeps a narrower one "
         "replicated; column always splits; replicated has every rank "
         "compute the whole projection"},
        {"--parallel-lm-head", nullptr, "the same as --lm-head column"},
        {"--pass-plugin", "LIB.so",
         "load an MLIR pass plugin, e.g. one with a custom sharding pass "
         "(docs/custom-sharding.md)",
         true},
        {"--sharding", "PASS",
         "shard with the registered pass PASS (given tp=N) instead of "
         "tpc-tp-shard; the partitioner checks what it leaves"},
        {"--sharding-options", "OPTS",
         "more options for the --sharding pass, as 'key=value ...'"},
        {"--dtype", "fp32|fp16|bf16",
         "element type of the weights and activations, default fp32; "
         "inputs and outputs keep the model's types, GEMMs, norms and "
         "softmax accumulate in fp32"},
        {"--quantize", "int4|int8",
         "weight-only quantization of every weight MatMul (the LM head "
         "included) as the shards are written: round to nearest per block "
         "of K, kept packed in the shards and read packed by the "
         "MatMulNBits kernel; default none"},
        {"--block-size", "N",
         "with --quantize: elements of K per scale, 16, 32 (default), 64, "
         "128 or 256; a row-parallel split must fall on whole blocks"},
        {"--symmetric", nullptr,
         "with --quantize: codes around a fixed zero point, one scale per "
         "block (the default)"},
        {"--asymmetric", nullptr,
         "with --quantize: a zero point per block as well (min and max of "
         "the block)"},
        {"--quantize-skip", "GLOB",
         "with --quantize: keep the weight MatMuls whose ONNX node or "
         "weight name matches GLOB in full precision",
         true},
        {"--no-fusion", nullptr,
         "skip the fusion passes (norms, GELU, SwiGLU, attention), to "
         "compare with the unfused program"},
        {"--dump-mlir", "FILE", "write the planned module to FILE"},
        {"--dump-sharding", "FILE",
         "write the role of every weight MatMul (colwise, rowwise, "
         "replicate; by node and weight name) to FILE as a sharding plan"},
        {"--quiet", nullptr,
         "do not print the sharding summary and the closing summary line"},
        {"--verbose", nullptr,
         "print the time of importing, of every pass and of writing the "
         "engine (to stderr)"},
    },
    1,
    1,
};

/// Loads the --pass-plugin libraries (their passes join the registry) and
/// fills in the sharding pass. The flags of tpc-tp-shard do not apply to
/// another pass, which takes its options from --sharding-options. Returns
/// false after printing the error.
static bool parseShardingOptions(const Command &cmd, const ParsedArgs &args,
                                 CompileOptions &opts) {
  auto error = [&](const std::string &msg) {
    fail(cmd, msg);
    return false;
  };
  if (!args.has("--sharding")) {
    if (args.has("--pass-plugin"))
      return error("--pass-plugin needs --sharding PASS, the plugin pass to "
                   "shard with");
    if (args.has("--sharding-options"))
      return error("--sharding-options needs --sharding PASS");
    return true;
  }
  opts.shardingPass = args.get("--sharding");
  opts.shardingOptions = args.get("--sharding-options");
  for (const char *flag : {"--allow-replicated", "--sharding-plan",
                           "--vocab-parallel-embedding", "--lm-head",
                           "--parallel-lm-head"})
    if (args.has(flag))
      return error(std::string(flag) + " is an option of tpc-tp-shard; give "
                   "the --sharding pass its options with --sharding-options");
  // tpc's own passes can be named too.
  registerAllPasses();
  for (const std::string &path : args.all("--pass-plugin")) {
    std::string why;
    if (mlir::failed(loadPassPlugin(path, why)))
      return error(why);
  }
  return true;
}

/// What the model says of its graph inputs' axes: names and fixed sizes.
static bool readModelInputAxes(const std::string &path,
                               std::map<std::string, ModelInputAxes> &out,
                               std::string &error) {
  ::onnx::ModelProto model;
  std::map<std::string, WeightLocation> inlineWeights;
  if (!loadModelFile(path, model, inlineWeights, error))
    return false;
  for (const ::onnx::ValueInfoProto &in : model.graph().input()) {
    ModelInputAxes &axes = out[in.name()];
    for (const auto &d : in.type().tensor_type().shape().dim()) {
      axes.names.push_back(d.has_dim_param() ? d.dim_param() : "");
      axes.sizes.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
  }
  return true;
}

/// Parses the --input-shape values with ranges into `dims`; the others
/// are parseImportOptions'. Returns false after printing the error.
static bool parseRunTimeDims(const Command &cmd, const ParsedArgs &args,
                             const std::string &model,
                             ImportOptions &importOpts, RunTimeDims &dims) {
  std::vector<std::string> specs;
  for (const std::string &spec : args.all("--input-shape"))
    if (hasInputShapeRange(spec))
      specs.push_back(spec);
  if (specs.empty())
    return true;
  std::map<std::string, ModelInputAxes> axes;
  std::string error;
  if (!readModelInputAxes(model, axes, error)) {
    fail(cmd, error);
    return false;
  }
  for (const std::string &spec : specs)
    if (!parseInputShapeRange(spec, axes, dims, error)) {
      fail(cmd, error);
      return false;
    }
  for (const auto &[name, shape] : dims.staticDims)
    if (importOpts.inputShapes.count(name)) {
      fail(cmd, "--input-shape given twice for '" + name + "'");
      return false;
    }
  if (dims.empty()) // every range was one size
    for (const auto &[name, shape] : dims.staticDims)
      importOpts.inputShapes[name] = shape;
  return true;
}

/// Compiles the model at one sample point of its run-time dimensions and
/// serializes every rank; false after printing the error.
static bool compileSample(const Command &cmd, mlir::MLIRContext &ctx,
                          const std::string &model,
                          const ImportOptions &importOpts,
                          const CompileOptions &opts, const RunTimeDims &dims,
                          const SymbolValues &values, PlanSample &out) {
  ImportOptions at = importOpts;
  for (const auto &[name, shape] : dims.shapesAt(values))
    at.inputShapes[name] = shape;
  const std::string where =
      "run-time dimensions: the program does not compile at " +
      dims.describe(values) + " (the error above); narrow the range";
  mlir::OwningOpRef<mlir::ModuleOp> module = importOnnxModel(ctx, model, at);
  if (!module) {
    fail(cmd, where);
    return false;
  }
  mlir::PassManager pm(&ctx);
  std::string pipelineError;
  if (mlir::failed(buildCompilePipeline(pm, opts, [&](const llvm::Twine &msg) {
        pipelineError = msg.str();
        return mlir::failure();
      }))) {
    fail(cmd, pipelineError);
    return false;
  }
  if (mlir::failed(pm.run(*module))) {
    fail(cmd, where);
    return false;
  }
  mlir::FailureOr<std::vector<SerializedRank>> ranks = serializeModule(*module);
  if (mlir::failed(ranks)) {
    fail(cmd, where);
    return false;
  }
  out.values = values;
  out.ranks = std::move(*ranks);
  return true;
}

static llvm::json::Array toJsonArray(llvm::ArrayRef<std::string> v) {
  llvm::json::Array a;
  for (const std::string &s : v)
    a.push_back(s);
  return a;
}

/// Prints what the compile chose (at tp > 1, unless --quiet) and writes
/// --dump-sharding, both from the written engine: the same facts tpc
/// inspect shows.
static int reportSharding(const Command &cmd, const ParsedArgs &args,
                          const std::string &dir, int tp, double seconds) {
  bool quiet = args.has("--quiet");
  bool print = tp > 1 && !quiet;
  runtime::EngineSummary summary;
  // The engine was checked before it was published: no need to hash the
  // weights again.
  if (Status st = runtime::inspectEngine(dir, summary, /*verifyWeights=*/false);
      !st)
    return fail(cmd, st.message());
  if (!quiet) {
    // The closing line, on stderr so that stdout stays the report.
    uint64_t most = 0;
    for (const runtime::RankSummary &r : summary.ranks)
      most = std::max(most, r.weightBytes);
    char took[32];
    std::snprintf(took, sizeof(took), "%.2f", seconds);
    llvm::errs() << "tpc compile: wrote " << dir << " in " << took
                 << " s: " << tp << (tp == 1 ? " rank" : " ranks") << ", "
                 << runtime::humanBytes(most) << " of weights per rank\n";
  }
  if (print)
    llvm::outs() << runtime::formatShardingSummary(summary);
  if (args.has("--dump-sharding")) {
    const std::string &path = args.get("--dump-sharding");
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return fail(cmd, "cannot write '" + path + "': " + ec.message());
    os << runtime::formatShardingPlan(summary);
  }
  return 0;
}

int runCompile(const ParsedArgs &args) {
  const Command &cmd = kCompileCommand;
  if (!args.has("-o"))
    return fail(cmd, "missing -o ENGINE_DIR");
  CompileOptions opts;
  std::string tpText = args.get("--tp", "1");
  if (tpText.empty() || tpText.size() > 4 ||
      tpText.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(tpText) < 1)
    return fail(cmd, "--tp must be a positive integer, not '" + tpText + "'");
  opts.tp = std::stoi(tpText);
  opts.allowReplicated = args.all("--allow-replicated");
  opts.shardingPlan = args.get("--sharding-plan");
  opts.vocabParallelEmbedding = args.has("--vocab-parallel-embedding");
  opts.lmHead = args.get("--lm-head", "auto");
  if (!parseOutputHeadPolicy(opts.lmHead))
    return fail(cmd, "--lm-head must be " +
                         std::string(outputHeadPolicyNames()) + ", not '" +
                         opts.lmHead + "'");
  if (args.has("--parallel-lm-head")) {
    if (args.has("--lm-head") && opts.lmHead != "column")
      return fail(cmd, "--parallel-lm-head is --lm-head column; it "
                       "contradicts --lm-head " + opts.lmHead.getValue());
    opts.lmHead = "column";
  }
  opts.ignoreShardingAnnotations = args.has("--ignore-sharding-annotations");
  opts.fusion = !args.has("--no-fusion");
  opts.dtype = args.get("--dtype", "fp32");
  if (!isComputeDType(opts.dtype))
    return fail(cmd, "--dtype must be " + std::string(computeDTypeNames()) +
                         ", not '" + opts.dtype + "'");
  opts.quantize = args.get("--quantize", "none");
  if (opts.quantize != "none" && opts.quantize != "int4" &&
      opts.quantize != "int8")
    return fail(cmd, "--quantize must be int4 or int8, not '" +
                         opts.quantize + "'");
  const bool quantizing = opts.quantize != "none";
  for (const char *flag :
       {"--block-size", "--symmetric", "--asymmetric", "--quantize-skip"})
    if (args.has(flag) && !quantizing)
      return fail(cmd, std::string(flag) + " needs --quantize int4|int8");
  if (args.has("--symmetric") && args.has("--asymmetric"))
    return fail(cmd, "--symmetric and --asymmetric contradict each other");
  opts.quantizeSymmetric = !args.has("--asymmetric");
  if (args.has("--block-size")) {
    std::string b = args.get("--block-size");
    int64_t v = b.size() > 0 && b.size() < 5 &&
                        b.find_first_not_of("0123456789") == std::string::npos
                    ? std::stoll(b)
                    : -1;
    if (v != 16 && v != 32 && v != 64 && v != 128 && v != 256)
      return fail(cmd, "--block-size must be 16, 32, 64, 128 or 256, not '" +
                           b + "'");
    opts.quantizeBlockSize = v;
  }
  opts.quantizeSkip = args.all("--quantize-skip");
  if (!parseShardingOptions(cmd, args, opts))
    return 1;
  ImportOptions importOpts;
  if (!parseImportOptions(cmd, args, importOpts))
    return 1;
  opts.kvCacheLength = importOpts.kvCacheLength;
  const std::string &model = args.positional[0];
  RunTimeDims runTimeDims;
  if (!parseRunTimeDims(cmd, args, model, importOpts, runTimeDims))
    return 1;

  const auto start = std::chrono::steady_clock::now();
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  ScopedDiagnosticPrinter diag(ctx, "compile");
  // Run-time dimensions: the program at every sample point first (each
  // module is dropped once serialized), then at the maxima below.
  std::vector<PlanSample> samples;
  for (const SymbolValues &values : runTimeDims.samplePoints()) {
    samples.emplace_back();
    if (!compileSample(cmd, ctx, model, importOpts, opts, runTimeDims, values,
                       samples.back()))
      return 1;
  }
  if (!runTimeDims.empty())
    for (const auto &[name, shape] : runTimeDims.shapesAt(runTimeDims.maxima()))
      importOpts.inputShapes[name] = shape;
  // --verbose: MLIR's timing report (import, every pass, writing) on stderr
  // when `timing` goes out of scope.
  mlir::DefaultTimingManager timing;
  timing.setEnabled(args.has("--verbose"));
  mlir::TimingScope rootTimer = timing.getRootScope();
  mlir::TimingScope importTimer = rootTimer.nest("import " + model);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importOnnxModel(ctx, model, importOpts);
  importTimer.stop();
  if (!module)
    return 1;
  // Only tpc-tp-shard reads the model's sharding annotations: another pass
  // would drop them without a word.
  if (opts.tp > 1 && !opts.shardingPass.empty() &&
      !opts.ignoreShardingAnnotations &&
      (*module)->hasAttr(kDeviceConfigurationsAttr))
    return fail(cmd, "'" + model + "' carries ONNX sharding annotations "
                     "(ShardingSpecProto), which tpc-tp-shard honours but "
                     "--sharding " + opts.shardingPass +
                     " does not read; pass --ignore-sharding-annotations to "
                     "compile without them");
  llvm::json::Object inputBounds;
  const std::map<std::string, int64_t> bounds = inputIndexBounds(*module);
  for (const auto &[name, bound] : bounds)
    inputBounds[name] = bound;
  mlir::PassManager pm(&ctx);
  if (args.has("--verbose"))
    pm.enableTiming(rootTimer);
  std::string pipelineError;
  if (mlir::failed(buildCompilePipeline(pm, opts, [&](const llvm::Twine &msg) {
        pipelineError = msg.str();
        return mlir::failure();
      })))
    return fail(cmd, pipelineError);
  if (mlir::failed(pm.run(*module)))
    return 1;
  if (args.has("--dump-mlir")) {
    std::error_code ec;
    llvm::raw_fd_ostream os(args.get("--dump-mlir"), ec);
    if (ec)
      return fail(cmd, "cannot write '" + args.get("--dump-mlir") +
                           "': " + ec.message());
    module->print(os);
  }

  EngineWriteOptions wopts;
  if (opts.kvCacheLength > 0) {
    std::string why;
    wopts.generation = describeGeneration(*module, bounds, why);
    if (wopts.generation.empty())
      return fail(cmd, "--kv-cache: " + why);
  }
  if (!runTimeDims.empty())
    wopts.finishPlans = [&](std::vector<SerializedRank> &ranks,
                            std::string &why) {
      return generalizePlans(ranks, runTimeDims, samples, why);
    };
  wopts.outDir = args.get("-o");
  wopts.progress = ::isatty(2);
  // The runtime's own checks, applied before the engine is published: an
  // engine `tpc run` would refuse is a compile error, not a surprise later.
  wopts.check = [](const std::string &dir) -> std::string {
    runtime::EngineManifest manifest;
    if (Status st = runtime::EngineManifest::load(dir, manifest); !st)
      return st.message();
    runtime::RankEngineOptions ro;
    ro.hostExecution = false;
    ro.checkKernels = true;
    ro.verifyDigests = false; // just computed by the writer
    for (int r = 0; r < manifest.tp; ++r) {
      std::unique_ptr<runtime::RankEngine> rank;
      if (Status st = runtime::RankEngine::load(manifest, r, ro, rank); !st)
        return st.message();
    }
    return "";
  };
  llvm::json::Object shapes;
  for (const auto &[name, shape] : importOpts.inputShapes) {
    llvm::json::Array dims;
    for (int64_t d : shape)
      dims.push_back(d);
    shapes[name] = std::move(dims);
  }
  // An input with run-time dimensions: its --input-shape, symbols named.
  for (const auto &[name, syms] : runTimeDims.inputSymbols) {
    std::string spec;
    for (size_t a = 0; a < syms.size(); ++a) {
      spec += a ? "x" : "";
      if (syms[a] < 0) {
        spec += std::to_string(runTimeDims.staticDims.at(name)[a]);
        continue;
      }
      const PlanSymbol &sym = runTimeDims.symbols[size_t(syms[a])];
      spec += sym.name + ":" + std::to_string(sym.min) + ".." +
              std::to_string(sym.max);
    }
    shapes[name] = spec;
  }
  llvm::json::Object constInputs;
  for (const auto &[name, ci] : importOpts.constInputs)
    constInputs[name] = std::filesystem::absolute(ci.source).string();
  wopts.compileOptions = llvm::json::Object{
      {"source", std::filesystem::path(model).filename().string()},
      {"source_path", std::filesystem::absolute(model).string()},
      {"const_inputs", std::move(constInputs)},
      {"input_bounds", std::move(inputBounds)},
      {"tp", opts.tp.getValue()},
      {"input_shapes", std::move(shapes)},
      {"allow_replicated", toJsonArray(opts.allowReplicated)},
      {"sharding_plan", opts.shardingPlan.empty()
                            ? std::string()
                            : std::filesystem::path(opts.shardingPlan.getValue())
                                  .filename()
                                  .string()},
      {"vocab_parallel_embedding", opts.vocabParallelEmbedding.getValue()},
      {"lm_head", opts.lmHead.getValue()},
      {"ignore_sharding_annotations",
       opts.ignoreShardingAnnotations.getValue()},
      {"kv_cache", opts.kvCacheLength.getValue()},
      {"sharding", opts.shardingPass.empty() ? std::string("tpc-tp-shard")
                                             : opts.shardingPass.getValue()},
      {"sharding_options", opts.shardingOptions.getValue()},
      {"dtype", opts.dtype.getValue()},
      {"quantize",
       quantizing
           ? llvm::json::Value(llvm::json::Object{
                 {"type", opts.quantize.getValue()},
                 {"block_size", opts.quantizeBlockSize.getValue()},
                 {"symmetric", opts.quantizeSymmetric.getValue()},
                 {"skip", toJsonArray(opts.quantizeSkip)}})
           : llvm::json::Value(nullptr)}};
  // The engine's path as it is now: writing may replace the folder '.'
  // names (the old one is swapped out), so read it back by this path.
  const std::string engineDir =
      std::filesystem::absolute(wopts.outDir).lexically_normal().string();
  mlir::TimingScope writeTimer = rootTimer.nest("write engine");
  if (mlir::failed(writeEngine(*module, wopts)))
    return 1;
  writeTimer.stop();
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  return reportSharding(cmd, args, engineDir, opts.tp, seconds);
}

} // namespace tpc::cli
