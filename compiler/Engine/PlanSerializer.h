//===- PlanSerializer.h - plan-dialect functions to plan messages -*- C++ -*-===//
#ifndef TPC_COMPILER_ENGINE_PLANSERIALIZER_H
#define TPC_COMPILER_ENGINE_PLANSERIALIZER_H

#include "kernels/Types.h"
#include "runtime/format/PlanFormat.h"
#include "runtime/format/SymExpr.h"
#include "runtime/format/plan.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace tpc {

/// Where the bytes of one tensor of a rank's weight file come from.
struct WeightSlice {
  std::string tensor;
  TensorDesc desc;
  /// Weights: a source file region, sliced along `axis` into `ranges`
  /// ([start, size] pairs) when `ranges` is not empty.
  std::string file;
  int64_t offset = 0;
  Shape sourceShape;
  int64_t axis = 0;
  std::vector<int64_t> ranges;
  /// The element type stored in `file`; the writer converts it to
  /// `desc.dtype` (f32 to f16 or bf16) when they differ.
  DType sourceDType = DType::F32;
  /// Constants: their bytes.
  std::vector<uint8_t> data;
  bool isConstant = false;
  /// A part of the block quantization of the float source's slice
  /// (plan.weight's `quantize`): "codes", "scales" or "zeros"; empty for a
  /// plain weight. `sourceDType` is then the float source's type and
  /// `kAxis` the source axis that is K.
  std::string quantPart;
  int quantBits = 0;
  int64_t quantBlock = 0;
  bool quantSymmetric = true;
  int64_t kAxis = 0;
  /// "repack_*" parts (a QDQ weight): the initializer's [k, n] shape, its
  /// stored length, and whether its codes are signed.
  int64_t repackK = 0, repackN = 0, sourceLength = 0;
  bool repackSigned = false;
};

struct SerializedRank {
  plan::Plan plan;
  std::vector<WeightSlice> weights;
};

/// Serialises a planned function (after --tpc-plan-memory). Errors are
/// emitted on the function's context.
mlir::FailureOr<SerializedRank> serializeRank(mlir::func::FuncOp func,
                                              int rank, int worldSize);

/// The rank functions of a planned module in rank order: `@rank0`,
/// `@rank1`, ... (by `tp.rank`), or a lone `@main`.
std::vector<mlir::func::FuncOp> rankFunctions(mlir::ModuleOp module);

/// Serialises every rank function of a planned module, in rank order.
mlir::FailureOr<std::vector<SerializedRank>>
serializeModule(mlir::ModuleOp module);

/// The plan message's expression as the runtime reads it.
SymExpr exprOf(const plan::Expr &e);
/// Writes `e` into the plan's form (the inverse of exprOf).
void writeExpr(const SymExpr &e, plan::Expr &out);
/// "2*sequence + 1": an expression of `plan`'s symbols.
std::string exprToString(const plan::Expr &e, const plan::Plan &plan);

} // namespace tpc

#endif
