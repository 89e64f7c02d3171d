//===- MovementKernels.cpp - Adapters of the data-movement kernels --------===//
//
// Transpose, Expand, Tile, Slice and Pad are strided copies, bound exactly as
// the CPU adapters bind them; Concat/Split, the gathers, the scatters and
// Trilu have kernels of their own.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/Adapters.h"
#include "kernels/cuda/Kernels.h"

#include "kernels/cpu/Cast.h"
#include "kernels/cpu/Movement.h"

#include <algorithm>

namespace tpc::cuda {
namespace {

std::unique_ptr<PreparedKernel> makeStrided(const char *name,
                                            const cpu::StridedCopyParams &p) {
  return makeLaunch(name, [p](const void *const *i, void *const *o,
                              cudaStream_t s) {
    return stridedCopy(p, i[0], o[0], s);
  });
}

Status prepareTranspose(const KernelContext &,
                        const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Transpose", in, out, attrs, false));
  const Shape &s = in[0].shape;
  std::vector<int64_t> perm;
  if (const std::vector<int64_t> *p = attrs.getInts("perm"))
    perm = *p;
  else
    for (size_t i = 0; i < s.size(); ++i)
      perm.push_back(int64_t(s.size() - 1 - i));
  Shape shape;
  std::vector<int64_t> dense = cpu::denseStrides(s), inStrides;
  for (int64_t p : perm) {
    shape.push_back(s[size_t(p)]);
    inStrides.push_back(dense[size_t(p)]);
  }
  cpu::StridedCopyParams p;
  TPC_RETURN_IF_ERROR(cpu::makeStridedCopy(dtypeSize(in[0].dtype), shape,
                                           cpu::denseStrides(shape), 0,
                                           inStrides, 0, p));
  kernel = makeStrided("Transpose", p);
  return Status::ok();
}

Status prepareExpand(const KernelContext &, const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Expand", in, out, attrs, false));
  const Shape &target = out[0].shape;
  cpu::StridedCopyParams p;
  TPC_RETURN_IF_ERROR(cpu::makeStridedCopy(
      dtypeSize(in[0].dtype), target, cpu::denseStrides(target), 0,
      cpu::broadcastStrides(in[0].shape, target), 0, p));
  kernel = makeStrided("Expand", p);
  return Status::ok();
}

Status prepareTile(const KernelContext &, const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Tile", in, out, attrs, false));
  const Shape &s = in[0].shape;
  const std::vector<int64_t> repeats = cpu::intsAttr(attrs, "repeats");
  Shape walk;
  std::vector<int64_t> dense = cpu::denseStrides(s), inStrides;
  for (size_t i = 0; i < s.size(); ++i) {
    walk.push_back(repeats[i]);
    walk.push_back(s[i]);
    inStrides.push_back(0);
    inStrides.push_back(dense[i]);
  }
  cpu::StridedCopyParams p;
  TPC_RETURN_IF_ERROR(cpu::makeStridedCopy(dtypeSize(in[0].dtype), walk,
                                           cpu::denseStrides(walk), 0,
                                           inStrides, 0, p));
  kernel = makeStrided("Tile", p);
  return Status::ok();
}

using cpu::AxisSlice;
using cpu::sliceAxis;

Status prepareSlice(const KernelContext &, const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Slice", in, out, attrs, false));
  const Shape &s = in[0].shape;
  const int64_t rank = int64_t(s.size());
  std::vector<int64_t> starts = cpu::intsAttr(attrs, "starts");
  std::vector<int64_t> ends = cpu::intsAttr(attrs, "ends");
  std::vector<int64_t> axes = cpu::intsAttr(attrs, "axes");
  std::vector<int64_t> steps = cpu::intsAttr(attrs, "steps");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  std::vector<AxisSlice> slices(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d)
    slices[size_t(d)] = {0, s[size_t(d)], 1};
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis;
    TPC_RETURN_IF_ERROR(cpu::normalizeAxis(axes[i], rank, "axis", axis));
    slices[size_t(axis)] =
        sliceAxis(s[size_t(axis)], starts[i], ends[i], steps[i]);
  }
  Shape shape;
  std::vector<int64_t> dense = cpu::denseStrides(s), inStrides;
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const AxisSlice &a = slices[size_t(d)];
    shape.push_back(a.size);
    inStrides.push_back(dense[size_t(d)] * a.step);
    offset += a.start * dense[size_t(d)];
  }
  if (numElements(shape) == 0)
    offset = 0;
  cpu::StridedCopyParams p;
  TPC_RETURN_IF_ERROR(cpu::makeStridedCopy(dtypeSize(in[0].dtype), shape,
                                           cpu::denseStrides(shape), 0,
                                           inStrides, offset, p));
  kernel = makeStrided("Slice", p);
  return Status::ok();
}

Status preparePad(const KernelContext &, const std::vector<TensorDesc> &in,
                  const std::vector<TensorDesc> &out, const Attrs &attrs,
                  std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Pad", in, out, attrs, false));
  const Shape &s = in[0].shape;
  const int64_t rank = int64_t(s.size());
  std::vector<int64_t> pads = cpu::intsAttr(attrs, "pads");
  std::vector<int64_t> axes = cpu::intsAttr(attrs, "axes");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  std::vector<int64_t> begin(size_t(rank), 0), end(size_t(rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis;
    TPC_RETURN_IF_ERROR(cpu::normalizeAxis(axes[i], rank, "axis", axis));
    begin[size_t(axis)] = pads[i];
    end[size_t(axis)] = pads[i + axes.size()];
  }
  Shape shape, window;
  std::vector<int64_t> inStart(static_cast<size_t>(rank)),
      outStart(static_cast<size_t>(rank));
  for (size_t d = 0; d < size_t(rank); ++d) {
    const int64_t size = s[d] + begin[d] + end[d];
    shape.push_back(size);
    inStart[d] = std::max<int64_t>(0, -begin[d]);
    outStart[d] = std::max<int64_t>(0, begin[d]);
    window.push_back(
        std::max<int64_t>(0, std::min(s[d] - inStart[d], size - outStart[d])));
  }
  std::vector<int64_t> inDense = cpu::denseStrides(s),
                       outDense = cpu::denseStrides(shape);
  int64_t inOff = 0, outOff = 0;
  for (size_t d = 0; d < size_t(rank); ++d) {
    inOff += inStart[d] * inDense[d];
    outOff += outStart[d] * outDense[d];
  }
  const bool hasWindow = numElements(window) > 0;
  cpu::StridedCopyParams p;
  TPC_RETURN_IF_ERROR(cpu::makeStridedCopy(
      dtypeSize(in[0].dtype), window, outDense, hasWindow ? outOff : 0,
      inDense, hasWindow ? inOff : 0, p));
  double value = attrs.getFloat("value", 0.0);
  if (const std::vector<int64_t> *iv = attrs.getInts("value");
      iv && !iv->empty())
    value = double((*iv)[0]);
  uint64_t fill = 0;
  cpu::castKernel(cpu::CastParams{DType::F64, in[0].dtype, 1}, &value, &fill);
  const size_t es = dtypeSize(in[0].dtype);
  const int64_t numel = out[0].numel();
  kernel = makeLaunch("Pad", [p, fill, es, numel](const void *const *i,
                                                  void *const *o,
                                                  cudaStream_t st) {
    if (cudaError_t err = fillKernel(es, numel, &fill, o[0], st);
        err != cudaSuccess)
      return err;
    return stridedCopy(p, i[0], o[0], st);
  });
  return Status::ok();
}

Status prepareConcat(const KernelContext &, const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Concat", in, out, attrs, false));
  const Shape &s = out[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(cpu::normalizeAxis(attrs.getInt("axis", 0),
                                         int64_t(s.size()), "axis", axis));
  const int64_t es = int64_t(dtypeSize(in[0].dtype));
  const int64_t inner = cpu::product(s, size_t(axis) + 1, s.size()) * es;
  cpu::ConcatParams p;
  p.outer = cpu::product(s, 0, size_t(axis));
  p.rowBytes = s[size_t(axis)] * inner;
  for (const TensorDesc &d : in)
    p.chunkBytes.push_back(d.shape[size_t(axis)] * inner);
  kernel = makeLaunch("Concat", [p](const void *const *i, void *const *o,
                                    cudaStream_t st) {
    return concatKernel(p, i, o[0], st);
  });
  return Status::ok();
}

Status prepareSplit(const KernelContext &, const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Split", in, out, attrs, false));
  const Shape &s = in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(cpu::normalizeAxis(attrs.getInt("axis", 0),
                                         int64_t(s.size()), "axis", axis));
  std::vector<int64_t> sizes;
  if (const std::vector<int64_t> *split = attrs.getInts("split")) {
    sizes = *split;
  } else {
    const int64_t n = int64_t(out.size());
    const int64_t dim = s[size_t(axis)];
    const int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  const int64_t es = int64_t(dtypeSize(in[0].dtype));
  const int64_t inner = cpu::product(s, size_t(axis) + 1, s.size()) * es;
  cpu::ConcatParams p;
  p.outer = cpu::product(s, 0, size_t(axis));
  p.rowBytes = s[size_t(axis)] * inner;
  for (int64_t v : sizes)
    p.chunkBytes.push_back(v * inner);
  kernel = makeLaunch("Split", [p](const void *const *i, void *const *o,
                                   cudaStream_t st) {
    return splitKernel(p, i[0], o, st);
  });
  return Status::ok();
}

Status prepareGather(const KernelContext &ctx,
                     const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Gather", in, out, attrs, false));
  const Shape &s = in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(cpu::normalizeAxis(attrs.getInt("axis", 0),
                                         int64_t(s.size()), "axis", axis));
  cpu::GatherParams p;
  p.outer = cpu::product(s, 0, size_t(axis));
  p.axisDim = s[size_t(axis)];
  p.numIndices = in[1].numel();
  p.innerBytes = cpu::product(s, size_t(axis) + 1, s.size()) *
                 int64_t(dtypeSize(in[0].dtype));
  p.indexType = in[1].dtype;
  kernel = indexChecked(
      ctx,
      makeLaunch("Gather",
                 [p](const void *const *i, void *const *o, cudaStream_t st) {
                   return gatherKernel(p, i[0], i[1], o[0], st);
                 }),
      1, in[1], {p.axisDim});
  return Status::ok();
}

/// The KV cache write: the position is checked like a Gather index
/// against the positions that leave room for the new entries.
Status prepareCacheWrite(const KernelContext &ctx,
                         const std::vector<TensorDesc> &in,
                         const std::vector<TensorDesc> &out,
                         const Attrs &attrs,
                         std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("CacheWrite", in, out, attrs, false));
  const Shape &s = in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(cpu::normalizeAxis(attrs.getInt("axis", 2),
                                         int64_t(s.size()), "axis", axis));
  int64_t outer = cpu::product(s, 0, size_t(axis));
  int64_t length = s[size_t(axis)], n = in[1].shape[size_t(axis)];
  int64_t rowBytes = cpu::product(s, size_t(axis) + 1, s.size()) *
                     int64_t(dtypeSize(in[0].dtype));
  kernel = indexChecked(
      ctx,
      makeLaunch("CacheWrite",
                 [=](const void *const *i, void *const *o, cudaStream_t st) {
                   // In place the state is already there; otherwise copy
                   // it first.
                   if (i[0] != o[0]) {
                     cudaError_t err = cudaMemcpyAsync(
                         o[0], i[0], size_t(outer * length * rowBytes),
                         cudaMemcpyDeviceToDevice, st);
                     if (err != cudaSuccess)
                       return err;
                   }
                   return cacheWriteKernel(
                       outer, length, n, rowBytes, i[1],
                       static_cast<const int64_t *>(i[2]), o[0], st);
                 }),
      2, in[2], {length - n + 1});
  return Status::ok();
}

Status prepareGatherElements(const KernelContext &ctx,
                             const std::vector<TensorDesc> &in,
                             const std::vector<TensorDesc> &out,
                             const Attrs &attrs,
                             std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("GatherElements", in, out, attrs, false));
  const Shape &s = in[0].shape, &is = in[1].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(cpu::normalizeAxis(attrs.getInt("axis", 0),
                                         int64_t(s.size()), "axis", axis));
  cpu::GatherElementsParams p;
  p.elemSize = dtypeSize(in[0].dtype);
  p.indexType = in[1].dtype;
  p.axisDim = s[size_t(axis)];
  std::vector<int64_t> dataStrides = cpu::denseStrides(s);
  p.axisStride = dataStrides[size_t(axis)];
  dataStrides[size_t(axis)] = 0;
  TPC_RETURN_IF_ERROR(cpu::makeLayout<2>(
      is, {cpu::denseStrides(is), dataStrides}, p.layout));
  kernel = indexChecked(ctx,
                        makeLaunch("GatherElements",
                                   [p](const void *const *i, void *const *o,
                                       cudaStream_t st) {
                                     return gatherElementsKernel(p, i[0], i[1],
                                                                 o[0], st);
                                   }),
                        1, in[1], {p.axisDim});
  return Status::ok();
}

Status prepareGatherND(const KernelContext &ctx,
                       const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("GatherND", in, out, attrs, false));
  const Shape &s = in[0].shape, &is = in[1].shape;
  const int64_t b = attrs.getInt("batch_dims", 0);
  const int64_t depth = is.back();
  if (depth > kMaxGatherNDDepth)
    return Status::error("GatherND tuples of depth " + std::to_string(depth) +
                         " exceed the CUDA kernel's " +
                         std::to_string(kMaxGatherNDDepth));
  cpu::GatherNDParams p;
  p.batch = cpu::product(s, 0, size_t(b));
  p.tuples = cpu::product(is, size_t(b), is.size() - 1);
  p.depth = depth;
  p.dims.assign(s.begin() + b, s.begin() + b + depth);
  p.slicesPerBatch = cpu::product(s, size_t(b), size_t(b + depth));
  p.sliceBytes = cpu::product(s, size_t(b + depth), s.size()) *
                 int64_t(dtypeSize(in[0].dtype));
  p.indexType = in[1].dtype;
  kernel = indexChecked(
      ctx,
      makeLaunch("GatherND",
                 [p](const void *const *i, void *const *o, cudaStream_t st) {
                   return gatherNDKernel(p, i[0], i[1], o[0], st);
                 }),
      1, in[1], p.dims);
  return Status::ok();
}

Status prepareScatterND(const KernelContext &ctx,
                        const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        std::unique_ptr<PreparedKernel> &kernel) {
  cpu::ScatterNDParams p;
  TPC_RETURN_IF_ERROR(cpu::makeScatterNDParams(in, out, attrs, p));
  if (p.depth > kMaxGatherNDDepth)
    return Status::error("ScatterND tuples of depth " +
                         std::to_string(p.depth) + " exceed the CUDA kernel's " +
                         std::to_string(kMaxGatherNDDepth));
  kernel = indexChecked(
      ctx,
      makeLaunch("ScatterND",
                 [p](const void *const *i, void *const *o, cudaStream_t st) {
                   return scatterNDKernel(p, i[0], i[1], i[2], o[0], st);
                 }),
      1, in[1], p.dims);
  return Status::ok();
}

Status prepareScatterElements(const KernelContext &ctx,
                              const std::vector<TensorDesc> &in,
                              const std::vector<TensorDesc> &out,
                              const Attrs &attrs,
                              std::unique_ptr<PreparedKernel> &kernel) {
  cpu::ScatterElementsParams p;
  TPC_RETURN_IF_ERROR(cpu::makeScatterElementsParams(in, out, attrs, p));
  kernel = indexChecked(ctx,
                        makeLaunch("ScatterElements",
                                   [p](const void *const *i, void *const *o,
                                       cudaStream_t st) {
                                     return scatterElementsKernel(
                                         p, i[0], i[1], i[2], o[0], st);
                                   }),
                        1, in[1], {p.axisDim});
  return Status::ok();
}

Status prepareTrilu(const KernelContext &, const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Trilu", in, out, attrs, false));
  const Shape &s = in[0].shape;
  cpu::TriluParams p;
  p.elemSize = dtypeSize(in[0].dtype);
  p.rows = s[s.size() - 2];
  p.cols = s[s.size() - 1];
  p.batch = cpu::product(s, 0, s.size() - 2);
  const int64_t lim = p.rows + p.cols + 1;
  p.k = std::max(-lim, std::min(lim, attrs.getInt("k", 0)));
  p.upper = attrs.getInt("upper", 1) == 1;
  kernel = makeLaunch("Trilu", [p](const void *const *i, void *const *o,
                                   cudaStream_t st) {
    return triluKernel(p, i[0], o[0], st);
  });
  return Status::ok();
}

} // namespace

void addMovementKernels(KernelTable &t) {
  t.push_back({"Transpose", "permute dims (attr perm, default reversed)",
               prepareTranspose});
  t.push_back({"Expand", "broadcast to the output shape", prepareExpand});
  t.push_back({"Tile", "repeat along each dim (attr repeats)", prepareTile});
  t.push_back({"Slice", "strided window (attrs starts, ends, axes, steps)",
               prepareSlice});
  t.push_back({"Pad", "constant padding (attrs pads, value; negative crops)",
               preparePad});
  t.push_back({"Concat", "join inputs along attr axis", prepareConcat});
  t.push_back({"CacheWrite",
               "write KV-cache entries at a position, in place",
               prepareCacheWrite});
  t.push_back(
      {"Split", "cut along attr axis into attr split sizes", prepareSplit});
  t.push_back(
      {"Gather", "take slices along attr axis by index tensor", prepareGather});
  t.push_back({"GatherElements", "take elements along attr axis by index",
               prepareGatherElements});
  t.push_back({"GatherND", "take slices addressed by index tuples",
               prepareGatherND});
  t.push_back({"ScatterND",
               "copy of data with slices written at index tuples (attr "
               "reduction)",
               prepareScatterND});
  t.push_back({"ScatterElements",
               "copy of data with updates written along attr axis at "
               "indices (attr reduction)",
               prepareScatterElements});
  t.push_back({"Trilu", "keep the upper or lower triangle (attrs upper, k)",
               prepareTrilu});
}

} // namespace tpc::cuda
