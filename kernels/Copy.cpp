//===- Copy.cpp - Params of the conversions, copies and generators --------===//
#include "kernels/Copy.h"
#include "kernels/Checks.h"

#include <algorithm>
#include <climits>

namespace tpc {

namespace {

Status checkSameElements(const std::vector<TensorDesc> &in,
                         const std::vector<TensorDesc> &out) {
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  if (in[0].numel() != out[0].numel())
    return Status::error(
        "output 0 shape " + fmtShape(out[0].shape) + " has " +
        std::to_string(out[0].numel()) + " elements but input 0 shape " +
        fmtShape(in[0].shape) + " has " + std::to_string(in[0].numel()));
  return Status::ok();
}

/// The shape ONNX Reshape gives `in` for `spec` (0 copies a dim unless
/// allowZero, one -1 is inferred).
Status reshapeTarget(const Shape &in, const std::vector<int64_t> &spec,
                     bool allowZero, Shape &out) {
  out.clear();
  int64_t inferAt = -1, known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (inferAt >= 0)
        return Status::error("attribute shape has more than one -1");
      inferAt = int64_t(i);
    } else if (d == 0 && !allowZero) {
      if (i >= in.size())
        return Status::error("attribute shape copies dim " + std::to_string(i) +
                             " that the input lacks");
      d = in[i];
    } else if (d < 0) {
      return Status::error("attribute shape has invalid dim " +
                           std::to_string(d));
    }
    out.push_back(d);
    if (d != -1)
      known *= d;
  }
  if (inferAt >= 0) {
    if (known == 0 || numElements(in) % known != 0)
      return Status::error("attribute shape " + fmtShape(spec) +
                           " cannot hold input shape " + fmtShape(in));
    out[size_t(inferAt)] = numElements(in) / known;
  }
  return Status::ok();
}

/// Attribute `to` as a dtype the output has.
Status checkTo(const Attrs &attrs, const TensorDesc &out) {
  int64_t to;
  TPC_RETURN_IF_ERROR(requireInt(attrs, "to", to));
  if (to < INT32_MIN || to > INT32_MAX || !isValidDType(int32_t(to)))
    return Status::error("attribute to=" + std::to_string(to) +
                         " is not a supported dtype");
  if (int32_t(out.dtype) != to)
    return Status::error(std::string("output 0 has dtype ") +
                         dtypeName(out.dtype) + " but attribute to is " +
                         dtypeName(DType(to)));
  return Status::ok();
}

} // namespace

Status makeCastParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      CastParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkTo(attrs, out[0]));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));
  int64_t saturate = 1;
  if (attrs.has("saturate"))
    TPC_RETURN_IF_ERROR(requireInt(attrs, "saturate", saturate));
  if (saturate != 0 && saturate != 1)
    return Status::error("attribute saturate must be 0 or 1, not " +
                         std::to_string(saturate));
  p = CastParams{in[0].dtype, out[0].dtype, in[0].numel(), saturate == 1};
  return Status::ok();
}

Status makeCopyParams(CopyOp op, const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      size_t &bytes) {
  switch (op) {
  case CopyOp::Reshape:
    TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 2, 1, 1));
    TPC_RETURN_IF_ERROR(checkSameElements(in, out));
    // The compiler gives the output its shape; a plan that also carries
    // ONNX's shape attribute is checked against it.
    if (const std::vector<int64_t> *spec = attrs.getInts("shape")) {
      Shape target;
      TPC_RETURN_IF_ERROR(reshapeTarget(
          in[0].shape, *spec, attrs.getInt("allowzero", 0) != 0, target));
      TPC_RETURN_IF_ERROR(checkOutputShape(out[0], target));
    }
    break;
  case CopyOp::Copy:
    TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 1, 1, 1));
    TPC_RETURN_IF_ERROR(checkSameElements(in, out));
    break;
  case CopyOp::BitCast:
    TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 1, 1, 1));
    TPC_RETURN_IF_ERROR(checkTo(attrs, out[0]));
    if (dtypeBits(in[0].dtype) != dtypeBits(out[0].dtype))
      return Status::error(
          std::string("input 0 has dtype ") + dtypeName(in[0].dtype) +
          ", not of the bit width of " + dtypeName(out[0].dtype));
    TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));
    break;
  default:
    return Status::error("not a copy kernel");
  }
  bytes = out[0].bytes();
  return Status::ok();
}

Status makeShapeParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       std::vector<int64_t> &values) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(out[0], "output 0", {DType::I64}));
  const Shape &s = in[0].shape;
  const int64_t rank = int64_t(s.size());
  // start and end are clamped rather than rejected, as ONNX specifies;
  // absent, they take the whole shape.
  auto bound = [&](const char *name, int64_t absent, int64_t &v) {
    v = absent;
    if (attrs.has(name))
      TPC_RETURN_IF_ERROR(requireInt(attrs, name, v));
    if (v < 0)
      v += rank;
    v = std::clamp<int64_t>(v, 0, rank);
    return Status::ok();
  };
  int64_t start, end;
  TPC_RETURN_IF_ERROR(bound("start", 0, start));
  TPC_RETURN_IF_ERROR(bound("end", rank, end));
  values.clear();
  for (int64_t d = start; d < end; ++d)
    values.push_back(s[size_t(d)]);
  return checkOutputShape(out[0], {int64_t(values.size())});
}

Status makeSizeParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out,
                      std::vector<int64_t> &values) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(out[0], "output 0", {DType::I64}));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], {}));
  values = {in[0].numel()};
  return Status::ok();
}

Status makeRangeParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, RangeParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 3, 3, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0",
                                 {DType::F32, DType::F64, DType::I64,
                                  DType::I32, DType::F16, DType::BF16}));
  static const char *names[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i) {
    const std::string what =
        "input " + std::to_string(i) + " (" + names[i] + ")";
    TPC_RETURN_IF_ERROR(checkSameDType(in[i], what, in[0], "input 0"));
    if (in[i].numel() != 1 || in[i].shape.size() > 1)
      return Status::error(what + " must be a scalar, got shape " +
                           fmtShape(in[i].shape));
  }
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  if (out[0].shape.size() != 1)
    return Status::error("output 0 must be 1-D, got shape " +
                         fmtShape(out[0].shape));
  p = RangeParams{in[0].dtype, out[0].numel()};
  return Status::ok();
}

Status makeConstantOfShapeParams(const std::vector<TensorDesc> &in,
                                 const std::vector<TensorDesc> &out,
                                 const Attrs &attrs, FillParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 0, 1, 1, 1));
  if (!in.empty() && !isAbsent(in[0])) {
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0 (shape)", {DType::I64}));
    if (in[0].shape.size() != 1 ||
        in[0].shape[0] != int64_t(out[0].shape.size()))
      return Status::error("input 0 (shape) has shape " +
                           fmtShape(in[0].shape) + " but output 0 has rank " +
                           std::to_string(out[0].shape.size()));
  }
  const std::vector<double> *fv = attrs.getFloats("value");
  const std::vector<int64_t> *iv = attrs.getInts("value");
  if (!fv && !iv)
    return Status::error("attribute value is required (one element); the "
                         "plan does not carry it");
  if ((fv && fv->size() != 1) || (iv && iv->size() != 1))
    return Status::error("attribute value must hold exactly one element");
  p.dtype = out[0].dtype;
  p.numel = out[0].numel();
  p.value = fv ? (*fv)[0] : double((*iv)[0]);
  p.exactInt = iv && out[0].dtype == DType::I64;
  p.intValue = iv ? (*iv)[0] : 0;
  return Status::ok();
}

} // namespace tpc
