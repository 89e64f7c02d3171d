//===- NormKernels.cpp - Adapters of softmax, norms, reductions, CumSum ---===//
#include "kernels/cuda/Adapters.h"
#include "kernels/cuda/Kernels.h"

namespace tpc::cuda {
namespace {

template <bool Log>
Status prepareSoftmax(const KernelContext &, const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      std::unique_ptr<PreparedKernel> &kernel) {
  constexpr const char *name = Log ? "LogSoftmax" : "Softmax";
  TPC_RETURN_IF_ERROR(validateWithCpu(name, in, out, attrs, true));
  const Shape &s = in[0].shape;
  const Shape view = s.empty() ? Shape{1} : s;
  int64_t axis;
  TPC_RETURN_IF_ERROR(cpu::normalizeAxis(attrs.getInt("axis", -1),
                                         int64_t(view.size()), "axis", axis));
  cpu::SoftmaxParams p;
  p.dtype = in[0].dtype;
  p.log = Log;
  p.outer = cpu::product(view, 0, size_t(axis));
  p.axis = view[size_t(axis)];
  p.inner = cpu::product(view, size_t(axis) + 1, view.size());
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
  TPC_RETURN_IF_ERROR(validateWithCpu(name, in, out, attrs, true));
  const Shape &s = in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(cpu::normalizeAxis(attrs.getInt("axis", -1),
                                         int64_t(s.size()), "axis", axis));
  const bool hasBias = !Rms && in.size() == 3 && !cpu::isAbsent(in[2]);
  bool wantStats[2] = {false, false};
  for (size_t i = 1; i < out.size(); ++i)
    wantStats[i - 1] = !cpu::isAbsent(out[i]);
  cpu::NormParams p;
  p.dtype = in[0].dtype;
  p.rms = Rms;
  p.outer = cpu::product(s, 0, size_t(axis));
  p.norm = cpu::product(s, size_t(axis), s.size());
  p.epsilon = attrs.getFloat("epsilon", 1e-5);
  const bool wantMean = wantStats[0], wantInvStd = wantStats[1];
  kernel = makeLaunch(name, [p, hasBias, wantMean, wantInvStd](
                                const void *const *i, void *const *o,
                                cudaStream_t st) {
    return normKernel(p, i[0], i[1], hasBias ? i[2] : nullptr, o[0],
                      wantMean ? o[1] : nullptr, wantInvStd ? o[2] : nullptr,
                      st);
  });
  return Status::ok();
}

struct ReduceEntry {
  const char *name;
  const char *summary;
  cpu::ReduceOp op;
};

constexpr ReduceEntry kReduce[] = {
    {"ReduceSum", "sum over attr axes", cpu::ReduceOp::Sum},
    {"ReduceMean", "mean over attr axes", cpu::ReduceOp::Mean},
    {"ReduceMax", "max over attr axes (NaN propagates)", cpu::ReduceOp::Max},
    {"ReduceMin", "min over attr axes (NaN propagates)", cpu::ReduceOp::Min},
    {"ReduceProd", "product over attr axes", cpu::ReduceOp::Prod},
    {"ReduceL2", "sqrt of sum of squares over attr axes", cpu::ReduceOp::L2},
    {"ReduceSumSquare", "sum of squares over attr axes",
     cpu::ReduceOp::SumSquare},
};

template <int I>
Status prepareReduce(const KernelContext &, const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  constexpr ReduceEntry e = kReduce[I];
  TPC_RETURN_IF_ERROR(validateWithCpu(e.name, in, out, attrs, true));
  TPC_RETURN_IF_ERROR(checkCudaArith(in[0].dtype, "input 0"));
  const Shape &s = in[0].shape;
  const int64_t rank = int64_t(s.size());
  std::vector<bool> reduced(size_t(rank), false);
  for (int64_t a : cpu::intsAttr(attrs, "axes")) {
    int64_t axis;
    TPC_RETURN_IF_ERROR(cpu::normalizeAxis(a, rank, "axis", axis));
    reduced[size_t(axis)] = true;
  }
  if (cpu::intsAttr(attrs, "axes").empty() &&
      attrs.getInt("noop_with_empty_axes", 0) == 0)
    reduced.assign(size_t(rank), true);
  std::vector<int64_t> outStrides(size_t(rank), 0);
  int64_t count = 1, stride = 1, outNumel = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (reduced[size_t(d)]) {
      count *= s[size_t(d)];
    } else {
      outStrides[size_t(d)] = stride;
      stride *= s[size_t(d)];
      outNumel *= s[size_t(d)];
    }
  }
  cpu::ReduceParams p;
  p.op = e.op;
  p.dtype = in[0].dtype;
  p.outNumel = outNumel;
  p.count = count;
  TPC_RETURN_IF_ERROR(
      cpu::makeLayout<2>(s, {outStrides, cpu::denseStrides(s)}, p.layout));
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
  TPC_RETURN_IF_ERROR(validateWithCpu(name, in, out, attrs, true));
  TPC_RETURN_IF_ERROR(checkCudaArith(in[0].dtype, "input 0"));
  const Shape &s = in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(cpu::normalizeAxis(attrs.getInt("axis", 0),
                                         int64_t(s.size()), "axis", axis));
  cpu::ArgReduceParams p;
  p.dtype = in[0].dtype;
  p.isMax = IsMax;
  p.selectLast = attrs.getInt("select_last_index", 0) == 1;
  p.outer = cpu::product(s, 0, size_t(axis));
  p.axisDim = s[size_t(axis)];
  p.inner = cpu::product(s, size_t(axis) + 1, s.size());
  kernel = makeLaunch(name, [p](const void *const *i, void *const *o,
                                cudaStream_t st) {
    return argReduceKernel(p, i[0], static_cast<int64_t *>(o[0]), st);
  });
  return Status::ok();
}

Status prepareTopK(const KernelContext &, const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  cpu::TopKParams p;
  TPC_RETURN_IF_ERROR(cpu::makeTopKParams(in, out, attrs, p));
  kernel = makeLaunch(
      "TopK", [p](const void *const *i, void *const *o, cudaStream_t st) {
        return topKKernel(p, i[0], o[0], static_cast<int64_t *>(o[1]), st);
      });
  return Status::ok();
}

Status prepareCumSum(const KernelContext &, const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(validateWithCpu("CumSum", in, out, attrs, false));
  TPC_RETURN_IF_ERROR(checkCudaArith(in[0].dtype, "input 0"));
  cpu::CumSumParams p;
  TPC_RETURN_IF_ERROR(cpu::makeCumSumParams(in[0], attrs, p));
  kernel = makeLaunch(
      "CumSum", [p](const void *const *i, void *const *o, cudaStream_t st) {
        return cumSumKernel(p, i[0], o[0], st);
      });
  return Status::ok();
}

} // namespace

void addNormKernels(KernelTable &t) {
  t.push_back({"Softmax", "softmax along attr axis (default -1)",
               prepareSoftmax<false>});
  t.push_back({"LogSoftmax", "log of softmax along attr axis (default -1)",
               prepareSoftmax<true>});
  t.push_back({"LayerNormalization",
               "normalize dims [axis, rank) then scale and shift",
               prepareNorm<false>});
  t.push_back({"RMSNormalization", "x / rms(x) * scale over dims [axis, rank)",
               prepareNorm<true>});
  t.push_back({kReduce[0].name, kReduce[0].summary, prepareReduce<0>});
  t.push_back({kReduce[1].name, kReduce[1].summary, prepareReduce<1>});
  t.push_back({kReduce[2].name, kReduce[2].summary, prepareReduce<2>});
  t.push_back({kReduce[3].name, kReduce[3].summary, prepareReduce<3>});
  t.push_back({kReduce[4].name, kReduce[4].summary, prepareReduce<4>});
  t.push_back({kReduce[5].name, kReduce[5].summary, prepareReduce<5>});
  t.push_back({kReduce[6].name, kReduce[6].summary, prepareReduce<6>});
  static_assert(sizeof(kReduce) / sizeof(kReduce[0]) == 7);
  t.push_back({"ArgMax", "index of the max along attr axis -> i64",
               prepareArgReduce<true>});
  t.push_back({"ArgMin", "index of the min along attr axis -> i64",
               prepareArgReduce<false>});
  t.push_back({"TopK",
               "k largest (attr largest = 0: smallest) along attr axis, "
               "sorted; values and i64 indices",
               prepareTopK});
  t.push_back({"CumSum",
               "running sums along attr axis (attrs exclusive, reverse)",
               prepareCumSum});
}

} // namespace tpc::cuda
