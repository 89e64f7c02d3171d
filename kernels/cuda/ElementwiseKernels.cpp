//===- ElementwiseKernels.cpp - Adapters of the elementwise kernels -------===//
//
// Binary, variadic, Where, unary, Cast, the reshape-like copies and the
// generators (Shape, Size, Range, ConstantOfShape). Validation is the CPU
// kernel's; the params are bound the way the CPU adapters bind them.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/Adapters.h"
#include "kernels/cuda/Kernels.h"

#include "kernels/cpu/Cast.h"

#include <cstring>
#include <iterator>
#include <utility>

namespace tpc::cuda {
namespace {

template <int I>
Status prepareBinary(const KernelContext &, const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  constexpr BinaryKernelInfo e = kBinaryKernels[I];
  BinaryParams p;
  TPC_RETURN_IF_ERROR(makeBinaryOpParams(e.op, in, out, attrs, p));
  TPC_RETURN_IF_ERROR(checkCudaArith(in[0].dtype, "input 0"));
  kernel = makeLaunch(e.name, [p](const void *const *i, void *const *o,
                                  cudaStream_t s) {
    return binaryKernel(p, i[0], i[1], o[0], s);
  });
  return Status::ok();
}

template <VariadicOp V>
Status prepareVariadic(const KernelContext &,
                       const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &,
                       std::unique_ptr<PreparedKernel> &kernel) {
  constexpr const char *name = V == VariadicOp::Max   ? "Max"
                               : V == VariadicOp::Min ? "Min"
                               : V == VariadicOp::Sum ? "Sum"
                                                      : "Mean";
  VariadicParams p;
  TPC_RETURN_IF_ERROR(makeVariadicParams(V, in, out, p));
  TPC_RETURN_IF_ERROR(checkCudaArith(in[0].dtype, "input 0"));
  kernel = makeLaunch(name, [p](const void *const *i, void *const *o,
                                cudaStream_t s) -> cudaError_t {
    if (p.steps.empty())
      return p.bytes && i[0] != o[0]
                 ? cudaMemcpyAsync(o[0], i[0], p.bytes,
                                   cudaMemcpyDeviceToDevice, s)
                 : cudaSuccess;
    for (size_t k = 0; k < p.steps.size(); ++k)
      if (cudaError_t err = binaryKernel(p.steps[k], k == 0 ? i[0] : o[0],
                                         i[k + 1], o[0], s);
          err != cudaSuccess)
        return err;
    if (V == VariadicOp::Mean)
      return scaleKernel(p.dtype, p.numel, p.scale, o[0], s);
    return cudaSuccess;
  });
  return Status::ok();
}

Status prepareWhere(const KernelContext &, const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &,
                    std::unique_ptr<PreparedKernel> &kernel) {
  WhereParams p;
  TPC_RETURN_IF_ERROR(makeWhereParams(in, out, p));
  kernel = makeLaunch("Where", [p](const void *const *i, void *const *o,
                                   cudaStream_t s) {
    return whereKernel(p, static_cast<const uint8_t *>(i[0]), i[1], i[2], o[0],
                       s);
  });
  return Status::ok();
}

template <size_t... I>
void addBinary(KernelTable &t, std::index_sequence<I...>) {
  (t.push_back({kBinaryKernels[I].name, kBinaryKernels[I].summary, prepareBinary<int(I)>}),
   ...);
}

template <int I>
Status prepareUnary(const KernelContext &, const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  constexpr const UnaryKernelInfo &e = kUnaryKernels[I];
  UnaryParams p;
  TPC_RETURN_IF_ERROR(makeUnaryParams(e, in, out, attrs, p));
  TPC_RETURN_IF_ERROR(checkCudaArith(in[0].dtype, "input 0"));
  kernel = makeLaunch(e.name, [p](const void *const *i, void *const *o,
                                  cudaStream_t s) {
    return unaryKernel(p, i[0], o[0], s);
  });
  return Status::ok();
}

template <size_t... I>
void addUnary(KernelTable &t, std::index_sequence<I...>) {
  (t.push_back({kUnaryKernels[I].name, kUnaryKernels[I].summary,
                prepareUnary<int(I)>}),
   ...);
}

Status prepareCast(const KernelContext &, const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Cast", in, out, attrs, false));
  cpu::CastParams p{in[0].dtype, out[0].dtype, in[0].numel(),
                    attrs.getInt("saturate", 1) == 1};
  kernel = makeLaunch("Cast", [p](const void *const *i, void *const *o,
                                  cudaStream_t s) {
    return castKernel(p, i[0], o[0], s);
  });
  return Status::ok();
}

/// Reshape-like kernels: a device copy, skipped when run in place.
template <int I>
Status prepareCopy(const KernelContext &, const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  static constexpr const char *names[] = {"Reshape", "Copy", "BitCast"};
  TPC_RETURN_IF_ERROR(validateWithCpu(names[I], in, out, attrs, true));
  const size_t bytes = out[0].bytes();
  kernel = makeLaunch(names[I], [bytes](const void *const *i, void *const *o,
                                        cudaStream_t s) {
    if (!bytes || i[0] == o[0])
      return cudaSuccess;
    return cudaMemcpyAsync(o[0], i[0], bytes, cudaMemcpyDeviceToDevice, s);
  });
  return Status::ok();
}

/// A kernel that writes bytes fixed at prepare time from a device copy
/// made then (Shape, Size).
class ConstantKernel final : public PreparedKernel {
public:
  ~ConstantKernel() override {
    if (data_)
      (void)cudaFree(data_);
  }
  Status init(const std::vector<uint8_t> &bytes) {
    size_ = bytes.size();
    if (!size_)
      return Status::ok();
    TPC_CUDA_CHECK(cudaMalloc(&data_, size_));
    TPC_CUDA_CHECK(
        cudaMemcpy(data_, bytes.data(), size_, cudaMemcpyHostToDevice));
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
  std::vector<uint8_t> bytes(values.size() * sizeof(int64_t));
  if (!values.empty())
    std::memcpy(bytes.data(), values.data(), bytes.size());
  auto k = std::make_unique<ConstantKernel>();
  TPC_RETURN_IF_ERROR(k->init(bytes));
  kernel = std::move(k);
  return Status::ok();
}

Status prepareShape(const KernelContext &, const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Shape", in, out, attrs, false));
  const Shape &s = in[0].shape;
  const int64_t rank = int64_t(s.size());
  auto clampDim = [rank](int64_t v) {
    if (v < 0)
      v += rank;
    return std::max<int64_t>(0, std::min(v, rank));
  };
  const int64_t start = clampDim(attrs.getInt("start", 0));
  const int64_t end = clampDim(attrs.getInt("end", rank));
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d)
    dims.push_back(s[size_t(d)]);
  return makeConstant(dims, kernel);
}

Status prepareSize(const KernelContext &, const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Size", in, out, attrs, false));
  return makeConstant({in[0].numel()}, kernel);
}

Status prepareRange(const KernelContext &, const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("Range", in, out, attrs, false));
  const DType dtype = in[0].dtype;
  const int64_t numel = out[0].numel();
  kernel = makeLaunch("Range", [dtype, numel](const void *const *i,
                                              void *const *o, cudaStream_t s) {
    return rangeKernel(dtype, numel, i[0], i[2], o[0], s);
  });
  return Status::ok();
}

Status prepareConstantOfShape(const KernelContext &,
                              const std::vector<TensorDesc> &in,
                              const std::vector<TensorDesc> &out,
                              const Attrs &attrs,
                              std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(
      validateWithCpu("ConstantOfShape", in, out, attrs, false));
  double value = 0;
  const std::vector<double> *fv = attrs.getFloats("value");
  const std::vector<int64_t> *iv = attrs.getInts("value");
  if (fv)
    value = (*fv)[0];
  else if (iv)
    value = double((*iv)[0]);
  uint64_t pattern = 0;
  cpu::castKernel(cpu::CastParams{DType::F64, out[0].dtype, 1}, &value,
                  &pattern);
  if (iv && out[0].dtype == DType::I64)
    std::memcpy(&pattern, iv->data(), sizeof(int64_t));
  const size_t es = dtypeSize(out[0].dtype);
  const int64_t numel = out[0].numel();
  kernel = makeLaunch("ConstantOfShape",
                      [pattern, es, numel](const void *const *, void *const *o,
                                           cudaStream_t s) {
                        return fillKernel(es, numel, &pattern, o[0], s);
                      });
  return Status::ok();
}

} // namespace

void addElementwiseKernels(KernelTable &t) {
  addBinary(t, std::make_index_sequence<std::size(kBinaryKernels)>());

  t.push_back({"Max", "elementwise max of N inputs (NaN propagates)",
               prepareVariadic<VariadicOp::Max>});
  t.push_back({"Min", "elementwise min of N inputs (NaN propagates)",
               prepareVariadic<VariadicOp::Min>});
  t.push_back({"Sum", "elementwise sum of N inputs",
               prepareVariadic<VariadicOp::Sum>});
  t.push_back({"Mean", "elementwise mean of N inputs",
               prepareVariadic<VariadicOp::Mean>});
  t.push_back({"Where", "cond ? x : y with broadcasting", prepareWhere});

  addUnary(t, std::make_index_sequence<std::size(kUnaryKernels)>());

  t.push_back({"Cast", "element type conversion (attr to)", prepareCast});
  t.push_back({"Reshape", "copy under a new shape (may run in place)",
               prepareCopy<0>});
  t.push_back({"Copy", "copy into a buffer of the same size (may run in place)",
               prepareCopy<1>});
  t.push_back({"BitCast", "the same bytes as a dtype of the same width (attr to)",
               prepareCopy<2>});
  t.push_back({"Shape", "dims of the input as i64 (attrs start, end)",
               prepareShape});
  t.push_back({"Size", "element count of the input as an i64 scalar",
               prepareSize});
  t.push_back({"Range", "start + i * delta for the output's length",
               prepareRange});
  t.push_back({"ConstantOfShape", "output filled with attr value",
               prepareConstantOfShape});
}

} // namespace tpc::cuda
