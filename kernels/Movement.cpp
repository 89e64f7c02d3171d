//===- Movement.cpp - Params of the data-movement kernels, for every backend =//
#include "kernels/Movement.h"
#include "kernels/Checks.h"

#include <algorithm>

namespace tpc {

namespace {

/// One input and one output of one dtype; up to `maxIn` inputs, the others
/// being ONNX inputs the compiler resolved to attributes.
Status checkOneToOne(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, size_t maxIn) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, maxIn, 1, 1));
  return checkSameDType(in[0], "input 0", out[0], "output 0");
}

/// The axis of attribute `name`, required, in [0, rank) of `d`, which must
/// have rank >= 1.
Status requireAxis(const Attrs &attrs, const char *name, const TensorDesc &d,
                   const char *what, int64_t &axis) {
  const int64_t rank = int64_t(d.shape.size());
  if (rank == 0)
    return Status::error(std::string(what) + " must have rank >= 1");
  TPC_RETURN_IF_ERROR(requireInt(attrs, name, axis));
  return normalizeAxis(axis, rank, name, axis);
}

/// Marks `axis` of a per-axis attribute as seen; an axis twice is an error.
Status markAxis(std::vector<bool> &seen, int64_t axis, int64_t given) {
  if (seen[size_t(axis)])
    return Status::error("axis " + std::to_string(given) + " is repeated");
  seen[size_t(axis)] = true;
  return Status::ok();
}

/// What the gathers share: data and output alike, int64 or int32 indices.
Status checkGatherOperands(const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 2, 2, 1, 1));
  TPC_RETURN_IF_ERROR(
      checkDType(in[1], "input 1 (indices)", {DType::I64, DType::I32}));
  return checkSameDType(in[0], "input 0", out[0], "output 0");
}

/// What the scatters share: data and output alike, int64 or int32 indices,
/// updates of data's dtype, and the reduction, which data's dtype must be
/// able to take.
Status checkScatterOperands(const std::vector<TensorDesc> &in,
                            const std::vector<TensorDesc> &out,
                            const Attrs &attrs, ScatterReduction &r) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 3, 3, 1, 1));
  TPC_RETURN_IF_ERROR(
      checkDType(in[1], "input 1 (indices)", {DType::I64, DType::I32}));
  TPC_RETURN_IF_ERROR(checkSameDType(in[2], "input 2", in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));
  std::string name;
  TPC_RETURN_IF_ERROR(requireString(attrs, "reduction", name));
  static const std::pair<const char *, ScatterReduction> kNames[] = {
      {"none", ScatterReduction::None},
      {"add", ScatterReduction::Add},
      {"mul", ScatterReduction::Mul},
      {"max", ScatterReduction::Max},
      {"min", ScatterReduction::Min}};
  const auto *it = std::find_if(std::begin(kNames), std::end(kNames),
                                [&](const auto &e) { return name == e.first; });
  if (it == std::end(kNames))
    return Status::error("reduction must be none, add, mul, max or min, not '" +
                         name + "'");
  r = it->second;
  if (r == ScatterReduction::None)
    return Status::ok();
  return checkDType(in[0], "input 0 (reduced data)",
                    {DType::F32, DType::F64, DType::F16, DType::BF16,
                     DType::I32, DType::I64});
}

} // namespace

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

Status makeStridedCopy(size_t elemSize, const Shape &shape,
                       std::vector<int64_t> outStrides, int64_t outOffset,
                       std::vector<int64_t> inStrides, int64_t inOffset,
                       StridedCopyParams &p) {
  p.elemSize = elemSize;
  p.outOffset = outOffset;
  p.inOffset = inOffset;
  TPC_RETURN_IF_ERROR(makeLayout<2>(
      shape, {std::move(outStrides), std::move(inStrides)}, p.layout));
  const StridedLayout<2> &l = p.layout;
  const int last = l.rank - 1;
  // Tiling pays off once both tile sides span several cache lines.
  constexpr int64_t kMinSide = 16;
  p.tiled = l.rank >= 2 && l.strides[0][last] == 1 && l.strides[1][last] != 1 &&
            l.strides[1][last] != 0 && l.strides[1][last - 1] == 1 &&
            l.shape[last] >= kMinSide && l.shape[last - 1] >= kMinSide;
  if (p.tiled) {
    p.blocks = l;
    p.blocks.rank = last;
    p.blocks.shape[last - 1] = 1;
    p.blocks.numel = l.numel / (l.shape[last] * l.shape[last - 1]);
  }
  return Status::ok();
}

Status makeTransposeParams(const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out,
                           const Attrs &attrs, StridedCopyParams &p) {
  TPC_RETURN_IF_ERROR(checkOneToOne(in, out, 1));
  const Shape &s = in[0].shape;
  const size_t rank = s.size();
  std::vector<int64_t> perm;
  TPC_RETURN_IF_ERROR(requireInts(attrs, "perm", perm));
  if (perm.size() != rank)
    return Status::error(
        "perm " + fmtShape(perm) + " has " + std::to_string(perm.size()) +
        " entries but the input has rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t d : perm) {
    if (d < 0 || d >= int64_t(rank) || seen[size_t(d)])
      return Status::error("perm " + fmtShape(perm) +
                           " is not a permutation of 0.." +
                           std::to_string(int64_t(rank) - 1));
    seen[size_t(d)] = true;
  }
  Shape expected;
  std::vector<int64_t> dense = denseStrides(s), inStrides;
  for (int64_t d : perm) {
    expected.push_back(s[size_t(d)]);
    inStrides.push_back(dense[size_t(d)]);
  }
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  return makeStridedCopy(dtypeSize(in[0].dtype), expected,
                         denseStrides(expected), 0, inStrides, 0, p);
}

Status makeExpandParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &,
                        StridedCopyParams &p) {
  TPC_RETURN_IF_ERROR(checkOneToOne(in, out, 2));
  const Shape &target = out[0].shape;
  if (!broadcastsTo(in[0].shape, target))
    return Status::error("input shape " + fmtShape(in[0].shape) +
                         " does not broadcast to output shape " +
                         fmtShape(target));
  return makeStridedCopy(dtypeSize(in[0].dtype), target, denseStrides(target),
                         0, broadcastStrides(in[0].shape, target), 0, p);
}

Status makeTileParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      StridedCopyParams &p) {
  TPC_RETURN_IF_ERROR(checkOneToOne(in, out, 2));
  const Shape &s = in[0].shape;
  std::vector<int64_t> repeats;
  TPC_RETURN_IF_ERROR(requireInts(attrs, "repeats", repeats));
  if (repeats.size() != s.size())
    return Status::error("repeats has " + std::to_string(repeats.size()) +
                         " entries but the input has rank " +
                         std::to_string(s.size()));
  // Output dim i of size r*d is walked as (r, d) with input strides (0, s_i):
  // row-major order over (r, d) is exactly output order along that dim.
  Shape expected, walk;
  std::vector<int64_t> dense = denseStrides(s), inStrides;
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t r = repeats[i];
    if (r < 0)
      return Status::error("repeats has negative entry " + std::to_string(r));
    expected.push_back(s[i] * r);
    walk.push_back(r);
    walk.push_back(s[i]);
    inStrides.push_back(0);
    inStrides.push_back(dense[i]);
  }
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  return makeStridedCopy(dtypeSize(in[0].dtype), walk, denseStrides(walk), 0,
                         inStrides, 0, p);
}

Status makeSliceParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       StridedCopyParams &p) {
  TPC_RETURN_IF_ERROR(checkOneToOne(in, out, 5));
  std::vector<int64_t> starts, ends, axes, steps;
  TPC_RETURN_IF_ERROR(requireInts(attrs, "starts", starts));
  TPC_RETURN_IF_ERROR(requireInts(attrs, "ends", ends));
  TPC_RETURN_IF_ERROR(requireInts(attrs, "axes", axes));
  TPC_RETURN_IF_ERROR(requireInts(attrs, "steps", steps));
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return Status::error("starts, ends, axes and steps must have the same "
                         "length (got " +
                         std::to_string(starts.size()) + ", " +
                         std::to_string(ends.size()) + ", " +
                         std::to_string(axes.size()) + ", " +
                         std::to_string(steps.size()) + ")");
  const Shape &s = in[0].shape;
  const int64_t rank = int64_t(s.size());
  std::vector<AxisSlice> slices(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d)
    slices[size_t(d)] = {0, s[size_t(d)], 1};
  std::vector<bool> seen(size_t(rank), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis;
    TPC_RETURN_IF_ERROR(normalizeAxis(axes[i], rank, "axis", axis));
    TPC_RETURN_IF_ERROR(markAxis(seen, axis, axes[i]));
    if (steps[i] == 0)
      return Status::error("step for axis " + std::to_string(axes[i]) +
                           " is 0");
    slices[size_t(axis)] =
        sliceAxis(s[size_t(axis)], starts[i], ends[i], steps[i]);
  }
  Shape expected;
  std::vector<int64_t> dense = denseStrides(s), inStrides;
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const AxisSlice &a = slices[size_t(d)];
    expected.push_back(a.size);
    inStrides.push_back(dense[size_t(d)] * a.step);
    offset += a.start * dense[size_t(d)];
  }
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  // An empty result may have a start of `dim`; never offset the input then.
  if (numElements(expected) == 0)
    offset = 0;
  return makeStridedCopy(dtypeSize(in[0].dtype), expected,
                         denseStrides(expected), 0, inStrides, offset, p);
}

StridedCopyBuilder stridedCopyBuilder(MovementOp op) {
  switch (op) {
  case MovementOp::Transpose:
    return makeTransposeParams;
  case MovementOp::Expand:
    return makeExpandParams;
  case MovementOp::Tile:
    return makeTileParams;
  case MovementOp::Slice:
    return makeSliceParams;
  default:
    return nullptr;
  }
}

Status makePadParams(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     PadParams &p) {
  TPC_RETURN_IF_ERROR(checkOneToOne(in, out, 4));
  std::vector<int64_t> pads;
  TPC_RETURN_IF_ERROR(requireInts(attrs, "pads", pads));
  TPC_RETURN_IF_ERROR(requireFloat(attrs, "value", p.value));
  const Shape &s = in[0].shape;
  const size_t rank = s.size();
  if (pads.size() != 2 * rank)
    return Status::error("pads has " + std::to_string(pads.size()) +
                         " entries, expected " + std::to_string(2 * rank) +
                         " (a begin and an end per dim)");
  Shape expected, window;
  std::vector<int64_t> inStart(rank), outStart(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t begin = pads[d], end = pads[d + rank];
    const int64_t size = s[d] + begin + end;
    if (size < 0)
      return Status::error("pads crop axis " + std::to_string(d) + " of size " +
                           std::to_string(s[d]) + " below zero");
    expected.push_back(size);
    inStart[d] = std::max<int64_t>(0, -begin);
    outStart[d] = std::max<int64_t>(0, begin);
    window.push_back(
        std::max<int64_t>(0, std::min(s[d] - inStart[d], size - outStart[d])));
  }
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  const std::vector<int64_t> inDense = denseStrides(s),
                             outDense = denseStrides(expected);
  int64_t inOff = 0, outOff = 0;
  for (size_t d = 0; d < rank; ++d) {
    inOff += inStart[d] * inDense[d];
    outOff += outStart[d] * outDense[d];
  }
  const bool hasWindow = numElements(window) > 0;
  p.numel = numElements(expected);
  return makeStridedCopy(dtypeSize(in[0].dtype), window, outDense,
                         hasWindow ? outOff : 0, inDense, hasWindow ? inOff : 0,
                         p.copy);
}

Status makeConcatParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        ConcatParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, SIZE_MAX, 1, 1));
  int64_t axis;
  TPC_RETURN_IF_ERROR(requireAxis(attrs, "axis", in[0], "input 0", axis));
  Shape expected = in[0].shape;
  expected[size_t(axis)] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string what = "input " + std::to_string(i);
    const Shape &si = in[i].shape;
    bool same = si.size() == in[0].shape.size();
    for (size_t d = 0; same && d < si.size(); ++d)
      same = int64_t(d) == axis || si[d] == in[0].shape[d];
    if (!same)
      return Status::error(
          what + " shape " + fmtShape(si) + " differs from input 0 shape " +
          fmtShape(in[0].shape) + " outside axis " + std::to_string(axis));
    TPC_RETURN_IF_ERROR(checkSameDType(in[i], what, in[0], "input 0"));
    expected[size_t(axis)] += si[size_t(axis)];
  }
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  const int64_t inner = product(expected, size_t(axis) + 1, expected.size()) *
                        int64_t(dtypeSize(in[0].dtype));
  p.outer = product(expected, 0, size_t(axis));
  p.rowBytes = expected[size_t(axis)] * inner;
  p.chunkBytes.clear();
  for (const TensorDesc &d : in)
    p.chunkBytes.push_back(d.shape[size_t(axis)] * inner);
  return Status::ok();
}

Status makeSplitParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       ConcatParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 2, 1, SIZE_MAX));
  const Shape &s = in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(requireAxis(attrs, "axis", in[0], "input 0", axis));
  std::vector<int64_t> sizes;
  TPC_RETURN_IF_ERROR(requireInts(attrs, "split", sizes));
  if (sizes.size() != out.size())
    return Status::error("attribute split has " + std::to_string(sizes.size()) +
                         " sizes but there are " + std::to_string(out.size()) +
                         " outputs");
  int64_t sum = 0;
  for (int64_t v : sizes) {
    if (v < 0 || v > s[size_t(axis)])
      return Status::error("attribute split has size " + std::to_string(v) +
                           " outside [0, " + std::to_string(s[size_t(axis)]) +
                           "]");
    sum += v;
  }
  if (sum != s[size_t(axis)])
    return Status::error("attribute split sums to " + std::to_string(sum) +
                         " but axis " + std::to_string(axis) + " has size " +
                         std::to_string(s[size_t(axis)]));
  const int64_t inner =
      product(s, size_t(axis) + 1, s.size()) * int64_t(dtypeSize(in[0].dtype));
  p.outer = product(s, 0, size_t(axis));
  p.rowBytes = s[size_t(axis)] * inner;
  p.chunkBytes.clear();
  for (size_t i = 0; i < out.size(); ++i) {
    if (!isAbsent(out[i])) {
      const std::string what = "output " + std::to_string(i);
      Shape expected = s;
      expected[size_t(axis)] = sizes[i];
      TPC_RETURN_IF_ERROR(checkSameDType(out[i], what, in[0], "input 0"));
      TPC_RETURN_IF_ERROR(checkOutputShape(out[i], expected, what));
    }
    p.chunkBytes.push_back(sizes[i] * inner);
  }
  return Status::ok();
}

Status makeGatherParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        GatherParams &p) {
  TPC_RETURN_IF_ERROR(checkGatherOperands(in, out));
  int64_t axis;
  TPC_RETURN_IF_ERROR(
      requireAxis(attrs, "axis", in[0], "input 0 (data)", axis));
  const Shape &s = in[0].shape;
  Shape expected(s.begin(), s.begin() + axis);
  expected.insert(expected.end(), in[1].shape.begin(), in[1].shape.end());
  expected.insert(expected.end(), s.begin() + axis + 1, s.end());
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  p.outer = product(s, 0, size_t(axis));
  p.axisDim = s[size_t(axis)];
  p.numIndices = in[1].numel();
  p.innerBytes =
      product(s, size_t(axis) + 1, s.size()) * int64_t(dtypeSize(in[0].dtype));
  p.indexType = in[1].dtype;
  return Status::ok();
}

Status makeGatherElementsParams(const std::vector<TensorDesc> &in,
                                const std::vector<TensorDesc> &out,
                                const Attrs &attrs, GatherElementsParams &p) {
  TPC_RETURN_IF_ERROR(checkGatherOperands(in, out));
  int64_t axis;
  TPC_RETURN_IF_ERROR(
      requireAxis(attrs, "axis", in[0], "input 0 (data)", axis));
  const Shape &s = in[0].shape, &is = in[1].shape;
  if (is.size() != s.size())
    return Status::error("indices rank " + std::to_string(is.size()) +
                         " differs from data rank " + std::to_string(s.size()));
  for (size_t d = 0; d < s.size(); ++d)
    if (int64_t(d) != axis && is[d] > s[d])
      return Status::error("indices shape " + fmtShape(is) +
                           " exceeds data shape " + fmtShape(s) + " at dim " +
                           std::to_string(d));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], is));
  p.elemSize = dtypeSize(in[0].dtype);
  p.indexType = in[1].dtype;
  p.axisDim = s[size_t(axis)];
  std::vector<int64_t> dataStrides = denseStrides(s);
  p.axisStride = dataStrides[size_t(axis)];
  dataStrides[size_t(axis)] = 0;
  return makeLayout<2>(is, {denseStrides(is), dataStrides}, p.layout);
}

Status makeGatherNDParams(const std::vector<TensorDesc> &in,
                          const std::vector<TensorDesc> &out,
                          const Attrs &attrs, GatherNDParams &p) {
  TPC_RETURN_IF_ERROR(checkGatherOperands(in, out));
  const Shape &s = in[0].shape, &is = in[1].shape;
  int64_t b;
  TPC_RETURN_IF_ERROR(requireInt(attrs, "batch_dims", b));
  const int64_t rank = int64_t(s.size()), irank = int64_t(is.size());
  if (irank < 1 || b < 0 || b >= std::min(rank, irank))
    return Status::error(
        "batch_dims " + std::to_string(b) + " is out of range for data rank " +
        std::to_string(rank) + " and indices rank " + std::to_string(irank));
  const int64_t depth = is.back();
  if (depth < 1 || b + depth > rank)
    return Status::error("indices' last dimension " + std::to_string(depth) +
                         " does not fit data of rank " + std::to_string(rank) +
                         " with batch_dims " + std::to_string(b));
  for (int64_t d = 0; d < b; ++d)
    if (s[size_t(d)] != is[size_t(d)])
      return Status::error("batch dimension " + std::to_string(d) +
                           " differs between data " + fmtShape(s) +
                           " and indices " + fmtShape(is));
  Shape expected(is.begin(), is.end() - 1);
  expected.insert(expected.end(), s.begin() + b + depth, s.end());
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  p.batch = product(s, 0, size_t(b));
  p.tuples = product(is, size_t(b), is.size() - 1);
  p.depth = depth;
  p.dims.assign(s.begin() + b, s.begin() + b + depth);
  p.slicesPerBatch = product(s, size_t(b), size_t(b + depth));
  p.sliceBytes =
      product(s, size_t(b + depth), s.size()) * int64_t(dtypeSize(in[0].dtype));
  p.indexType = in[1].dtype;
  return Status::ok();
}

Status makeScatterNDParams(const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out,
                           const Attrs &attrs, ScatterNDParams &p) {
  TPC_RETURN_IF_ERROR(checkScatterOperands(in, out, attrs, p.reduction));
  const Shape &s = in[0].shape, &is = in[1].shape;
  const int64_t rank = int64_t(s.size());
  if (is.empty() || is.back() > rank)
    return Status::error("indices " + fmtShape(is) +
                         " must have rank >= 1 and a last dim <= data rank " +
                         std::to_string(rank));
  const int64_t depth = is.back();
  Shape want(is.begin(), is.end() - 1);
  want.insert(want.end(), s.begin() + depth, s.end());
  TPC_RETURN_IF_ERROR(checkOutputShape(in[2], want, "input 2 (updates)"));
  p.dtype = in[0].dtype;
  p.numel = in[0].numel();
  p.tuples = product(is, 0, is.size() - 1);
  p.depth = depth;
  p.dims.assign(s.begin(), s.begin() + depth);
  p.sliceElems = product(s, size_t(depth), s.size());
  p.indexType = in[1].dtype;
  return Status::ok();
}

Status makeScatterElementsParams(const std::vector<TensorDesc> &in,
                                 const std::vector<TensorDesc> &out,
                                 const Attrs &attrs, ScatterElementsParams &p) {
  TPC_RETURN_IF_ERROR(checkScatterOperands(in, out, attrs, p.reduction));
  int64_t axis;
  TPC_RETURN_IF_ERROR(
      requireAxis(attrs, "axis", in[0], "input 0 (data)", axis));
  const Shape &s = in[0].shape, &is = in[1].shape;
  const int64_t rank = int64_t(s.size());
  if (int64_t(is.size()) != rank)
    return Status::error("indices rank " + std::to_string(is.size()) +
                         " differs from data rank " + std::to_string(rank));
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && is[size_t(d)] > s[size_t(d)])
      return Status::error("indices shape " + fmtShape(is) +
                           " exceeds data shape " + fmtShape(s) + " at dim " +
                           std::to_string(d));
  TPC_RETURN_IF_ERROR(checkOutputShape(in[2], is, "input 2 (updates)"));
  p.dtype = in[0].dtype;
  p.numel = in[0].numel();
  p.indexType = in[1].dtype;
  p.lineLength = is[size_t(axis)];
  p.indexStride = product(is, size_t(axis) + 1, is.size());
  p.axisDim = s[size_t(axis)];
  std::vector<int64_t> dataStrides = denseStrides(s);
  p.axisStride = dataStrides[size_t(axis)];
  dataStrides[size_t(axis)] = 0;
  Shape lines = is;
  lines[size_t(axis)] = 1;
  return makeLayout<2>(lines, {denseStrides(is), dataStrides}, p.lines);
}

Status makeTriluParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       TriluParams &p) {
  TPC_RETURN_IF_ERROR(checkOneToOne(in, out, 2));
  const Shape &s = in[0].shape;
  if (s.size() < 2)
    return Status::error("input 0 must have rank >= 2, got shape " +
                         fmtShape(s));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], s));
  bool upper;
  int64_t k;
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "upper", upper));
  TPC_RETURN_IF_ERROR(requireInt(attrs, "k", k));
  p.elemSize = dtypeSize(in[0].dtype);
  p.rows = s[s.size() - 2];
  p.cols = s[s.size() - 1];
  p.batch = product(s, 0, s.size() - 2);
  // Clamp k so that r + k cannot overflow; beyond +-(rows + cols) every k
  // behaves the same.
  const int64_t lim = p.rows + p.cols + 1;
  p.k = std::max(-lim, std::min(lim, k));
  p.upper = upper;
  return Status::ok();
}

Status makeCacheWriteParams(const std::vector<TensorDesc> &in,
                            const std::vector<TensorDesc> &out,
                            const Attrs &attrs, CacheWriteParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 3, 3, 1, 1));
  const TensorDesc &state = in[0], &update = in[1], &position = in[2];
  TPC_RETURN_IF_ERROR(checkSameDType(state, "input 0", update, "input 1"));
  TPC_RETURN_IF_ERROR(checkSameDType(state, "input 0", out[0], "output 0"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], state.shape));
  TPC_RETURN_IF_ERROR(checkDType(position, "input 2", {DType::I64}));
  if (position.numel() != 1)
    return Status::error("input 2 (the position) must hold one value, not " +
                         fmtShape(position.shape));
  int64_t axis;
  TPC_RETURN_IF_ERROR(requireAxis(attrs, "axis", state, "input 0", axis));
  const int64_t rank = int64_t(state.shape.size());
  if (update.shape.size() != state.shape.size())
    return Status::error("input 1 " + fmtShape(update.shape) +
                         " and the state " + fmtShape(state.shape) +
                         " differ in rank");
  for (int64_t d = 0; d < rank; ++d) {
    const bool ok = d == axis
                        ? update.shape[size_t(d)] <= state.shape[size_t(d)]
                        : update.shape[size_t(d)] == state.shape[size_t(d)];
    if (!ok)
      return Status::error("input 1 " + fmtShape(update.shape) +
                           " does not fit the state " + fmtShape(state.shape) +
                           " along axis " + std::to_string(axis));
  }
  p.outer = product(state.shape, 0, size_t(axis));
  p.length = state.shape[size_t(axis)];
  p.n = update.shape[size_t(axis)];
  p.rowBytes = product(state.shape, size_t(axis) + 1, state.shape.size()) *
               int64_t(dtypeSize(state.dtype));
  return Status::ok();
}

} // namespace tpc
