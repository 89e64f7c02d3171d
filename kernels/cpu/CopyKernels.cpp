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

using Operands = std::vector<TensorDesc>;

/// The adapter of op Op of the family. The primary template is that of
/// the reshape-like copies (Reshape, Copy, BitCast); the others are
/// specialized below.
template <CopyOp Op>
Status prepareCopyOp(const Operands &in, const Operands &out,
                     const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  size_t bytes;
  TPC_RETURN_IF_ERROR(makeCopyParams(Op, in, out, attrs, bytes));
  kernel = makeKernel(
      [bytes](const void *const *i, void *const *o, const ExecContext &) {
        if (i[0] != o[0] && bytes)
          std::memcpy(o[0], i[0], bytes);
      });
  return Status::ok();
}

template <>
Status prepareCopyOp<CopyOp::Cast>(const Operands &in, const Operands &out,
                                   const Attrs &attrs,
                                   std::unique_ptr<PreparedKernel> &kernel) {
  CastParams p;
  TPC_RETURN_IF_ERROR(makeCastParams(in, out, attrs, p));
  kernel = makeKernel([p](const void *const *i, void *const *o,
                          const ExecContext &) { castKernel(p, i[0], o[0]); });
  return Status::ok();
}

/// A kernel that writes int64 values fixed at prepare time.
std::unique_ptr<PreparedKernel> makeConstant(std::vector<int64_t> values) {
  return makeKernel([values = std::move(values)](const void *const *,
                                                 void *const *o,
                                                 const ExecContext &) {
    if (!values.empty())
      std::memcpy(o[0], values.data(), values.size() * sizeof(int64_t));
  });
}

template <>
Status prepareCopyOp<CopyOp::Shape>(const Operands &in, const Operands &out,
                                    const Attrs &attrs,
                                    std::unique_ptr<PreparedKernel> &kernel) {
  std::vector<int64_t> values;
  TPC_RETURN_IF_ERROR(makeShapeParams(in, out, attrs, values));
  kernel = makeConstant(std::move(values));
  return Status::ok();
}

template <>
Status prepareCopyOp<CopyOp::Size>(const Operands &in, const Operands &out,
                                   const Attrs &,
                                   std::unique_ptr<PreparedKernel> &kernel) {
  std::vector<int64_t> values;
  TPC_RETURN_IF_ERROR(makeSizeParams(in, out, values));
  kernel = makeConstant(std::move(values));
  return Status::ok();
}

/// out[i] = start + i * delta.
void rangeKernel(const RangeParams &p, const void *start, const void *delta,
                 void *out) {
  // f16 and bf16: computed in float, each element rounded once.
  auto half = [&](auto load, auto store) {
    const float s = load(*static_cast<const uint16_t *>(start));
    const float d = load(*static_cast<const uint16_t *>(delta));
    uint16_t *y = static_cast<uint16_t *>(out);
    for (int64_t i = 0; i < p.numel; ++i)
      y[i] = store(s + float(i) * d);
  };
  if (p.dtype == DType::F16)
    return half([](uint16_t v) { return halfToFloat(Half{v}); },
                [](float v) { return floatToHalf(v).bits; });
  if (p.dtype == DType::BF16)
    return half([](uint16_t v) { return bfloat16ToFloat(BFloat16{v}); },
                [](float v) { return floatToBFloat16(v).bits; });
  visitNumeric(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T s = *static_cast<const T *>(start);
    const T d = *static_cast<const T *>(delta);
    T *y = static_cast<T *>(out);
    for (int64_t i = 0; i < p.numel; ++i)
      y[i] = static_cast<T>(s + static_cast<T>(i) * d);
  });
}

template <>
Status prepareCopyOp<CopyOp::Range>(const Operands &in, const Operands &out,
                                    const Attrs &,
                                    std::unique_ptr<PreparedKernel> &kernel) {
  RangeParams p;
  TPC_RETURN_IF_ERROR(makeRangeParams(in, out, p));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        rangeKernel(p, i[0], i[2], o[0]);
      });
  return Status::ok();
}

template <>
Status prepareCopyOp<CopyOp::ConstantOfShape>(
    const Operands &in, const Operands &out, const Attrs &attrs,
    std::unique_ptr<PreparedKernel> &kernel) {
  FillParams p;
  TPC_RETURN_IF_ERROR(makeConstantOfShapeParams(in, out, attrs, p));
  const uint64_t pattern = fillPattern(p);
  const size_t es = dtypeSize(p.dtype);
  kernel = makeKernel([p, pattern, es](const void *const *, void *const *o,
                                       const ExecContext &) {
    fillKernel(es, p.numel, &pattern, o[0]);
  });
  return Status::ok();
}

} // namespace

TPC_DEFINE_LISTED_KERNELS(addCopyKernels, KernelTable, kCopyKernels,
                          prepareCopyOp)

} // namespace tpc::cpu
