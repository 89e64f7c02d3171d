//===- LayoutKernels.cpp - Transpose, Expand, Tile and Trilu --------------===//
//
// Transpose, Expand and Tile are strided copies: each output dim walks the
// input with a permuted, zero (broadcast) or split stride.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Movement.h"

#include <algorithm>

namespace tpc::cpu {
namespace {

std::unique_ptr<PreparedKernel> makeStrided(const StridedCopyParams &p) {
  return makeKernel([p](const void *const *i, void *const *o,
                        const ExecContext &ctx) {
    stridedCopy(p, i[0], o[0], ctx.numThreads);
  });
}

Status prepareTranspose(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  const Shape &s = in[0].shape;
  const size_t rank = s.size();
  std::vector<int64_t> perm;
  if (const std::vector<int64_t> *p = attrs.getInts("perm")) {
    perm = *p;
  } else {
    for (size_t i = 0; i < rank; ++i)
      perm.push_back(static_cast<int64_t>(rank - 1 - i));
  }
  if (perm.size() != rank)
    return Status::error(
        "perm " + fmtShape(perm) + " has " + std::to_string(perm.size()) +
        " entries but the input has rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p])
      return Status::error("perm " + fmtShape(perm) +
                           " is not a permutation of 0.." +
                           std::to_string(static_cast<int64_t>(rank) - 1));
    seen[p] = true;
  }
  Shape expected;
  std::vector<int64_t> dense = denseStrides(s), inStrides;
  for (int64_t p : perm) {
    expected.push_back(s[p]);
    inStrides.push_back(dense[p]);
  }
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  StridedCopyParams p;
  TPC_RETURN_IF_ERROR(makeStridedCopy(dtypeSize(in[0].dtype), expected,
                                      denseStrides(expected), 0, inStrides, 0,
                                      p));
  kernel = makeStrided(p);
  return Status::ok();
}

Status prepareExpand(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  const Shape &target = out[0].shape;
  if (const std::vector<int64_t> *shape = attrs.getInts("shape")) {
    // ONNX Expand broadcasts both ways: a 1 in `shape` keeps the input dim.
    Shape expected;
    TPC_RETURN_IF_ERROR(broadcastShapes({in[0].shape, *shape}, expected));
    TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  } else if (!broadcastsTo(in[0].shape, target)) {
    return Status::error("input shape " + fmtShape(in[0].shape) +
                         " does not broadcast to output shape " +
                         fmtShape(target));
  }
  StridedCopyParams p;
  TPC_RETURN_IF_ERROR(
      makeStridedCopy(dtypeSize(in[0].dtype), target, denseStrides(target), 0,
                      broadcastStrides(in[0].shape, target), 0, p));
  kernel = makeStrided(p);
  return Status::ok();
}

Status prepareTile(const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  const Shape &s = in[0].shape;
  const std::vector<int64_t> *repeats = attrs.getInts("repeats");
  if (!repeats)
    return Status::error("attribute repeats is missing");
  if (repeats->size() != s.size())
    return Status::error("repeats has " + std::to_string(repeats->size()) +
                         " entries but the input has rank " +
                         std::to_string(s.size()));
  // Output dim i of size r*d is walked as (r, d) with input strides (0, s_i):
  // row-major order over (r, d) is exactly output order along that dim.
  Shape expected, walk;
  std::vector<int64_t> dense = denseStrides(s), inStrides;
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t r = (*repeats)[i];
    if (r < 0)
      return Status::error("repeats has negative entry " + std::to_string(r));
    expected.push_back(s[i] * r);
    walk.push_back(r);
    walk.push_back(s[i]);
    inStrides.push_back(0);
    inStrides.push_back(dense[i]);
  }
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  StridedCopyParams p;
  TPC_RETURN_IF_ERROR(makeStridedCopy(dtypeSize(in[0].dtype), walk,
                                      denseStrides(walk), 0, inStrides, 0, p));
  kernel = makeStrided(p);
  return Status::ok();
}

Status prepareTrilu(const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  if (in.size() == 2 && !isAbsent(in[1]) && !attrs.getInts("k"))
    return Status::error("input k must be resolved to attribute k");
  const Shape &s = in[0].shape;
  if (s.size() < 2)
    return Status::error("input 0 must have rank >= 2, got shape " +
                         fmtShape(s));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], s));
  int64_t upper = attrs.getInt("upper", 1);
  if (upper != 0 && upper != 1)
    return Status::error("attribute upper must be 0 or 1, got " +
                         std::to_string(upper));
  TriluParams p;
  p.elemSize = dtypeSize(in[0].dtype);
  p.rows = s[s.size() - 2];
  p.cols = s[s.size() - 1];
  p.batch = product(s, 0, s.size() - 2);
  // Clamp k so that r + k cannot overflow; beyond +-(rows + cols) every k
  // behaves the same.
  int64_t lim = p.rows + p.cols + 1;
  p.k = std::max(-lim, std::min(lim, attrs.getInt("k", 0)));
  p.upper = upper == 1;
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &) { triluKernel(p, i[0], o[0]); });
  return Status::ok();
}

} // namespace

void addLayoutKernels(KernelTable &t) {
  t.push_back({"Transpose", "permute dims (attr perm, default reversed)",
               prepareTranspose});
  t.push_back({"Expand", "broadcast to the output shape", prepareExpand});
  t.push_back({"Tile", "repeat along each dim (attr repeats)", prepareTile});
  t.push_back({"Trilu", "keep the upper or lower triangle (attrs upper, k)",
               prepareTrilu});
}

} // namespace tpc::cpu
