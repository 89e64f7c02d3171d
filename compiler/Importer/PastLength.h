//===- PastLength.h - The past length of a decode step, at run time -*- C++ -*-===//
//
// A decode engine (`--kv-cache LENGTH`) runs T new tokens per forward (one,
// or a run-time count) against a cache of LENGTH positions. Its shapes are
// resolved with the past length p = LENGTH - T (the caches as the export
// concatenates them), but the positions the model computes from p are
// those of the tokens being fed: p is the forward's `cache_position` at
// run time. Exports without a
// position_ids input (Gemma's, transformers' cache_position) take the
// token's position from `Range(p, p + new_tokens)`, with p read from a past
// input's shape; folded at compile time, every token would sit at position
// LENGTH - 1.
//
// The importer tracks the integer constants whose elements are p plus a
// constant (from Shape of an input whose dimension is the past or total
// length, through Gather, Cast, Squeeze, Unsqueeze, Reshape, Concat and the
// addition or subtraction of a constant) and imports a Range that starts at
// such an element as `cache_position + (start - p) + i * delta`, computed at
// run time. A Range whose start follows p but whose end does not would have
// a length that changes per step: an error naming the node. Shapes built from
// p (the total length of the mask, LENGTH) stay compile-time constants: the
// cache always has LENGTH positions and the attention mask hides the empty
// ones.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_COMPILER_IMPORTER_PASTLENGTH_H
#define TPC_COMPILER_IMPORTER_PASTLENGTH_H

#include "compiler/Importer/NodeImporter.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace tpc {

/// Per element of an integer constant: its value minus the past length, for
/// the elements that follow the past length; nullopt for the others.
using PastOffsets = llvm::SmallVector<std::optional<int64_t>>;

class PastLength {
public:
  /// The step's run-time past length: `cache_position`, tensor<1xi64>.
  void setPosition(mlir::Value position) { this->position = position; }
  /// The dimensions of graph input `arg` that are the past length plus a
  /// constant (one offset per dimension).
  void setInputDims(mlir::Value arg, PastOffsets dims) {
    inputDims[arg] = std::move(dims);
  }
  /// Imports a Range whose start follows the past length as a run-time
  /// range: true when it did, with `results` set.
  mlir::FailureOr<bool> importSpecial(NodeContext &c,
                                      llvm::SmallVectorImpl<mlir::Value> &results);
  /// Derives which elements of a node's folded results follow the past
  /// length from its inputs'.
  void propagate(NodeContext &c, llvm::ArrayRef<mlir::Value> results);
  /// The offsets of `v`, or null when no element follows the past length.
  const PastOffsets *lookup(mlir::Value v) const {
    auto it = tracked.find(v);
    return it == tracked.end() ? nullptr : &it->second;
  }

private:
  void set(mlir::Value v, PastOffsets offsets);

  mlir::Value position;
  llvm::DenseMap<mlir::Value, PastOffsets> inputDims;
  llvm::DenseMap<mlir::Value, PastOffsets> tracked;
};

} // namespace tpc

#endif
