//===- BinaryKernels.cpp - Registry adapters for broadcasting ops ---------===//
//
// prepare() functions for the binary, variadic (Max, Min, Sum, Mean) and
// Where kernels: the params come from the builders of kernels/Binary.h.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Binary.h"
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/KernelTable.h"

#include <cstring>
#include <iterator>
#include <utility>

namespace tpc::cpu {
namespace {

template <int I>
Status prepareBinary(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  BinaryParams p;
  TPC_RETURN_IF_ERROR(makeBinaryOpParams(kBinaryKernels[I].op, in, out, attrs, p));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        binaryKernel(p, i[0], i[1], o[0]);
      });
  return Status::ok();
}

/// Folds N inputs into the output (VariadicParams); Mean divides at the
/// end. One input is a plain copy.
template <VariadicOp V>
Status prepareVariadic(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &,
                       std::unique_ptr<PreparedKernel> &kernel) {
  VariadicParams p;
  TPC_RETURN_IF_ERROR(makeVariadicParams(V, in, out, p));
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &) {
    if (p.steps.empty()) {
      if (p.bytes)
        std::memcpy(o[0], i[0], p.bytes);
      return;
    }
    for (size_t s = 0; s < p.steps.size(); ++s)
      binaryKernel(p.steps[s], s == 0 ? i[0] : o[0], i[s + 1], o[0]);
    if (V == VariadicOp::Mean) {
      visitFloat(p.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T *y = static_cast<T *>(o[0]);
        for (int64_t k = 0; k < p.numel; ++k)
          y[k] = static_cast<T>(y[k] * p.scale);
      });
      // The 16-bit floats hold the sum rounded at each step, as their Add
      // does; the division is rounded once (through round-to-odd float).
      if (p.dtype == DType::F16) {
        Half *y = static_cast<Half *>(o[0]);
        for (int64_t k = 0; k < p.numel; ++k)
          y[k] = floatToHalf(
              doubleToFloatRoundOdd(halfToFloat(y[k]) * p.scale));
      } else if (p.dtype == DType::BF16) {
        BFloat16 *y = static_cast<BFloat16 *>(o[0]);
        for (int64_t k = 0; k < p.numel; ++k)
          y[k] = floatToBFloat16(
              doubleToFloatRoundOdd(bfloat16ToFloat(y[k]) * p.scale));
      }
    }
  });
  return Status::ok();
}

Status prepareWhere(const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &,
                    std::unique_ptr<PreparedKernel> &kernel) {
  WhereParams p;
  TPC_RETURN_IF_ERROR(makeWhereParams(in, out, p));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        whereKernel(p, static_cast<const uint8_t *>(i[0]), i[1], i[2], o[0]);
      });
  return Status::ok();
}

} // namespace

void addBinaryKernels(KernelTable &t) {
  const size_t first = t.size();
  addListed<kBinaryKernels>(
      t, [](auto i) { return prepareBinary<decltype(i)::value>; });
  // One pass over the output, reading each operand's element at the same
  // index when the operand has the output's shape: in place is safe. Not so
  // for the variadic kernels below, which accumulate into the output.
  for (size_t i = first; i < t.size(); ++i)
    t[i].elementwise = true;
  addListed<kVariadicKernels>(t, [](auto i) {
    return prepareVariadic<kVariadicKernels[decltype(i)::value].op>;
  });
  t.push_back({"Where", "cond ? x : y with broadcasting", prepareWhere});
}

} // namespace tpc::cpu
