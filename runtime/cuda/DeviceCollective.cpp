//===- DeviceCollective.cpp - A plan's collective step on a GPU -----------===//
#include "runtime/cuda/DeviceCollective.h"

#include "kernels/cuda/Check.h"

namespace tpc::runtime {

void DeviceCollective::init(const PreparedCollective &host) {
  host_ = &host;
  scratchBytes_ = host.scratchBytes();
  stageAllReduce_ = false;
  const CollectiveGeometry &g = host.geometry();
  const size_t tensor = size_t(g.tensorBytes);
  if (g.worldSize == 1) {
    // The copy of a world of one; overlapping operands go through scratch
    // (device copies must not overlap).
    if (g.overlap)
      scratchBytes_ = std::max(scratchBytes_, tensor);
  } else if (g.kind == StepKind::AllReduce && g.overlap) {
    stageAllReduce_ = true;
    scratchBytes_ = std::max(scratchBytes_, tensor);
  }
}

namespace {

/// `height` rows of `width` bytes from src (row pitch spitch) to dst (pitch
/// dpitch).
Status copy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
              size_t width, size_t height, cudaStream_t stream) {
  if (!width || !height)
    return Status::ok();
  TPC_CUDA_CHECK(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height,
                                   cudaMemcpyDeviceToDevice, stream));
  return Status::ok();
}

} // namespace

Status DeviceCollective::before(const void *in, void *out, void *scratch,
                                cudaStream_t stream) const {
  const CollectiveGeometry &h = host_->geometry();
  const size_t es = h.elemSize;
  uint8_t *sc = static_cast<uint8_t *>(scratch);
  if (h.worldSize == 1) {
    const size_t bytes = size_t(h.tensorBytes);
    if (in == out || !bytes)
      return Status::ok();
    if (h.overlap) {
      TPC_CUDA_CHECK(cudaMemcpyAsync(sc, in, bytes, cudaMemcpyDeviceToDevice,
                                     stream));
      in = sc;
    }
    TPC_CUDA_CHECK(
        cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, stream));
    return Status::ok();
  }
  switch (h.kind) {
  case StepKind::AllReduce:
    if (stageAllReduce_ && in != out)
      TPC_CUDA_CHECK(cudaMemcpyAsync(sc, in, h.count * es,
                                     cudaMemcpyDeviceToDevice, stream));
    return Status::ok();
  case StepKind::AllGather: {
    if (!h.overlap)
      return Status::ok();
    const bool direct = h.outer == 1;
    const size_t fullBytes = h.outer * h.axisTotal * h.inner * es;
    const size_t myBytes =
        h.outer * size_t(h.sizes[size_t(h.rank)]) * h.inner * es;
    if (myBytes)
      TPC_CUDA_CHECK(cudaMemcpyAsync(sc + (direct ? 0 : fullBytes), in,
                                     myBytes, cudaMemcpyDeviceToDevice,
                                     stream));
    return Status::ok();
  }
  case StepKind::ReduceScatter: {
    if (h.equalShards && h.outer == 1 && !h.overlap)
      return Status::ok();
    if (h.outer == 1 && !h.overlap)
      return Status::ok(); // the input is already rank-ordered blocks
    // Lay the input out as rank-ordered blocks of outer x sizes[r] x inner.
    const uint8_t *src = static_cast<const uint8_t *>(in);
    const size_t rowPitch = h.axisTotal * h.inner * es;
    size_t blockStart = 0;
    for (int r = 0; r < h.worldSize; ++r) {
      const size_t rowBytes = size_t(h.sizes[size_t(r)]) * h.inner * es;
      TPC_RETURN_IF_ERROR(
          copy2D(sc + blockStart, rowBytes,
                 src + size_t(h.starts[size_t(r)]) * h.inner * es, rowPitch,
                 rowBytes, h.outer, stream));
      blockStart += h.outer * rowBytes;
    }
    return Status::ok();
  }
  case StepKind::Kernel:
    break;
  }
  return Status::error("not a collective");
}

Status DeviceCollective::communicate(Communicator *comm, const void *in,
                                     void *out, void *scratch) const {
  const CollectiveGeometry &h = host_->geometry();
  if (h.worldSize == 1)
    return Status::ok();
  if (!comm)
    return Status::error("no communicator for a world of " +
                         std::to_string(h.worldSize) + " ranks");
  const size_t es = h.elemSize;
  uint8_t *sc = static_cast<uint8_t *>(scratch);
  const size_t myElems =
      h.outer * size_t(h.sizes.empty() ? 0 : h.sizes[size_t(h.rank)]) * h.inner;
  switch (h.kind) {
  case StepKind::AllReduce:
    if (stageAllReduce_ && in != out)
      return comm->allReduce(sc, out, h.count, h.dtype);
    return comm->allReduce(in, out, h.count, h.dtype);
  case StepKind::AllGather: {
    const bool direct = h.outer == 1;
    const size_t fullBytes = h.outer * h.axisTotal * h.inner * es;
    void *gathered = direct ? out : sc;
    const void *send = h.overlap ? sc + (direct ? 0 : fullBytes) : in;
    if (h.equalShards)
      return comm->allGather(send, gathered, myElems, h.dtype);
    std::vector<size_t> counts;
    for (int64_t v : h.sizes)
      counts.push_back(h.outer * size_t(v) * h.inner);
    return comm->allGatherV(send, gathered, counts, h.dtype);
  }
  case StepKind::ReduceScatter: {
    const bool packed = !(h.outer == 1 && !h.overlap);
    const void *blocks = packed ? sc : in;
    if (h.equalShards)
      return comm->reduceScatter(blocks, out, myElems, h.dtype);
    const size_t total = h.outer * h.axisTotal * h.inner;
    return comm->allReduce(blocks, sc, total, h.dtype);
  }
  case StepKind::Kernel:
    break;
  }
  return Status::error("not a collective");
}

Status DeviceCollective::after(const void *, void *out, void *scratch,
                               cudaStream_t stream) const {
  const CollectiveGeometry &h = host_->geometry();
  if (h.worldSize == 1)
    return Status::ok();
  const size_t es = h.elemSize;
  const uint8_t *sc = static_cast<const uint8_t *>(scratch);
  switch (h.kind) {
  case StepKind::AllGather: {
    if (h.outer == 1)
      return Status::ok();
    // Rank r's block holds outer x sizes[r] x inner elements; interleave
    // the blocks along the axis.
    uint8_t *dst = static_cast<uint8_t *>(out);
    const size_t rowPitch = h.axisTotal * h.inner * es;
    size_t blockStart = 0;
    for (int r = 0; r < h.worldSize; ++r) {
      const size_t rowBytes = size_t(h.sizes[size_t(r)]) * h.inner * es;
      TPC_RETURN_IF_ERROR(
          copy2D(dst + size_t(h.starts[size_t(r)]) * h.inner * es, rowPitch,
                 sc + blockStart, rowBytes, rowBytes, h.outer, stream));
      blockStart += h.outer * rowBytes;
    }
    return Status::ok();
  }
  case StepKind::ReduceScatter: {
    if (h.equalShards)
      return Status::ok();
    const size_t myStart =
        h.outer * size_t(h.starts[size_t(h.rank)]) * h.inner * es;
    const size_t myBytes =
        h.outer * size_t(h.sizes[size_t(h.rank)]) * h.inner * es;
    if (myBytes)
      TPC_CUDA_CHECK(cudaMemcpyAsync(out, sc + myStart, myBytes,
                                     cudaMemcpyDeviceToDevice, stream));
    return Status::ok();
  }
  default:
    return Status::ok();
  }
}

} // namespace tpc::runtime
