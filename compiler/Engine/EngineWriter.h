//===- EngineWriter.h - Writing engine folders ------------------*- C++ -*-===//
#ifndef TPC_COMPILER_ENGINE_ENGINEWRITER_H
#define TPC_COMPILER_ENGINE_ENGINEWRITER_H

#include "compiler/Engine/PlanSerializer.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <string>
#include <vector>

namespace tpc {

struct EngineWriteOptions {
  /// The engine folder to create (replaced when it holds an older engine).
  std::string outDir;
  /// The options the engine was compiled with, recorded in engine.json.
  llvm::json::Object compileOptions;
  /// For a decode engine (--kv-cache), engine.json's "generation" object
  /// (compiler/Engine/Generation.h); empty otherwise.
  llvm::json::Object generation;
  /// Print per-rank progress on stderr.
  bool progress = false;
  /// Called on the complete engine in its temporary folder before it is
  /// moved into place; a non-empty result is an error message, and the
  /// engine is then discarded (the folder it would replace is kept).
  std::function<std::string(const std::string &dir)> check;
  /// Called on the serialized ranks before anything is written (run-time
  /// dimensions generalise them here); false with `why` set is an error.
  std::function<bool(std::vector<SerializedRank> &ranks, std::string &why)>
      finishPlans;
};

/// Writes engine.json, rankN.plan and rankN.safetensors for a planned module:
/// one function per rank (`@rank0`, `@rank1`, ... with `tp.rank`, or a lone
/// `@main` for one rank). Weights are sliced straight from the mapped source
/// files named by the module's `onnx.source_dir`. Everything goes to a
/// temporary folder first; a failure leaves no folder behind.
mlir::LogicalResult writeEngine(mlir::ModuleOp module,
                                const EngineWriteOptions &options);

} // namespace tpc

#endif
