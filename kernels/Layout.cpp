//===- Layout.cpp - Shapes, broadcasting and strided layouts --------------===//
#include "kernels/Layout.h"
#include "kernels/Checks.h"

#include <algorithm>

namespace tpc {

Status broadcastShapes(const std::vector<Shape> &shapes, Shape &out) {
  size_t rank = 0;
  for (const Shape &s : shapes)
    rank = std::max(rank, s.size());
  out.assign(rank, 1);
  for (const Shape &s : shapes) {
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &o = out[off + i];
      if (s[i] == o || s[i] == 1)
        continue;
      if (o != 1) {
        std::string all;
        for (const Shape &t : shapes)
          all += (all.empty() ? "" : " and ") + fmtShape(t);
        return Status::error("shapes " + all + " are not broadcastable");
      }
      o = s[i];
    }
  }
  return Status::ok();
}

bool broadcastsTo(const Shape &from, const Shape &to) {
  if (from.size() > to.size())
    return false;
  size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[off + i])
      return false;
  return true;
}

std::vector<int64_t> denseStrides(const Shape &shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

std::vector<int64_t> broadcastStrides(const Shape &in, const Shape &outShape) {
  std::vector<int64_t> dense = denseStrides(in);
  std::vector<int64_t> s(outShape.size(), 0);
  size_t off = outShape.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    s[off + i] = in[i] == 1 ? 0 : dense[i];
  return s;
}

Status collapseLayout(const Shape &shape,
                      const std::vector<std::vector<int64_t>> &strides,
                      int numOperands, int64_t *outShape,
                      int64_t (*outStrides)[kMaxDims], int &outRank) {
  // Unit dims contribute nothing to the walk; drop them first.
  std::vector<size_t> keep;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1)
      keep.push_back(d);

  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> st(numOperands);
  for (size_t d : keep) {
    bool merge = !dims.empty();
    // Dim d continues the previous kept dim for an operand when stepping the
    // previous dim once equals stepping d across its whole extent.
    for (int i = 0; merge && i < numOperands; ++i)
      merge = st[i].back() == strides[i][d] * shape[d];
    if (merge) {
      dims.back() *= shape[d];
      for (int i = 0; i < numOperands; ++i)
        st[i].back() = strides[i][d];
      continue;
    }
    dims.push_back(shape[d]);
    for (int i = 0; i < numOperands; ++i)
      st[i].push_back(strides[i][d]);
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (int i = 0; i < numOperands; ++i)
      st[i].push_back(0);
  }
  if (dims.size() > static_cast<size_t>(kMaxDims))
    return Status::error("iteration space " + fmtShape(shape) + " needs " +
                         std::to_string(dims.size()) +
                         " dims after collapsing; at most " +
                         std::to_string(kMaxDims) + " are supported");
  outRank = static_cast<int>(dims.size());
  for (int d = 0; d < outRank; ++d) {
    outShape[d] = dims[d];
    for (int i = 0; i < numOperands; ++i)
      outStrides[i][d] = st[i][d];
  }
  return Status::ok();
}

} // namespace tpc
