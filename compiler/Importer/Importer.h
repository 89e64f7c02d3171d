//===- Importer.h - ONNX model to onnx-dialect MLIR -------------*- C++ -*-===//
#ifndef TPC_COMPILER_IMPORTER_IMPORTER_H
#define TPC_COMPILER_IMPORTER_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace tpc {

/// A value bound to a graph input at compile time (--const-input).
struct ConstInput {
  int32_t onnxType = 0; ///< TensorProto.DataType number
  std::vector<int64_t> shape;
  std::vector<uint8_t> data; ///< little-endian, row-major
  std::string source;        ///< where it came from, for messages
};

struct ImportOptions {
  /// Static shapes for graph inputs with symbolic or unknown dimensions.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Graph inputs that become constants: the engine no longer takes them.
  std::map<std::string, ConstInput> constInputs;
  /// With a KV cache of this many positions (tpc compile --kv-cache), the
  /// symbolic dims of inputs without --input-shape are resolved for one
  /// forward: the new-token count T (1, or what --input-shape gives the
  /// ids' sequence axis), past lengths (the concatenated axis of each past
  /// input) length - T, the batch `batch`, sums of these
  /// ("past_sequence_length + sequence_length") added up.
  int64_t kvCacheLength = 0;
  int64_t batch = 1;
};

/// Imports `path` into a module holding `func.func @main`. Errors are emitted
/// as diagnostics on `ctx` (naming the file, the node and the reason) and
/// yield a null module. Weights are not read: the module refers to them by
/// file, offset and length.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxModel(mlir::MLIRContext &ctx,
                                                  const std::string &path,
                                                  const ImportOptions &options);

/// For each integer graph input of `module`'s @main that indexes a table
/// (Gather of a weight or constant, through Casts), the number of rows of
/// the smallest such table: ids below it are valid inputs (`tpc run
/// --random-inputs` draws them there).
std::map<std::string, int64_t> inputIndexBounds(mlir::ModuleOp module);

/// Parses "NAME=1x16" into a name and a shape; false when malformed.
bool parseInputShape(const std::string &spec, std::string &name,
                     std::vector<int64_t> &shape);

/// One row per supported (op type, since-version), for docs/ops.md.
struct SupportedOp {
  std::string opType;
  int sinceVersion;
  std::string importsAs;
  std::string domain; ///< "" for the default domain
};
std::vector<SupportedOp> supportedOps();
/// The opset range of the default domain the importer accepts.
constexpr int kMinOpset = 7;
constexpr int kMaxOpset = 28;

} // namespace tpc

#endif
