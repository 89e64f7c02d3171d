//===- Emitter.h - Straight-line onnx op building for importers -*- C++ -*-===//
//
// Importers that define one ONNX node by several onnx ops (ONNX Runtime's
// contrib ops, the opset-23 attention ops) build them through an Emitter.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_COMPILER_IMPORTER_EMITTER_H
#define TPC_COMPILER_IMPORTER_EMITTER_H

#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "compiler/Importer/NodeImporter.h"

namespace tpc {

/// Builds onnx ops for one node; the first failure is kept and later calls
/// return null values, so a decomposition reads as straight-line code.
/// Every method takes null operands and returns null then.
class Emitter {
public:
  explicit Emitter(NodeContext &c) : c(c) {}

  NodeContext &c;
  bool failed = false;

  /// False (and failed set) when any value is null.
  bool ok(std::initializer_list<mlir::Value> vs);
  mlir::Value first(mlir::FailureOr<llvm::SmallVector<mlir::Value>> r);

  template <typename OpTy> mlir::Value binary(mlir::Value a, mlir::Value b) {
    return inferred<OpTy>({a, b});
  }
  /// An op of `operands` and `attrs` whose result type its inference gives.
  template <typename OpTy>
  mlir::Value inferred(llvm::ArrayRef<mlir::Value> operands,
                       llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    for (mlir::Value v : operands)
      if (!ok({v}))
        return mlir::Value();
    return first(c.createInferred<OpTy>(operands, attrs));
  }
  /// An op whose result has its operand's type.
  template <typename OpTy> mlir::Value unary(mlir::Value a) {
    if (!ok({a}))
      return mlir::Value();
    return c.create(OpTy::getOperationName(), a.getType(), a)[0];
  }
  mlir::Value where(mlir::Value cond, mlir::Value x, mlir::Value y);
  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  mlir::Value expand(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value v, llvm::ArrayRef<int64_t> perm);
  mlir::Value slice(mlir::Value v, int64_t axis, int64_t start, int64_t end,
                    int64_t step = 1);
  mlir::Value concat(llvm::ArrayRef<mlir::Value> vs, int64_t axis);
  mlir::Value gather(mlir::Value table, mlir::Value indices, int64_t axis);
  /// ReduceMean / ReduceMax over `axes`, dims kept.
  mlir::Value reduceMean(mlir::Value v, llvm::ArrayRef<int64_t> axes);
  mlir::Value reduceMax(mlir::Value v, llvm::ArrayRef<int64_t> axes);
  mlir::Value softmax(mlir::Value v, int64_t axis);
  mlir::Value cast(mlir::Value v, mlir::Type elem);
  mlir::Value scalar(mlir::Type elem, double value);
  mlir::Value constant(mlir::DenseElementsAttr value);
  /// A constant of integer type `elem` and `shape` (one dimension not 1)
  /// holding start, start + 1, ... in order.
  mlir::Value range(llvm::ArrayRef<int64_t> shape, mlir::Type elem,
                    int64_t start = 0);
  mlir::Value gelu(mlir::Value v, llvm::StringRef approximate);
  /// v * Sigmoid(alpha * v) (the product by alpha left out when it is 1).
  mlir::Value swish(mlir::Value v, float alpha);
  mlir::Value layerNorm(mlir::Value x, mlir::Value gamma, mlir::Value beta,
                        float epsilon);
  /// LayerNormalization's statistics over the dims [axis, rank) of x, in
  /// float, dims kept: returns the mean and sets `invStd` to
  /// 1 / sqrt(mean((x_f - mean)^2) + eps).
  mlir::Value layerNormStats(mlir::Value x, int64_t axis, float epsilon,
                             mlir::Value &invStd);
  /// Cast(x_f * (1 / sqrt(mean(x_f * x_f) + eps)), T) * gamma over the dims
  /// [axis, rank), x_f being x in float; the inverse RMS (float, dims kept)
  /// is returned through `invRms` when asked for.
  mlir::Value rmsNorm(mlir::Value x, mlir::Value gamma, float epsilon,
                      int64_t axis, mlir::Value *invRms = nullptr);

  /// Appends `values` to `results` unless a step failed.
  mlir::LogicalResult finish(llvm::ArrayRef<mlir::Value> values,
                             llvm::SmallVectorImpl<mlir::Value> &results);

private:
  mlir::Value reduce(llvm::StringRef opName, mlir::Value v,
                     llvm::ArrayRef<int64_t> axes);
};

/// How importDefinition checks a node's input 0: present, or also holding
/// floats.
enum class InputCheck { Present, Float };

/// A node's one result as an expression of its input `x`, built through
/// `e`; failure after an error about the node.
using Definition = mlir::FailureOr<mlir::Value> (*)(Emitter &e, mlir::Value x);

/// The importer of a node defined by `define` of its input 0, which `check`
/// checks first.
template <Definition define, InputCheck check = InputCheck::Float>
mlir::LogicalResult
importDefinition(NodeContext &c, llvm::SmallVectorImpl<mlir::Value> &results) {
  if (mlir::failed(check == InputCheck::Float ? c.requireFloatInput()
                                              : c.requireInputs(1)))
    return mlir::failure();
  Emitter e(c);
  mlir::FailureOr<mlir::Value> y = define(e, c.input(0));
  if (mlir::failed(y))
    return mlir::failure();
  return e.finish({*y}, results);
}

} // namespace tpc

#endif
