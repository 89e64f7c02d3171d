//===- Norm.cpp - Params of the normalization kernels, for every backend --===//
#include "kernels/Norm.h"
#include "kernels/Checks.h"

namespace tpc {

namespace {

Status checkFloat(const TensorDesc &d, const std::string &what) {
  return checkDType(d, what, {DType::F32, DType::F64, DType::F16, DType::BF16});
}

/// The norm's axis and epsilon, and its scale and bias (inputs `scale` and
/// `scale` + 1, the bias when `hasBias`, named `biasName`) checked against
/// the normalized shape of input 0 (named `xName`); on success `p` holds
/// the params of an RMS (`rms`) or layer norm of input 0 along `axis`.
Status normOperands(const std::vector<TensorDesc> &in, size_t scale, bool rms,
                    bool hasBias, const char *xName, const char *biasName,
                    const Attrs &attrs, int64_t &axis, NormParams &p) {
  const Shape &s = in[0].shape;
  double epsilon;
  const int64_t rank = int64_t(s.size());
  if (rank == 0)
    return Status::error(std::string(xName) + " must have rank >= 1");
  TPC_RETURN_IF_ERROR(requireInt(attrs, "axis", axis));
  TPC_RETURN_IF_ERROR(normalizeAxis(axis, rank, "axis", axis));
  TPC_RETURN_IF_ERROR(requireFloat(attrs, "epsilon", epsilon));
  if (!(epsilon >= 0))
    return Status::error("attribute epsilon must be >= 0, got " +
                         std::to_string(epsilon));
  const Shape normShape(s.begin() + axis, s.end());
  for (size_t i = scale; i < scale + (hasBias ? 2 : 1); ++i) {
    std::string what = "input " + std::to_string(i) + " (" +
                       (i == scale ? "Scale" : biasName) + ")";
    TPC_RETURN_IF_ERROR(checkSameDType(in[i], what, in[0], xName));
    // Scale and B hold one value per normalized element; leading unit dims
    // are accepted, but not a broadcast over the normalized dims.
    if (stripLeadingOnes(in[i].shape) != stripLeadingOnes(normShape))
      return Status::error(what + " shape " + fmtShape(in[i].shape) +
                           " does not match the normalized shape " +
                           fmtShape(normShape));
  }
  p = NormParams();
  p.dtype = in[0].dtype;
  p.rms = rms;
  p.outer = product(s, 0, size_t(axis));
  p.norm = product(s, size_t(axis), s.size());
  p.epsilon = epsilon;
  p.hasBias = hasBias;
  return Status::ok();
}

} // namespace

Status makeSoftmaxParams(bool log, const std::vector<TensorDesc> &in,
                         const std::vector<TensorDesc> &out, const Attrs &attrs,
                         SoftmaxParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkFloat(in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));
  // A scalar is a softmax over one element.
  const Shape view = in[0].shape.empty() ? Shape{1} : in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(requireInt(attrs, "axis", axis));
  TPC_RETURN_IF_ERROR(normalizeAxis(axis, int64_t(view.size()), "axis", axis));
  p = SoftmaxParams();
  p.dtype = in[0].dtype;
  p.log = log;
  p.outer = product(view, 0, size_t(axis));
  p.axis = view[size_t(axis)];
  p.inner = product(view, size_t(axis) + 1, view.size());
  return Status::ok();
}

Status makeNormParams(bool rms, const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      NormParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 2, rms ? 2 : 3, 1, rms ? 1 : 3));
  TPC_RETURN_IF_ERROR(checkFloat(in[0], "input 0 (X)"));
  const Shape &s = in[0].shape;
  const bool hasBias = !rms && in.size() == 3 && !isAbsent(in[2]);
  int64_t axis;
  TPC_RETURN_IF_ERROR(
      normOperands(in, 1, rms, hasBias, "input 0 (X)", "B", attrs, axis, p));
  TPC_RETURN_IF_ERROR(
      checkSameDType(out[0], "output 0 (Y)", in[0], "input 0 (X)"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], s, "output 0 (Y)"));
  // Mean and InvStdDev have X's shape with the normalized dims set to 1.
  Shape statShape = s;
  for (size_t d = size_t(axis); d < s.size(); ++d)
    statShape[d] = 1;
  bool want[2] = {false, false};
  for (size_t i = 1; i < out.size(); ++i) {
    if (isAbsent(out[i]))
      continue;
    std::string what = "output " + std::to_string(i);
    TPC_RETURN_IF_ERROR(checkSameDType(out[i], what, in[0], "input 0 (X)"));
    TPC_RETURN_IF_ERROR(checkOutputShape(out[i], statShape, what));
    want[i - 1] = true;
  }
  p.wantMean = want[0];
  p.wantInvStdDev = want[1];
  return Status::ok();
}

Status makeAddNormParams(const std::vector<TensorDesc> &in,
                         const std::vector<TensorDesc> &out, const Attrs &attrs,
                         NormParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 3, 4, 2, 2));
  TPC_RETURN_IF_ERROR(checkFloat(in[0], "input 0 (A)"));
  const Shape &s = in[0].shape;
  TPC_RETURN_IF_ERROR(
      checkSameDType(in[1], "input 1 (B)", in[0], "input 0 (A)"));
  if (in[1].shape != s)
    return Status::error("input 1 (B) shape " + fmtShape(in[1].shape) +
                         " differs from input 0 (A) shape " + fmtShape(s));
  bool rms;
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "rms", rms));
  const bool hasBias = in.size() == 4 && !isAbsent(in[3]);
  if (rms && hasBias)
    return Status::error("an RMS norm (rms = 1) takes no bias");
  int64_t axis;
  TPC_RETURN_IF_ERROR(
      normOperands(in, 2, rms, hasBias, "input 0 (A)", "Bias", attrs, axis, p));
  for (size_t i = 0; i < 2; ++i) {
    std::string what = i == 0 ? "output 0 (Y)" : "output 1 (Sum)";
    TPC_RETURN_IF_ERROR(checkSameDType(out[i], what, in[0], "input 0 (A)"));
    TPC_RETURN_IF_ERROR(checkOutputShape(out[i], s, what));
  }
  return Status::ok();
}

} // namespace tpc
