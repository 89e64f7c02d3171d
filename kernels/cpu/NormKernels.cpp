//===- NormKernels.cpp - Softmax, LayerNormalization, RMSNormalization ---===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Norm.h"
#include "kernels/cpu/Parallel.h"

namespace tpc::cpu {
namespace {

Shape stripLeadingOnes(const Shape &s) {
  size_t i = 0;
  while (i < s.size() && s[i] == 1)
    ++i;
  return Shape(s.begin() + i, s.end());
}

template <bool Log>
Status prepareSoftmax(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(
      in[0], "input 0", {DType::F32, DType::F64, DType::F16, DType::BF16}));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));
  const Shape &s = in[0].shape;
  // A scalar is a softmax over one element.
  const Shape view = s.empty() ? Shape{1} : s;
  int64_t axis;
  TPC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis", -1),
                                    static_cast<int64_t>(view.size()), "axis",
                                    axis));
  SoftmaxParams p;
  p.dtype = in[0].dtype;
  p.log = Log;
  p.outer = product(view, 0, axis);
  p.axis = view[axis];
  p.inner = product(view, axis + 1, view.size());
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &ctx) {
    const int64_t block = p.axis * p.inner * int64_t(dtypeSize(p.dtype));
    parallelFor(ctx.numThreads, p.outer, 2 * block, [&](int64_t r0, int64_t r1) {
      SoftmaxParams q = p;
      q.outer = r1 - r0;
      softmaxKernel(q, byteOffset(i[0], r0 * block), byteOffset(o[0], r0 * block));
    });
  });
  return Status::ok();
}

/// LayerNormalization (X, Scale, optional B -> Y, optional Mean and
/// InvStdDev) and RMSNormalization (X, Scale -> Y).
template <bool Rms>
Status prepareNorm(const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 2, Rms ? 2 : 3, 1, Rms ? 1 : 3));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(
      checkDType(in[0], "input 0 (X)",
                 {DType::F32, DType::F64, DType::F16, DType::BF16}));
  const Shape &s = in[0].shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  if (rank == 0)
    return Status::error("input 0 (X) must have rank >= 1");
  int64_t axis;
  TPC_RETURN_IF_ERROR(
      normalizeAxis(attrs.getInt("axis", -1), rank, "axis", axis));
  double epsilon = attrs.getFloat("epsilon", 1e-5);
  if (!(epsilon >= 0))
    return Status::error("attribute epsilon must be >= 0, got " +
                         std::to_string(epsilon));
  const Shape normShape(s.begin() + axis, s.end());
  const int64_t norm = numElements(normShape);
  const bool hasBias = !Rms && in.size() == 3 && !isAbsent(in[2]);
  static const char *names[] = {"X", "Scale", "B"};
  for (size_t i = 1; i < (hasBias ? 3u : 2u); ++i) {
    std::string what = "input " + std::to_string(i) + " (" + names[i] + ")";
    TPC_RETURN_IF_ERROR(checkSameDType(in[i], what, in[0], "input 0 (X)"));
    // Scale and B hold one value per normalized element; leading unit dims
    // are accepted, but not a broadcast over the normalized dims.
    if (stripLeadingOnes(in[i].shape) != stripLeadingOnes(normShape))
      return Status::error(what + " shape " + fmtShape(in[i].shape) +
                           " does not match the normalized shape " +
                           fmtShape(normShape));
  }
  TPC_RETURN_IF_ERROR(
      checkSameDType(out[0], "output 0 (Y)", in[0], "input 0 (X)"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], s, "output 0 (Y)"));
  // Mean and InvStdDev have X's shape with the normalized dims set to 1.
  Shape statShape = s;
  for (int64_t d = axis; d < rank; ++d)
    statShape[d] = 1;
  bool wantStats[2] = {false, false};
  for (size_t i = 1; i < out.size(); ++i) {
    if (isAbsent(out[i]))
      continue;
    std::string what = "output " + std::to_string(i);
    TPC_RETURN_IF_ERROR(checkSameDType(out[i], what, in[0], "input 0 (X)"));
    TPC_RETURN_IF_ERROR(checkOutputShape(out[i], statShape, what));
    wantStats[i - 1] = true;
  }
  NormParams p;
  p.dtype = in[0].dtype;
  p.rms = Rms;
  p.outer = product(s, 0, axis);
  p.norm = norm;
  p.epsilon = epsilon;
  kernel = makeKernel([p, hasBias, wantStats](const void *const *i,
                                              void *const *o,
                                              const ExecContext &ctx) {
    const int64_t row = p.norm * int64_t(dtypeSize(p.dtype));
    const int64_t stat = int64_t(dtypeSize(p.dtype));
    // Rows are independent: each thread normalizes a block of them.
    parallelFor(ctx.numThreads, p.outer, 2 * row, [&](int64_t r0, int64_t r1) {
      NormParams q = p;
      q.outer = r1 - r0;
      normKernel(q, byteOffset(i[0], r0 * row), i[1],
                 hasBias ? i[2] : nullptr, byteOffset(o[0], r0 * row),
                 wantStats[0] ? byteOffset(o[1], r0 * stat) : nullptr,
                 wantStats[1] ? byteOffset(o[2], r0 * stat) : nullptr);
    });
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
}

} // namespace tpc::cpu
