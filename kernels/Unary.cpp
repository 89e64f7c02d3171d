//===- Unary.cpp - Params of the unary kernels, for every backend ---------===//
#include "kernels/Unary.h"
#include "kernels/Checks.h"

namespace tpc {

namespace {

Status checkDomain(UnaryDomain domain, const TensorDesc &in) {
  switch (domain) {
  case UnaryDomain::Float:
  case UnaryDomain::IsFloat:
    return checkDType(in, "input 0",
                      {DType::F32, DType::F64, DType::F16, DType::BF16});
  case UnaryDomain::Signed:
    return checkDType(in, "input 0",
                      {DType::F32, DType::F64, DType::F16, DType::BF16,
                       DType::I64, DType::I32, DType::I8});
  case UnaryDomain::Numeric:
    return checkDType(in, "input 0",
                      {DType::F32, DType::F64, DType::F16, DType::BF16,
                       DType::I64, DType::I32, DType::I8, DType::U8});
  case UnaryDomain::Bool:
    return checkDType(in, "input 0", {DType::Bool});
  }
  return Status::error("unknown unary domain");
}

} // namespace

Status makeUnaryParams(const UnaryKernelInfo &info,
                       const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       UnaryParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDomain(info.domain, in[0]));
  const DType outType =
      info.domain == UnaryDomain::IsFloat ? DType::Bool : in[0].dtype;
  if (out[0].dtype != outType)
    return Status::error(std::string("output 0 has dtype ") +
                         dtypeName(out[0].dtype) + ", expected " +
                         dtypeName(outType));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));
  p = UnaryParams();
  p.op = info.op;
  p.dtype = in[0].dtype;
  p.numel = in[0].numel();
  if (info.alphaAttr)
    TPC_RETURN_IF_ERROR(requireFloat(attrs, info.alphaAttr, p.alpha));
  if (info.betaAttr)
    TPC_RETURN_IF_ERROR(requireFloat(attrs, info.betaAttr, p.beta));
  if (info.op == UnaryOp::Gelu) {
    std::string approx;
    TPC_RETURN_IF_ERROR(requireString(attrs, "approximate", approx));
    if (approx == "tanh")
      p.op = UnaryOp::GeluTanh;
    else if (approx != "none")
      return Status::error("attribute approximate must be \"none\" or "
                           "\"tanh\", got \"" +
                           approx + "\"");
  }
  return Status::ok();
}

} // namespace tpc
