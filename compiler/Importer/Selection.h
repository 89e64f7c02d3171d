//===- Selection.h - NonZero's data-dependent results, computed densely --===//
//
// NonZero returns the coordinates of the nonzero elements of its input: how
// many there are is known only at run time, and a plan has static shapes.
// Mixture-of-experts exports use it to route tokens (`torch.where(mask)` per
// expert, the expert applied to the rows it picked, the results added back
// with a scatter). tpc computes such a routing densely: NonZero becomes the
// coordinates of every element of its input (a constant), together with a
// run-time mask saying which of them are real (the input's nonzero elements).
// The importer follows that mask through the ops that treat the coordinates
// row by row, and discharges it where the rows are scattered back (masked
// updates added onto the target), so the program computes what the model
// computes for every input without a data-dependent shape. An op that would
// see the difference (a reduction over the coordinates, arithmetic on their
// count, a graph output) is an error naming the node and the NonZero.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_COMPILER_IMPORTER_SELECTION_H
#define TPC_COMPILER_IMPORTER_SELECTION_H

#include "compiler/Importer/NodeImporter.h"

#include "llvm/ADT/DenseMap.h"

#include <string>

namespace tpc {

/// What a value owes to a densely computed NonZero.
struct Selection {
  /// The axis that enumerates NonZero's coordinates; -1 when the whole
  /// value stands for one coordinate (it exists, or not, as one).
  int64_t axis = -1;
  /// i1 tensor: [extent of `axis`], or [1] when axis is -1. Null for a
  /// value that only holds the count (see `count`).
  mlir::Value valid;
  /// The value holds NonZero's count among its elements (a shape read from
  /// a value with a selection axis): it may only build shapes.
  bool count = false;
  /// The NonZero node, for messages.
  std::string origin;
};

/// The selections of the values imported so far.
class Selections {
public:
  /// Imports the nodes that see selections differently from their table
  /// handler (NonZero on a run-time input, a scatter of selected rows, a
  /// Split across the coordinates): true when it did, with `results` set.
  mlir::FailureOr<bool> importSpecial(NodeContext &c,
                                      llvm::SmallVectorImpl<mlir::Value> &results);
  /// Derives the selections of a node's results from its inputs', or fails
  /// naming the node when the node would compute something else on the
  /// dense coordinates than on NonZero's.
  mlir::LogicalResult propagate(NodeContext &c,
                                llvm::ArrayRef<mlir::Value> results);
  /// The selection of `v`, or null.
  const Selection *lookup(mlir::Value v) const {
    auto it = map.find(v);
    return it == map.end() ? nullptr : &it->second;
  }

private:
  mlir::LogicalResult importNonZero(NodeContext &c,
                                    llvm::SmallVectorImpl<mlir::Value> &results);
  mlir::LogicalResult importScatter(NodeContext &c,
                                    llvm::SmallVectorImpl<mlir::Value> &results);
  mlir::LogicalResult importSplit(NodeContext &c,
                                  llvm::SmallVectorImpl<mlir::Value> &results);
  void set(mlir::Value v, Selection s);

  llvm::DenseMap<mlir::Value, Selection> map;
};

} // namespace tpc

#endif
