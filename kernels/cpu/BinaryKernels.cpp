//===- BinaryKernels.cpp - Registry adapters for broadcasting ops ---------===//
//
// The binary, variadic (Max, Min, Sum, Mean) and Where kernels: the params
// come from the builders of kernels/Binary.h.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Binary.h"
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/KernelTable.h"

#include <cstring>

namespace tpc::cpu {
namespace {

void runBinary(const BinaryParams &p, const void *const *i, void *const *o,
               const ExecContext &) {
  binaryKernel(p, i[0], i[1], o[0]);
}

/// Folds N inputs into the output (VariadicParams); Mean divides at the
/// end. One input is a plain copy.
void runVariadic(const VariadicParams &p, const void *const *i, void *const *o,
                 const ExecContext &) {
  if (p.steps.empty()) {
    if (p.bytes)
      std::memcpy(o[0], i[0], p.bytes);
    return;
  }
  for (size_t s = 0; s < p.steps.size(); ++s)
    binaryKernel(p.steps[s], s == 0 ? i[0] : o[0], i[s + 1], o[0]);
  if (p.op != VariadicOp::Mean)
    return;
  visitFloat(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *y = static_cast<T *>(o[0]);
    for (int64_t k = 0; k < p.numel; ++k)
      y[k] = static_cast<T>(y[k] * p.scale);
  });
  // The 16-bit floats hold the sum rounded at each step, as their Add does;
  // the division is rounded once (through round-to-odd float).
  visitFloat16(p.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    S *y = static_cast<S *>(o[0]);
    for (int64_t k = 0; k < p.numel; ++k)
      y[k] = narrowTo<S>(doubleToFloatRoundOdd(widen(y[k]) * p.scale));
  });
}

void runWhere(const WhereParams &p, const void *const *i, void *const *o,
              const ExecContext &) {
  whereKernel(p, static_cast<const uint8_t *>(i[0]), i[1], i[2], o[0]);
}

} // namespace

void addBinaryKernels(KernelTable &t) {
  // One pass over the output, reading each operand's element at the same
  // index when the operand has the output's shape: in place is safe. Not so
  // for the variadic kernels, which accumulate into the output.
  addElementwise<kBinaryKernels>(t, [](auto i) {
    return prepareWith<makeBinaryOpParams, runBinary,
                       kBinaryKernels[decltype(i)::value].op>;
  });
  addListed<kVariadicKernels>(t, [](auto i) {
    return prepareWith<makeVariadicParams, runVariadic,
                       kVariadicKernels[decltype(i)::value].op>;
  });
  t.push_back({"Where", "cond ? x : y with broadcasting",
               prepareWith<makeWhereParams, runWhere>});
}

} // namespace tpc::cpu
