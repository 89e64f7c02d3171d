//===- CopyKernels.cpp - Cast, the copies and the generators --------------===//
//
// Each adapter builds its params with the backend-neutral builder
// (kernels/Copy.h), the one the CPU adapters call, and launches. The
// reshape-like copies are one device copy, skipped when run in place; Shape
// and Size copy values computed at prepare time.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/Adapters.h"
#include "kernels/cuda/Kernels.h"

#include "kernels/cpu/Cast.h"

namespace tpc::cuda {
namespace {

using Operands = std::vector<TensorDesc>;

/// The adapter of op Op of the family. The primary template is that of
/// the reshape-like copies (Reshape, Copy, BitCast); the others are
/// specialized below.
template <CopyOp Op>
Status prepareCopyOp(const KernelContext &, const Operands &in,
                     const Operands &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  size_t bytes;
  TPC_RETURN_IF_ERROR(makeCopyParams(Op, in, out, attrs, bytes));
  kernel = makeLaunch(
      "copy", [bytes](const void *const *i, void *const *o, cudaStream_t s) {
        if (!bytes || i[0] == o[0])
          return cudaSuccess;
        return cudaMemcpyAsync(o[0], i[0], bytes, cudaMemcpyDeviceToDevice, s);
      });
  return Status::ok();
}

template <>
Status prepareCopyOp<CopyOp::Cast>(const KernelContext &, const Operands &in,
                                   const Operands &out, const Attrs &attrs,
                                   std::unique_ptr<PreparedKernel> &kernel) {
  CastParams p;
  TPC_RETURN_IF_ERROR(makeCastParams(in, out, attrs, p));
  kernel = makeLaunch(
      "Cast", [p](const void *const *i, void *const *o, cudaStream_t s) {
        return castKernel(p, i[0], o[0], s);
      });
  return Status::ok();
}

/// A kernel that writes int64 values fixed at prepare time from a device copy
/// made then (Shape, Size).
class ConstantKernel final : public PreparedKernel {
public:
  ~ConstantKernel() override {
    if (data_)
      (void)cudaFree(data_);
  }
  Status init(const std::vector<int64_t> &values) {
    size_ = values.size() * sizeof(int64_t);
    if (!size_)
      return Status::ok();
    TPC_CUDA_CHECK(cudaMalloc(&data_, size_));
    TPC_CUDA_CHECK(
        cudaMemcpy(data_, values.data(), size_, cudaMemcpyHostToDevice));
    // A pageable copy may return before the DMA lands, on the legacy stream
    // that the runtime's non-blocking streams do not wait for.
    TPC_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    return Status::ok();
  }
  Status run(const void *const *, void *const *outputs,
             cudaStream_t stream) override {
    if (size_)
      TPC_CUDA_CHECK(cudaMemcpyAsync(outputs[0], data_, size_,
                                     cudaMemcpyDeviceToDevice, stream));
    return Status::ok();
  }

private:
  void *data_ = nullptr;
  size_t size_ = 0;
};

Status makeConstant(const std::vector<int64_t> &values,
                    std::unique_ptr<PreparedKernel> &kernel) {
  auto k = std::make_unique<ConstantKernel>();
  TPC_RETURN_IF_ERROR(k->init(values));
  kernel = std::move(k);
  return Status::ok();
}

template <>
Status prepareCopyOp<CopyOp::Shape>(const KernelContext &, const Operands &in,
                                    const Operands &out, const Attrs &attrs,
                                    std::unique_ptr<PreparedKernel> &kernel) {
  std::vector<int64_t> values;
  TPC_RETURN_IF_ERROR(makeShapeParams(in, out, attrs, values));
  return makeConstant(values, kernel);
}

template <>
Status prepareCopyOp<CopyOp::Size>(const KernelContext &, const Operands &in,
                                   const Operands &out, const Attrs &,
                                   std::unique_ptr<PreparedKernel> &kernel) {
  std::vector<int64_t> values;
  TPC_RETURN_IF_ERROR(makeSizeParams(in, out, values));
  return makeConstant(values, kernel);
}

template <>
Status prepareCopyOp<CopyOp::Range>(const KernelContext &, const Operands &in,
                                    const Operands &out, const Attrs &,
                                    std::unique_ptr<PreparedKernel> &kernel) {
  RangeParams p;
  TPC_RETURN_IF_ERROR(makeRangeParams(in, out, p));
  kernel = makeLaunch(
      "Range", [p](const void *const *i, void *const *o, cudaStream_t s) {
        return rangeKernel(p.dtype, p.numel, i[0], i[2], o[0], s);
      });
  return Status::ok();
}

template <>
Status prepareCopyOp<CopyOp::ConstantOfShape>(
    const KernelContext &, const Operands &in, const Operands &out,
    const Attrs &attrs, std::unique_ptr<PreparedKernel> &kernel) {
  FillParams p;
  TPC_RETURN_IF_ERROR(makeConstantOfShapeParams(in, out, attrs, p));
  const uint64_t pattern = cpu::fillPattern(p);
  const size_t es = dtypeSize(p.dtype);
  kernel = makeLaunch(
      "ConstantOfShape",
      [p, pattern, es](const void *const *, void *const *o, cudaStream_t s) {
        return fillKernel(es, p.numel, &pattern, o[0], s);
      });
  return Status::ok();
}

} // namespace

TPC_DEFINE_LISTED_KERNELS(addCopyKernels, KernelTable, kCopyKernels,
                          prepareCopyOp)

} // namespace tpc::cuda
