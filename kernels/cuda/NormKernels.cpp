//===- NormKernels.cpp - Adapters of softmax, norms, reductions, CumSum ---===//
#include "kernels/cuda/Adapters.h"
#include "kernels/cuda/Kernels.h"

#include <iterator>
#include <utility>

namespace tpc::cuda {
namespace {

template <bool Log>
Status prepareSoftmax(const KernelContext &, const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      std::unique_ptr<PreparedKernel> &kernel) {
  constexpr const char *name = Log ? "LogSoftmax" : "Softmax";
  SoftmaxParams p;
  TPC_RETURN_IF_ERROR(makeSoftmaxParams(Log, in, out, attrs, p));
  kernel = makeLaunch(name, [p](const void *const *i, void *const *o,
                                cudaStream_t st) {
    return softmaxKernel(p, i[0], o[0], st);
  });
  return Status::ok();
}

template <bool Rms>
Status prepareNorm(const KernelContext &, const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  constexpr const char *name = Rms ? "RMSNormalization" : "LayerNormalization";
  NormParams p;
  TPC_RETURN_IF_ERROR(makeNormParams(Rms, in, out, attrs, p));
  kernel = makeLaunch(name, [p](const void *const *i, void *const *o,
                                cudaStream_t st) {
    return normKernel(p, i[0], i[1], p.hasBias ? i[2] : nullptr, o[0],
                      p.wantMean ? o[1] : nullptr,
                      p.wantInvStdDev ? o[2] : nullptr, st);
  });
  return Status::ok();
}

template <int I>
Status prepareReduce(const KernelContext &, const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  constexpr ReduceKernelInfo e = kReduceKernels[I];
  ReduceParams p;
  TPC_RETURN_IF_ERROR(makeReduceParams(e.op, in, out, attrs, p));
  TPC_RETURN_IF_ERROR(checkCudaArith(in[0].dtype, "input 0"));
  kernel = makeLaunch(e.name, [p](const void *const *i, void *const *o,
                                  cudaStream_t st) {
    return reduceKernel(p, i[0], o[0], st);
  });
  return Status::ok();
}

template <bool IsMax>
Status prepareArgReduce(const KernelContext &,
                        const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out,
                        const Attrs &attrs,
                        std::unique_ptr<PreparedKernel> &kernel) {
  constexpr const char *name = IsMax ? "ArgMax" : "ArgMin";
  ArgReduceParams p;
  TPC_RETURN_IF_ERROR(makeArgReduceParams(IsMax, in, out, attrs, p));
  TPC_RETURN_IF_ERROR(checkCudaArith(in[0].dtype, "input 0"));
  kernel = makeLaunch(name, [p](const void *const *i, void *const *o,
                                cudaStream_t st) {
    return argReduceKernel(p, i[0], static_cast<int64_t *>(o[0]), st);
  });
  return Status::ok();
}

Status prepareTopK(const KernelContext &, const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  TopKParams p;
  TPC_RETURN_IF_ERROR(makeTopKParams(in, out, attrs, p));
  kernel = makeLaunch(
      "TopK", [p](const void *const *i, void *const *o, cudaStream_t st) {
        return topKKernel(p, i[0], o[0], static_cast<int64_t *>(o[1]), st);
      });
  return Status::ok();
}

Status prepareCumSum(const KernelContext &, const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  CumSumParams p;
  TPC_RETURN_IF_ERROR(makeCumSumParams(in, out, attrs, p));
  TPC_RETURN_IF_ERROR(checkCudaArith(in[0].dtype, "input 0"));
  kernel = makeLaunch(
      "CumSum", [p](const void *const *i, void *const *o, cudaStream_t st) {
        return cumSumKernel(p, i[0], o[0], st);
      });
  return Status::ok();
}

} // namespace

void addNormKernels(KernelTable &t) {
  addFamily(t, kNormKernels,
            {{NormOp::Softmax, prepareSoftmax<false>},
             {NormOp::LogSoftmax, prepareSoftmax<true>},
             {NormOp::LayerNormalization, prepareNorm<false>},
             {NormOp::RMSNormalization, prepareNorm<true>}});
  addListed<kReduceKernels>(
      t, [](auto i) { return prepareReduce<decltype(i)::value>; });
  addFamily(t, kAxisKernels,
            {{AxisOp::ArgMax, prepareArgReduce<true>},
             {AxisOp::ArgMin, prepareArgReduce<false>},
             {AxisOp::TopK, prepareTopK},
             {AxisOp::CumSum, prepareCumSum}});
}

} // namespace tpc::cuda
