//===- Generation.h - What a decode engine's inputs mean --------*- C++ -*-===//
//
// An engine compiled with --kv-cache runs one decode step per forward; a
// generation loop must know which input takes the token ids, which the
// attention mask and the positions, and which output the logits. These are
// found by dataflow in the planned module and recorded in engine.json's
// "generation" object (docs/engine-format.md).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_COMPILER_ENGINE_GENERATION_H
#define TPC_COMPILER_ENGINE_GENERATION_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <string>

namespace tpc {

/// The "generation" object of a module that went through tpc-kv-cache, or
/// an error message (empty object) when its inputs cannot be told apart.
/// `indexBounds` are the rows of the table each integer input indexes
/// (inputIndexBounds of the imported module).
llvm::json::Object
describeGeneration(mlir::ModuleOp module,
                   const std::map<std::string, int64_t> &indexBounds,
                   std::string &error);

} // namespace tpc

#endif
