//===- MovementKernels.cpp - Adapters of the data-movement kernels --------===//
//
// Each adapter builds its params with the backend-neutral builder
// (kernels/Movement.h), the one the CPU adapters call, and launches. Kernels
// that read indices are followed by the scan that records an index outside
// [-dim, dim) for the runtime to report (IndexCheck.h).
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/Adapters.h"
#include "kernels/cuda/Kernels.h"

#include "kernels/cpu/Cast.h"

namespace tpc::cuda {
namespace {

using Operands = std::vector<TensorDesc>;

/// The adapter of movement op Op. The primary template is that of the ops
/// that are one strided copy (Transpose, Expand, Tile, Slice); the others
/// are specialized below.
template <MovementOp Op>
Status prepareMovement(const KernelContext &, const Operands &in,
                       const Operands &out, const Attrs &attrs,
                       std::unique_ptr<PreparedKernel> &kernel) {
  StridedCopyParams p;
  TPC_RETURN_IF_ERROR(stridedCopyBuilder(Op)(in, out, attrs, p));
  kernel = makeLaunch(movementName(Op), [p](const void *const *i,
                                            void *const *o, cudaStream_t s) {
    return stridedCopy(p, i[0], o[0], s);
  });
  return Status::ok();
}

template <>
Status
prepareMovement<MovementOp::Pad>(const KernelContext &, const Operands &in,
                                 const Operands &out, const Attrs &attrs,
                                 std::unique_ptr<PreparedKernel> &kernel) {
  PadParams p;
  TPC_RETURN_IF_ERROR(makePadParams(in, out, attrs, p));
  const uint64_t fill = cpu::scalarPattern(p.value, in[0].dtype);
  const size_t es = dtypeSize(in[0].dtype);
  kernel = makeLaunch("Pad", [p, fill, es](const void *const *i, void *const *o,
                                           cudaStream_t st) {
    if (cudaError_t err = fillKernel(es, p.numel, &fill, o[0], st);
        err != cudaSuccess)
      return err;
    return stridedCopy(p.copy, i[0], o[0], st);
  });
  return Status::ok();
}

template <>
Status
prepareMovement<MovementOp::Concat>(const KernelContext &, const Operands &in,
                                    const Operands &out, const Attrs &attrs,
                                    std::unique_ptr<PreparedKernel> &kernel) {
  ConcatParams p;
  TPC_RETURN_IF_ERROR(makeConcatParams(in, out, attrs, p));
  kernel = makeLaunch(
      "Concat", [p](const void *const *i, void *const *o, cudaStream_t st) {
        return concatKernel(p, i, o[0], st);
      });
  return Status::ok();
}

template <>
Status
prepareMovement<MovementOp::Split>(const KernelContext &, const Operands &in,
                                   const Operands &out, const Attrs &attrs,
                                   std::unique_ptr<PreparedKernel> &kernel) {
  ConcatParams p;
  TPC_RETURN_IF_ERROR(makeSplitParams(in, out, attrs, p));
  kernel = makeLaunch(
      "Split", [p](const void *const *i, void *const *o, cudaStream_t st) {
        return splitKernel(p, i[0], o, st);
      });
  return Status::ok();
}

/// The tuple depth the CUDA GatherND and ScatterND kernels hold.
Status checkDepth(const char *name, int64_t depth) {
  if (depth <= kMaxGatherNDDepth)
    return Status::ok();
  return Status::error(std::string(name) + " tuples of depth " +
                       std::to_string(depth) + " exceed the CUDA kernel's " +
                       std::to_string(kMaxGatherNDDepth));
}

template <>
Status prepareMovement<MovementOp::Gather>(
    const KernelContext &ctx, const Operands &in, const Operands &out,
    const Attrs &attrs, std::unique_ptr<PreparedKernel> &kernel) {
  GatherParams p;
  TPC_RETURN_IF_ERROR(makeGatherParams(in, out, attrs, p));
  kernel = indexChecked(
      ctx,
      makeLaunch("Gather",
                 [p](const void *const *i, void *const *o, cudaStream_t st) {
                   return gatherKernel(p, i[0], i[1], o[0], st);
                 }),
      1, in[1], {p.axisDim});
  return Status::ok();
}

template <>
Status prepareMovement<MovementOp::GatherElements>(
    const KernelContext &ctx, const Operands &in, const Operands &out,
    const Attrs &attrs, std::unique_ptr<PreparedKernel> &kernel) {
  GatherElementsParams p;
  TPC_RETURN_IF_ERROR(makeGatherElementsParams(in, out, attrs, p));
  kernel = indexChecked(
      ctx,
      makeLaunch("GatherElements",
                 [p](const void *const *i, void *const *o, cudaStream_t st) {
                   return gatherElementsKernel(p, i[0], i[1], o[0], st);
                 }),
      1, in[1], {p.axisDim});
  return Status::ok();
}

template <>
Status prepareMovement<MovementOp::GatherND>(
    const KernelContext &ctx, const Operands &in, const Operands &out,
    const Attrs &attrs, std::unique_ptr<PreparedKernel> &kernel) {
  GatherNDParams p;
  TPC_RETURN_IF_ERROR(makeGatherNDParams(in, out, attrs, p));
  TPC_RETURN_IF_ERROR(checkDepth("GatherND", p.depth));
  kernel = indexChecked(
      ctx,
      makeLaunch("GatherND",
                 [p](const void *const *i, void *const *o, cudaStream_t st) {
                   return gatherNDKernel(p, i[0], i[1], o[0], st);
                 }),
      1, in[1], p.dims);
  return Status::ok();
}

template <>
Status prepareMovement<MovementOp::ScatterND>(
    const KernelContext &ctx, const Operands &in, const Operands &out,
    const Attrs &attrs, std::unique_ptr<PreparedKernel> &kernel) {
  ScatterNDParams p;
  TPC_RETURN_IF_ERROR(makeScatterNDParams(in, out, attrs, p));
  TPC_RETURN_IF_ERROR(checkDepth("ScatterND", p.depth));
  kernel = indexChecked(
      ctx,
      makeLaunch("ScatterND",
                 [p](const void *const *i, void *const *o, cudaStream_t st) {
                   return scatterNDKernel(p, i[0], i[1], i[2], o[0], st);
                 }),
      1, in[1], p.dims);
  return Status::ok();
}

template <>
Status prepareMovement<MovementOp::ScatterElements>(
    const KernelContext &ctx, const Operands &in, const Operands &out,
    const Attrs &attrs, std::unique_ptr<PreparedKernel> &kernel) {
  ScatterElementsParams p;
  TPC_RETURN_IF_ERROR(makeScatterElementsParams(in, out, attrs, p));
  kernel = indexChecked(
      ctx,
      makeLaunch("ScatterElements",
                 [p](const void *const *i, void *const *o, cudaStream_t st) {
                   return scatterElementsKernel(p, i[0], i[1], i[2], o[0], st);
                 }),
      1, in[1], {p.axisDim});
  return Status::ok();
}

template <>
Status
prepareMovement<MovementOp::Trilu>(const KernelContext &, const Operands &in,
                                   const Operands &out, const Attrs &attrs,
                                   std::unique_ptr<PreparedKernel> &kernel) {
  TriluParams p;
  TPC_RETURN_IF_ERROR(makeTriluParams(in, out, attrs, p));
  kernel = makeLaunch(
      "Trilu", [p](const void *const *i, void *const *o, cudaStream_t st) {
        return triluKernel(p, i[0], o[0], st);
      });
  return Status::ok();
}

/// The KV cache write: the position is checked like a Gather index
/// against the positions that leave room for the new entries.
template <>
Status prepareMovement<MovementOp::CacheWrite>(
    const KernelContext &ctx, const Operands &in, const Operands &out,
    const Attrs &attrs, std::unique_ptr<PreparedKernel> &kernel) {
  CacheWriteParams p;
  TPC_RETURN_IF_ERROR(makeCacheWriteParams(in, out, attrs, p));
  kernel = indexChecked(
      ctx,
      makeLaunch("CacheWrite",
                 [p](const void *const *i, void *const *o, cudaStream_t st) {
                   // In place the state is already there; otherwise copy
                   // it first.
                   if (i[0] != o[0]) {
                     cudaError_t err = cudaMemcpyAsync(
                         o[0], i[0], size_t(p.outer * p.length * p.rowBytes),
                         cudaMemcpyDeviceToDevice, st);
                     if (err != cudaSuccess)
                       return err;
                   }
                   return cacheWriteKernel(
                       p, i[1], static_cast<const int64_t *>(i[2]), o[0], st);
                 }),
      2, in[2], {p.length - p.n + 1});
  return Status::ok();
}

} // namespace

TPC_DEFINE_LISTED_KERNELS(addMovementKernels, KernelTable, kMovementKernels,
                          prepareMovement)

} // namespace tpc::cuda
