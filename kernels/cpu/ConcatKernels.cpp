//===- ConcatKernels.cpp - Concat and Split -------------------------------===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Movement.h"

#include <algorithm>

namespace tpc::cpu {
namespace {

/// Checks that `d` equals `ref` in every dim but `axis`.
Status checkSameExceptAxis(const TensorDesc &d, const std::string &what,
                           const TensorDesc &ref, const std::string &refWhat,
                           int64_t axis) {
  bool same = d.shape.size() == ref.shape.size();
  for (size_t i = 0; same && i < d.shape.size(); ++i)
    same = static_cast<int64_t>(i) == axis || d.shape[i] == ref.shape[i];
  if (!same)
    return Status::error(what + " shape " + fmtShape(d.shape) +
                         " differs from " + refWhat + " shape " +
                         fmtShape(ref.shape) + " outside axis " +
                         std::to_string(axis));
  return checkSameDType(d, what, ref, refWhat);
}

Status prepareConcat(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, SIZE_MAX, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  if (!attrs.getInts("axis"))
    return Status::error("attribute axis is missing");
  const int64_t rank = static_cast<int64_t>(in[0].shape.size());
  if (rank == 0)
    return Status::error("cannot concatenate scalars");
  int64_t axis;
  TPC_RETURN_IF_ERROR(
      normalizeAxis(attrs.getInt("axis", 0), rank, "axis", axis));
  Shape expected = in[0].shape;
  expected[axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    TPC_RETURN_IF_ERROR(checkSameExceptAxis(in[i], "input " + std::to_string(i),
                                            in[0], "input 0", axis));
    expected[axis] += in[i].shape[axis];
  }
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));

  ConcatParams p;
  const int64_t es = static_cast<int64_t>(dtypeSize(in[0].dtype));
  const int64_t inner = product(expected, axis + 1, expected.size()) * es;
  p.outer = product(expected, 0, axis);
  p.rowBytes = expected[axis] * inner;
  for (const TensorDesc &d : in)
    p.chunkBytes.push_back(d.shape[axis] * inner);
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &ctx) {
    concatKernel(p, i, o[0], ctx.numThreads);
  });
  return Status::ok();
}

Status prepareSplit(const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 2, 1, SIZE_MAX));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  const Shape &s = in[0].shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  if (rank == 0)
    return Status::error("cannot split a scalar");
  int64_t axis;
  TPC_RETURN_IF_ERROR(
      normalizeAxis(attrs.getInt("axis", 0), rank, "axis", axis));

  // Sizes: attribute split, else num_outputs / the number of outputs with
  // the last chunk possibly smaller (opset 18).
  std::vector<int64_t> sizes;
  if (const std::vector<int64_t> *split = attrs.getInts("split")) {
    sizes = *split;
    if (sizes.size() != out.size())
      return Status::error(
          "attribute split has " + std::to_string(sizes.size()) +
          " sizes but there are " + std::to_string(out.size()) + " outputs");
    int64_t sum = 0;
    for (int64_t v : sizes) {
      if (v < 0)
        return Status::error("attribute split has negative size " +
                             std::to_string(v));
      sum += v;
    }
    if (sum != s[axis])
      return Status::error("attribute split sums to " + std::to_string(sum) +
                           " but axis " + std::to_string(axis) + " has size " +
                           std::to_string(s[axis]));
  } else {
    int64_t n = static_cast<int64_t>(out.size());
    if (attrs.getInts("num_outputs") && attrs.getInt("num_outputs", 0) != n)
      return Status::error("attribute num_outputs is " +
                           std::to_string(attrs.getInt("num_outputs", 0)) +
                           " but there are " + std::to_string(n) + " outputs");
    int64_t chunk = (s[axis] + n - 1) / n;
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(
          std::max<int64_t>(0, std::min(chunk, s[axis] - i * chunk)));
  }

  ConcatParams p;
  const int64_t es = static_cast<int64_t>(dtypeSize(in[0].dtype));
  const int64_t inner = product(s, axis + 1, s.size()) * es;
  p.outer = product(s, 0, axis);
  p.rowBytes = s[axis] * inner;
  for (size_t i = 0; i < out.size(); ++i) {
    Shape expected = s;
    expected[axis] = sizes[i];
    const std::string what = "output " + std::to_string(i);
    if (!isAbsent(out[i])) {
      TPC_RETURN_IF_ERROR(checkSameDType(out[i], what, in[0], "input 0"));
      TPC_RETURN_IF_ERROR(checkOutputShape(out[i], expected, what));
    }
    p.chunkBytes.push_back(sizes[i] * inner);
  }
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &ctx) {
    splitKernel(p, i[0], o, ctx.numThreads);
  });
  return Status::ok();
}

} // namespace

void addConcatKernels(KernelTable &t) {
  t.push_back({"Concat", "join inputs along attr axis", prepareConcat});
  t.push_back(
      {"Split", "cut along attr axis into attr split sizes", prepareSplit});
}

} // namespace tpc::cpu
