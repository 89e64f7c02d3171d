//===- PlanSerializer.h - plan-dialect functions to plan messages -*- C++ -*-===//
#ifndef TPC_COMPILER_ENGINE_PLANSERIALIZER_H
#define TPC_COMPILER_ENGINE_PLANSERIALIZER_H

#include "kernels/Types.h"
#include "runtime/format/PlanFormat.h"
#include "runtime/format/plan.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

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
};

struct SerializedRank {
  plan::Plan plan;
  std::vector<WeightSlice> weights;
};

/// Serialises a planned function (after --tpc-plan-memory). Errors are
/// emitted on the function's context.
mlir::FailureOr<SerializedRank> serializeRank(mlir::func::FuncOp func,
                                              int rank, int worldSize);

} // namespace tpc

#endif
