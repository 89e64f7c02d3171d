//===- ElementwiseKernels.cpp - Adapters of the elementwise kernels -------===//
//
// Binary, variadic, Where and unary: each adapter builds its params with
// the backend-neutral builder (kernels/Binary.h, kernels/Unary.h) and
// launches.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/Adapters.h"
#include "kernels/cuda/Kernels.h"

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

} // namespace

void addElementwiseKernels(KernelTable &t) {
  addListed<kBinaryKernels>(
      t, [](auto i) { return prepareBinary<decltype(i)::value>; });

  addListed<kVariadicKernels>(t, [](auto i) {
    return prepareVariadic<kVariadicKernels[decltype(i)::value].op>;
  });
  t.push_back({"Where", "cond ? x : y with broadcasting", prepareWhere});

  addListed<kUnaryKernels>(
      t, [](auto i) { return prepareUnary<decltype(i)::value>; });
}

} // namespace tpc::cuda
