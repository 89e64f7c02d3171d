//===- Sharding.cpp - Shardings as values ---------------------------------===//
#include "passes/Sharding.h"

#include <iterator>
#include <sstream>

using namespace mlir;

namespace tpc {

int64_t evenShare(int64_t n, int64_t tp, int64_t r) {
  return n / tp + (r < n % tp ? 1 : 0);
}

Sharding Sharding::split(int64_t axis, ArrayRef<int64_t> parts, int64_t tp,
                         ArrayRef<int64_t> whole) {
  Sharding s;
  s.kind = Split;
  s.axis = axis;
  s.parts.assign(parts.begin(), parts.end());
  s.whole.assign(whole.begin(), whole.end());
  for (int64_t r = 0; r < tp; ++r) {
    int64_t n = 0;
    for (auto [i, p] : llvm::enumerate(parts))
      n += s.isWholePart(i) ? p : evenShare(p, tp, r);
    s.sizes.push_back(n);
  }
  return s;
}

SmallVector<std::pair<int64_t, int64_t>> rankRanges(const Sharding &s,
                                                   int64_t r, int64_t tp) {
  SmallVector<std::pair<int64_t, int64_t>> out;
  int64_t partStart = 0;
  for (auto [i, p] : llvm::enumerate(s.parts)) {
    if (s.isWholePart(i)) {
      out.push_back({partStart, p});
      partStart += p;
      continue;
    }
    int64_t start = partStart;
    for (int64_t q = 0; q < r; ++q)
      start += evenShare(p, tp, q);
    out.push_back({start, evenShare(p, tp, r)});
    partStart += p;
  }
  return out;
}

/// The kind's name in a tp.sharding attribute.
static StringRef kindName(Sharding::Kind k) {
  // In the order of Sharding::Kind.
  static constexpr const char *kNames[] = {"replicated", "split", "partial"};
  static_assert(std::size(kNames) == Sharding::Partial + 1,
                "one name per kind");
  return kNames[k];
}

tp::ShardingAttr Sharding::toAttr(MLIRContext *ctx) const {
  if (kind != Split)
    return tp::ShardingAttr::get(ctx, kindName(kind), 0, {}, {}, {});
  return tp::ShardingAttr::get(ctx, kindName(kind), axis, sizes, parts,
                               whole);
}

Sharding Sharding::fromAttr(tp::ShardingAttr attr) {
  Sharding s;
  if (attr.getKind() == "split") {
    s.kind = Split;
    s.axis = attr.getAxis();
    s.sizes.assign(attr.getSizes().begin(), attr.getSizes().end());
    s.parts.assign(attr.getParts().begin(), attr.getParts().end());
    s.whole.assign(attr.getWhole().begin(), attr.getWhole().end());
  } else if (attr.getKind() == "partial") {
    s.kind = Partial;
  }
  return s;
}

std::string Sharding::str() const {
  std::ostringstream os;
  os << kindName(kind).str();
  if (kind == Split) {
    os << "(axis " << axis << ", sizes";
    for (int64_t x : sizes)
      os << " " << x;
    if (!whole.empty()) {
      os << ", whole parts";
      for (int64_t x : whole)
        os << " " << x;
    }
    os << ")";
  }
  return os.str();
}

} // namespace tpc
