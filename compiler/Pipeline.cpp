//===- Pipeline.cpp - The compile pipeline --------------------------------===//
#include "compiler/Pipeline.h"
#include "compiler/Transforms/Passes.h"
#include "passes/Passes.h"
#include "passes/ShardingAnalysis.h"
#include "passes/fusion/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir;

namespace tpc {

namespace {
/// Adds the sharding pass: tpc-tp-shard, or the registered pass named by
/// the options (from a plugin), given tp=N and the user's options.
LogicalResult
addShardingPass(OpPassManager &pm, const CompileOptions &opts,
                function_ref<LogicalResult(const Twine &)> errorHandler) {
  if (opts.shardingPass.getValue().empty()) {
    TpShardPassOptions shard;
    shard.tp = opts.tp;
    shard.allowReplicated = opts.allowReplicated;
    shard.shardingPlan = opts.shardingPlan;
    shard.vocabParallelEmbedding = opts.vocabParallelEmbedding;
    shard.lmHead = opts.lmHead;
    shard.ignoreShardingAnnotations = opts.ignoreShardingAnnotations;
    pm.addPass(createTpShardPass(shard));
    return success();
  }
  const std::string &name = opts.shardingPass;
  const std::string &more = opts.shardingOptions;
  const PassRegistryEntry *entry = PassInfo::lookup(name);
  if (!entry)
    entry = PassPipelineInfo::lookup(name);
  if (!entry)
    return errorHandler("unknown sharding pass '" + name +
                        "': no registered pass has that name (is its "
                        "plugin loaded?)");
  std::string options = "tp=" + std::to_string(opts.tp);
  if (!more.empty())
    options += " " + more;
  return entry->addToPipeline(pm, options, [&](const Twine &msg) {
    // Option errors come with a trailing newline and sometimes indented
    // detail lines; keep the first line.
    std::string text = StringRef(msg.str()).trim().split('\n').first.str();
    return errorHandler("sharding pass '" + name + "' refused options '" +
                        options + "': " + text);
  });
}
} // namespace

void addFusionPasses(OpPassManager &pm) {
  pm.addPass(createFuseMatMulNBitsPass());
  pm.addPass(createFuseLayerNormPass());
  pm.addPass(createFuseRMSNormPass());
  pm.addPass(createFuseAddNormPass());
  pm.addPass(createFuseGeluPass());
  pm.addPass(createFuseSwiGLUPass());
  pm.addPass(createFuseAttentionPass());
  pm.addPass(createFuseMatMulBiasPass());
}

bool isComputeDType(StringRef dtype) {
  return dtype == "fp32" || dtype == "fp16" || dtype == "bf16";
}

const char *computeDTypeNames() { return "fp32, fp16 or bf16"; }

LogicalResult
buildCompilePipeline(OpPassManager &pm, const CompileOptions &opts,
                     function_ref<LogicalResult(const Twine &)> errorHandler) {
  const std::string &dtype = opts.dtype;
  if (!isComputeDType(dtype))
    return errorHandler("dtype must be " + Twine(computeDTypeNames()) +
                        ", not '" + dtype + "'");
  if (!parseOutputHeadPolicy(opts.lmHead))
    return errorHandler("lm-head must be " + Twine(outputHeadPolicyNames()) +
                        ", not '" + opts.lmHead + "'");
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (opts.kvCacheLength > 0) {
    pm.addPass(createKVCachePass());
    pm.addPass(createLastTokenLogitsPass());
  }
  if (failed(addShardingPass(pm, opts, errorHandler)))
    return failure();
  // The partitioner checks the shardings first, whichever pass left them.
  pm.addPass(createSpmdPartitionPass());
  // Two reads of one weight slice (a tied embedding and LM head split the
  // same way) become one buffer.
  pm.addPass(createCSEPass());
  // Weight-only quantization at compile time, per rank on its slices.
  if (opts.quantize != "none") {
    if (opts.quantize != "int4" && opts.quantize != "int8")
      return errorHandler("quantize must be none, int4 or int8, not '" +
                          opts.quantize + "'");
    QuantizeWeightsPassOptions q;
    q.bits = opts.quantize == "int4" ? 4 : 8;
    q.blockSize = opts.quantizeBlockSize;
    q.symmetric = opts.quantizeSymmetric;
    q.skip = opts.quantizeSkip;
    pm.addPass(createQuantizeWeightsPass(q));
  }
  // Fusions see the partitioned programs only, never shardings.
  if (opts.fusion)
    addFusionPasses(pm);
  // A decode step's attention reads the filled positions of its caches.
  if (opts.kvCacheLength > 0)
    pm.addPass(createBoundCacheAttentionPass());
  // Per rank, on the final onnx ops: sharding never sees the dtype, and the
  // partitioner has already cut the weights and constants to convert.
  if (dtype != "fp32")
    pm.addPass(createConvertFloatTypePass({dtype}));
  pm.addPass(createLowerToPlanPass());
  pm.addPass(createPlanMemoryPass());
  return success();
}


void registerCompilePipeline() {
  // Registered by hand rather than with PassPipelineRegistration so that a
  // bad sharding pass name fails the pipeline instead of being ignored.
  registerPassPipeline(
      "tpc-compile-pipeline",
      "The pipeline of tpc compile: shard, partition, convert the float "
      "type, lower, plan memory",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        CompileOptions opts;
        std::string err;
        llvm::raw_string_ostream os(err);
        if (failed(opts.parseFromString(text, os)))
          return errorHandler(os.str());
        return buildCompilePipeline(pm, opts, errorHandler);
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(CompileOptions());
      });
}

LogicalResult loadPassPlugin(const std::string &path, std::string &error) {
  if (!llvm::sys::fs::is_regular_file(path)) {
    error = "pass plugin '" + path + "' not found";
    return failure();
  }
  // Opened here first to tell a library that does not load from one that is
  // not a plugin; PassPlugin::load then finds it already open.
  std::string why;
  auto lib = llvm::sys::DynamicLibrary::getPermanentLibrary(path.c_str(), &why);
  if (!lib.isValid()) {
    error = "cannot load pass plugin '" + path + "': " + why;
    return failure();
  }
  if (!lib.getAddressOfSymbol("mlirGetPassPluginInfo")) {
    error = "'" + path + "' is not an MLIR pass plugin (it does not define "
            "mlirGetPassPluginInfo)";
    return failure();
  }
  llvm::Expected<PassPlugin> plugin = PassPlugin::load(path);
  if (!plugin) {
    error = "cannot load pass plugin '" + path +
            "': " + llvm::toString(plugin.takeError());
    return failure();
  }
  plugin->registerPassRegistryCallbacks();
  return success();
}

} // namespace tpc
