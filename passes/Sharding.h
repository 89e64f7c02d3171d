//===- Sharding.h - Shardings as values -------------------------*- C++ -*-===//
#ifndef TPC_PASSES_SHARDING_H
#define TPC_PASSES_SHARDING_H

#include "compiler/Dialect/TP/IR/TPOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <utility>

namespace tpc {

/// How a tensor is distributed; the C++ form of #tp.sharding.
struct Sharding {
  enum Kind { Replicated, Split, Partial };
  Kind kind = Replicated;
  int64_t axis = 0;
  /// Split: entries each rank holds along `axis` (sum over parts).
  llvm::SmallVector<int64_t> sizes;
  /// Split: sizes of the parts the axis concatenates (one part: the axis).
  llvm::SmallVector<int64_t> parts;
  /// Split: indices of the parts every rank holds whole (kv heads fewer
  /// than ranks in a fused projection), ascending.
  llvm::SmallVector<int64_t> whole;

  static Sharding replicated() { return Sharding(); }
  static Sharding partial() {
    Sharding s;
    s.kind = Partial;
    return s;
  }
  /// Splits an axis made of `parts` over `tp` ranks, each part as evenly as
  /// possible (the first ranks get one more entry when it does not divide).
  static Sharding split(int64_t axis, llvm::ArrayRef<int64_t> parts,
                        int64_t tp, llvm::ArrayRef<int64_t> whole = {});
  bool isWholePart(size_t part) const {
    return llvm::is_contained(whole, int64_t(part));
  }

  bool isReplicated() const { return kind == Replicated; }
  bool isSplit() const { return kind == Split; }
  bool isPartial() const { return kind == Partial; }
  bool operator==(const Sharding &o) const {
    return kind == o.kind &&
           (kind != Split ||
            (axis == o.axis && sizes == o.sizes && parts == o.parts &&
             whole == o.whole));
  }
  bool operator!=(const Sharding &o) const { return !(*this == o); }
  /// The same split on another axis.
  Sharding onAxis(int64_t a) const {
    Sharding s = *this;
    s.axis = a;
    return s;
  }

  tp::ShardingAttr toAttr(mlir::MLIRContext *ctx) const;
  static Sharding fromAttr(tp::ShardingAttr attr);
  std::string str() const;
};

/// An ONNX axis attribute (stored as an unsigned 64-bit value, negative
/// meaning from the end) as an index in [0, rank).
inline int64_t positiveAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Rank r's share of each of `n` entries split over `tp` ranks.
int64_t evenShare(int64_t n, int64_t tp, int64_t r);
/// The [start, size] ranges of the split axis that rank `r` holds.
llvm::SmallVector<std::pair<int64_t, int64_t>>
rankRanges(const Sharding &s, int64_t r, int64_t tp);

} // namespace tpc

#endif
