//===- GenerateKernels.cpp - Shape, Size, Range, ConstantOfShape ----------===//
//
// Kernels whose output does not depend on input values (Shape, Size,
// ConstantOfShape: computed once in prepare) or only on a few scalars
// (Range).
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Cast.h"
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Movement.h"

#include <algorithm>
#include <cstring>

namespace tpc::cpu {
namespace {

/// A kernel that writes bytes fixed at prepare time.
std::unique_ptr<PreparedKernel> makeConstant(std::vector<uint8_t> bytes) {
  return makeKernel([bytes = std::move(bytes)](const void *const *,
                                               void *const *o,
                                               const ExecContext &) {
    if (!bytes.empty())
      std::memcpy(o[0], bytes.data(), bytes.size());
  });
}

std::vector<uint8_t> toBytes(const std::vector<int64_t> &v) {
  std::vector<uint8_t> b(v.size() * sizeof(int64_t));
  if (!v.empty())
    std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Status prepareShape(const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(out[0], "output 0", {DType::I64}));
  const Shape &s = in[0].shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  // start/end are clamped rather than rejected, as ONNX specifies.
  auto clampDim = [rank](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clampDim(attrs.getInt("start", 0));
  int64_t end = clampDim(attrs.getInt("end", rank));
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d)
    dims.push_back(s[d]);
  TPC_RETURN_IF_ERROR(
      checkOutputShape(out[0], {static_cast<int64_t>(dims.size())}));
  kernel = makeConstant(toBytes(dims));
  return Status::ok();
}

Status prepareSize(const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &,
                   std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(out[0], "output 0", {DType::I64}));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], {}));
  kernel = makeConstant(toBytes({in[0].numel()}));
  return Status::ok();
}

struct RangeParams {
  DType dtype = DType::F32;
  int64_t numel = 0;
};

/// out[i] = start + i * delta; the count comes from the output description.
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

Status prepareRange(const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 3, 3, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0",
                                 {DType::F32, DType::F64, DType::I64,
                                  DType::I32, DType::F16, DType::BF16}));
  static const char *names[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i) {
    std::string what = "input " + std::to_string(i) + " (" + names[i] + ")";
    TPC_RETURN_IF_ERROR(checkSameDType(in[i], what, in[0], "input 0"));
    if (in[i].numel() != 1 || in[i].shape.size() > 1)
      return Status::error(what + " must be a scalar, got shape " +
                           fmtShape(in[i].shape));
  }
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  if (out[0].shape.size() != 1)
    return Status::error("output 0 must be 1-D, got shape " +
                         fmtShape(out[0].shape));
  RangeParams p{in[0].dtype, out[0].numel()};
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        rangeKernel(p, i[0], i[2], o[0]);
      });
  return Status::ok();
}

Status prepareConstantOfShape(const std::vector<TensorDesc> &in,
                              const std::vector<TensorDesc> &out,
                              const Attrs &attrs,
                              std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 0, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  if (!in.empty() && !isAbsent(in[0])) {
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0 (shape)", {DType::I64}));
    if (in[0].shape.size() != 1 ||
        in[0].shape[0] != static_cast<int64_t>(out[0].shape.size()))
      return Status::error("input 0 (shape) has shape " +
                           fmtShape(in[0].shape) + " but output 0 has rank " +
                           std::to_string(out[0].shape.size()));
  }
  double value = 0;
  const std::vector<double> *fv = attrs.getFloats("value");
  const std::vector<int64_t> *iv = attrs.getInts("value");
  if ((fv && fv->size() != 1) || (iv && iv->size() != 1))
    return Status::error("attribute value must hold exactly one element");
  if (fv)
    value = (*fv)[0];
  else if (iv)
    value = static_cast<double>((*iv)[0]);
  uint64_t pattern = 0;
  castKernel(CastParams{DType::F64, out[0].dtype, 1}, &value, &pattern);
  // Integer values beyond 2^53 would round through double; copy them.
  if (iv && (out[0].dtype == DType::I64))
    std::memcpy(&pattern, iv->data(), sizeof(int64_t));
  const size_t es = dtypeSize(out[0].dtype);
  const int64_t numel = out[0].numel();
  kernel = makeKernel([pattern, es, numel](const void *const *, void *const *o,
                                           const ExecContext &) {
    fillKernel(es, numel, &pattern, o[0]);
  });
  return Status::ok();
}

} // namespace

void addGenerateKernels(KernelTable &t) {
  t.push_back(
      {"Shape", "dims of the input as i64 (attrs start, end)", prepareShape});
  t.push_back(
      {"Size", "element count of the input as an i64 scalar", prepareSize});
  t.push_back(
      {"Range", "start + i * delta for the output's length", prepareRange});
  t.push_back({"ConstantOfShape", "output filled with attr value",
               prepareConstantOfShape});
}

} // namespace tpc::cpu
