//===- SliceKernels.cpp - Slice and Pad -----------------------------------===//
//
// Both are strided copies between a window of the input and a window of the
// output. Slice's window may step backwards; Pad fills the output with its
// constant first and copies the overlap of input and output (negative pads
// crop).
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Cast.h"
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Movement.h"

#include <algorithm>
#include <cstring>

namespace tpc::cpu {
namespace {

/// ONNX inputs that must have been folded into attributes: extra operands
/// are tolerated only when the attribute is present.
Status requireAttr(const Attrs &attrs, const char *name) {
  if (!attrs.has(name))
    return Status::error(std::string("attribute ") + name +
                         " is missing (the input must be a constant "
                         "resolved to an attribute)");
  return Status::ok();
}


Status prepareSlice(const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 5, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  TPC_RETURN_IF_ERROR(requireAttr(attrs, "starts"));
  TPC_RETURN_IF_ERROR(requireAttr(attrs, "ends"));
  const Shape &s = in[0].shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  std::vector<int64_t> starts = intsAttr(attrs, "starts");
  std::vector<int64_t> ends = intsAttr(attrs, "ends");
  std::vector<int64_t> axes = intsAttr(attrs, "axes");
  std::vector<int64_t> steps = intsAttr(attrs, "steps");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return Status::error("starts, ends, axes and steps must have the same "
                         "length (got " +
                         std::to_string(starts.size()) + ", " +
                         std::to_string(ends.size()) + ", " +
                         std::to_string(axes.size()) + ", " +
                         std::to_string(steps.size()) + ")");

  std::vector<AxisSlice> slices(rank);
  for (int64_t d = 0; d < rank; ++d)
    slices[d] = {0, s[d], 1};
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis;
    TPC_RETURN_IF_ERROR(normalizeAxis(axes[i], rank, "axis", axis));
    if (seen[axis])
      return Status::error("axis " + std::to_string(axes[i]) + " is repeated");
    seen[axis] = true;
    if (steps[i] == 0)
      return Status::error("step for axis " + std::to_string(axes[i]) +
                           " is 0");
    slices[axis] = sliceAxis(s[axis], starts[i], ends[i], steps[i]);
  }

  Shape expected;
  std::vector<int64_t> dense = denseStrides(s), inStrides;
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    expected.push_back(slices[d].size);
    inStrides.push_back(dense[d] * slices[d].step);
    offset += slices[d].start * dense[d];
  }
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  // An empty result may have a start of `dim`; never offset the input then.
  if (numElements(expected) == 0)
    offset = 0;
  StridedCopyParams p;
  TPC_RETURN_IF_ERROR(makeStridedCopy(dtypeSize(in[0].dtype), expected,
                                      denseStrides(expected), 0, inStrides,
                                      offset, p));
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &ctx) {
    stridedCopy(p, i[0], o[0], ctx.numThreads);
  });
  return Status::ok();
}

Status preparePad(const std::vector<TensorDesc> &in,
                  const std::vector<TensorDesc> &out, const Attrs &attrs,
                  std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 4, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  TPC_RETURN_IF_ERROR(requireAttr(attrs, "pads"));
  std::string mode = attrs.getString("mode", "constant");
  if (mode != "constant")
    return Status::error("mode \"" + mode +
                         "\" is not supported (only \"constant\")");
  const Shape &s = in[0].shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  std::vector<int64_t> pads = intsAttr(attrs, "pads");
  std::vector<int64_t> axes = intsAttr(attrs, "axes");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  if (pads.size() != 2 * axes.size())
    return Status::error("pads has " + std::to_string(pads.size()) +
                         " entries, expected " +
                         std::to_string(2 * axes.size()));
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis;
    TPC_RETURN_IF_ERROR(normalizeAxis(axes[i], rank, "axis", axis));
    if (seen[axis])
      return Status::error("axis " + std::to_string(axes[i]) + " is repeated");
    seen[axis] = true;
    begin[axis] = pads[i];
    end[axis] = pads[i + axes.size()];
  }

  Shape expected, window;
  std::vector<int64_t> inStart(rank), outStart(rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = s[d] + begin[d] + end[d];
    if (size < 0)
      return Status::error("pads crop axis " + std::to_string(d) + " of size " +
                           std::to_string(s[d]) + " below zero");
    expected.push_back(size);
    inStart[d] = std::max<int64_t>(0, -begin[d]);
    outStart[d] = std::max<int64_t>(0, begin[d]);
    window.push_back(
        std::max<int64_t>(0, std::min(s[d] - inStart[d], size - outStart[d])));
  }
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));

  std::vector<int64_t> inDense = denseStrides(s),
                       outDense = denseStrides(expected);
  int64_t inOff = 0, outOff = 0;
  for (int64_t d = 0; d < rank; ++d) {
    inOff += inStart[d] * inDense[d];
    outOff += outStart[d] * outDense[d];
  }
  const bool hasWindow = numElements(window) > 0;
  StridedCopyParams p;
  TPC_RETURN_IF_ERROR(makeStridedCopy(dtypeSize(in[0].dtype), window, outDense,
                                      hasWindow ? outOff : 0, inDense,
                                      hasWindow ? inOff : 0, p));
  // The pad value converted once to the element type.
  double value = attrs.getFloat("value", 0.0);
  if (const std::vector<int64_t> *iv = attrs.getInts("value");
      iv && !iv->empty())
    value = static_cast<double>((*iv)[0]);
  uint64_t fill = 0;
  castKernel(CastParams{DType::F64, in[0].dtype, 1}, &value, &fill);
  const size_t es = dtypeSize(in[0].dtype);
  const int64_t numel = out[0].numel();
  kernel = makeKernel([p, fill, es, numel](const void *const *i, void *const *o,
                                           const ExecContext &ctx) {
    fillKernel(es, numel, &fill, o[0]);
    stridedCopy(p, i[0], o[0], ctx.numThreads);
  });
  return Status::ok();
}

} // namespace

void addSliceKernels(KernelTable &t) {
  t.push_back({"Slice", "strided window (attrs starts, ends, axes, steps)",
               prepareSlice});
  t.push_back({"Pad", "constant padding (attrs pads, value; negative crops)",
               preparePad});
}

AxisSlice sliceAxis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  AxisSlice r;
  r.step = step;
  if (dim == 0)
    return r;
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.size = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    r.size = start > end ? (start - end - step - 1) / -step : 0;
  }
  r.start = start;
  return r;
}

} // namespace tpc::cpu
