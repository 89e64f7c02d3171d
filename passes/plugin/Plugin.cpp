//===- Plugin.cpp - Entry point of the example sharding plugin ------------===//
//
// tpc-opt --load-pass-plugin and tpc compile --pass-plugin call
// mlirGetPassPluginInfo, then its callback, which adds the plugin's passes
// to the global registry where --sharding NAME looks them up.
//
//===----------------------------------------------------------------------===//
#include "passes/plugin/MlpOnlySharding.h"

#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TPCMlpOnlySharding", LLVM_VERSION_STRING,
          []() { tpc::plugin::registerMlpOnlyShardingPasses(); }};
}
