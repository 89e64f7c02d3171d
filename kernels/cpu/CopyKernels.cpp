//===- CopyKernels.cpp - Cast, the copies and the generators --------------===//
//
// Each adapter builds its params with the backend-neutral builder
// (kernels/Copy.h) and binds the CPU kernel. Reshape, Copy and BitCast only
// change the description, so their kernel is one memcpy, skipped when the
// runtime hands the same buffer as input and output, which they allow.
// Shape and Size write values computed once at prepare time.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Cast.h"
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Movement.h"

#include <cstring>

namespace tpc::cpu {
namespace {

/// The reshape-like copies: `bytes` of the input, unless in place.
void runCopy(const size_t &bytes, const void *const *i, void *const *o,
             const ExecContext &) {
  if (i[0] != o[0] && bytes)
    std::memcpy(o[0], i[0], bytes);
}

void runCast(const CastParams &p, const void *const *i, void *const *o,
             const ExecContext &) {
  castKernel(p, i[0], o[0]);
}

/// Writes the int64 values fixed at prepare time (Shape, Size).
void runConstant(const std::vector<int64_t> &values, const void *const *,
                 void *const *o, const ExecContext &) {
  if (!values.empty())
    std::memcpy(o[0], values.data(), values.size() * sizeof(int64_t));
}

/// out[i] = start + i * delta.
void rangeKernel(const RangeParams &p, const void *start, const void *delta,
                 void *out) {
  // f16 and bf16: computed in float, each element rounded once.
  if (visitFloat16(p.dtype, [&](auto tag) {
        using S = typename decltype(tag)::type;
        const float s = widen(*static_cast<const S *>(start));
        const float d = widen(*static_cast<const S *>(delta));
        S *y = static_cast<S *>(out);
        for (int64_t i = 0; i < p.numel; ++i)
          y[i] = narrowTo<S>(s + float(i) * d);
      }))
    return;
  visitNumeric(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T s = *static_cast<const T *>(start);
    const T d = *static_cast<const T *>(delta);
    T *y = static_cast<T *>(out);
    for (int64_t i = 0; i < p.numel; ++i)
      y[i] = static_cast<T>(s + static_cast<T>(i) * d);
  });
}

void runRange(const RangeParams &p, const void *const *i, void *const *o,
              const ExecContext &) {
  rangeKernel(p, i[0], i[2], o[0]);
}

/// ConstantOfShape: the value converted once to the element type.
std::unique_ptr<PreparedKernel> bindFill(const FillParams &p,
                                         const Operands &) {
  const uint64_t pattern = fillPattern(p);
  const size_t es = dtypeSize(p.dtype);
  const int64_t numel = p.numel;
  return makeKernel([pattern, es, numel](const void *const *, void *const *o,
                                         const ExecContext &) {
    fillKernel(es, numel, &pattern, o[0]);
  });
}

} // namespace

void addCopyKernels(KernelTable &t) {
  addFamily(
      t, kCopyKernels,
      {{CopyOp::Cast, prepareWith<makeCastParams, runCast>},
       {CopyOp::Reshape, prepareWith<makeCopyParams, runCopy, CopyOp::Reshape>},
       {CopyOp::Copy, prepareWith<makeCopyParams, runCopy, CopyOp::Copy>},
       {CopyOp::BitCast, prepareWith<makeCopyParams, runCopy, CopyOp::BitCast>},
       {CopyOp::Shape, prepareWith<makeShapeParams, runConstant>},
       {CopyOp::Size, prepareWith<makeSizeParams, runConstant>},
       {CopyOp::Range, prepareWith<makeRangeParams, runRange>},
       {CopyOp::ConstantOfShape,
        prepareBound<makeConstantOfShapeParams, bindFill>}});
}

} // namespace tpc::cpu
