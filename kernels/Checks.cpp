//===- Checks.cpp - Operand checks shared by every backend ----------------===//
#include "kernels/Checks.h"

#include <cstdint>
#include <sstream>

namespace tpc {

std::string fmtShape(const Shape &shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

static std::string countRange(size_t lo, size_t hi) {
  if (lo == hi)
    return std::to_string(lo);
  if (hi == SIZE_MAX)
    return "at least " + std::to_string(lo);
  return std::to_string(lo) + " to " + std::to_string(hi);
}

static Status checkDesc(const TensorDesc &d, const std::string &what) {
  if (isAbsent(d))
    return Status::ok();
  if (!isValidDType(static_cast<int32_t>(d.dtype)))
    return Status::error(what + " has invalid dtype " +
                         std::to_string(static_cast<int32_t>(d.dtype)));
  for (int64_t dim : d.shape)
    if (dim < 0)
      return Status::error(what + " has negative dim in shape " +
                           fmtShape(d.shape));
  return Status::ok();
}

static Status checkDescs(const std::vector<TensorDesc> &inputs,
                         const std::vector<TensorDesc> &outputs) {
  for (size_t i = 0; i < inputs.size(); ++i)
    TPC_RETURN_IF_ERROR(checkDesc(inputs[i], "input " + std::to_string(i)));
  for (size_t i = 0; i < outputs.size(); ++i)
    TPC_RETURN_IF_ERROR(checkDesc(outputs[i], "output " + std::to_string(i)));
  return Status::ok();
}

Status checkOperands(const std::vector<TensorDesc> &inputs,
                     const std::vector<TensorDesc> &outputs, size_t minIn,
                     size_t maxIn, size_t minOut, size_t maxOut) {
  if (inputs.size() < minIn || inputs.size() > maxIn)
    return Status::error("expected " + countRange(minIn, maxIn) +
                         " inputs, got " + std::to_string(inputs.size()));
  if (outputs.size() < minOut || outputs.size() > maxOut)
    return Status::error("expected " + countRange(minOut, maxOut) +
                         " outputs, got " + std::to_string(outputs.size()));
  for (size_t i = 0; i < minIn; ++i)
    if (isAbsent(inputs[i]))
      return Status::error("input " + std::to_string(i) +
                           " is required but absent");
  for (size_t i = 0; i < minOut; ++i)
    if (isAbsent(outputs[i]))
      return Status::error("output " + std::to_string(i) +
                           " is required but absent");
  return checkDescs(inputs, outputs);
}

Status checkDType(const TensorDesc &d, const std::string &what,
                  std::initializer_list<DType> allowed) {
  for (DType t : allowed)
    if (d.dtype == t)
      return Status::ok();
  std::string names;
  for (DType t : allowed)
    names += std::string(names.empty() ? "" : ", ") + dtypeName(t);
  return Status::error(what + " has unsupported dtype " + dtypeName(d.dtype) +
                       " (expected one of: " + names + ")");
}

Status checkSameDType(const TensorDesc &a, const std::string &whatA,
                      const TensorDesc &b, const std::string &whatB) {
  if (a.dtype == b.dtype)
    return Status::ok();
  return Status::error("dtype mismatch: " + whatA + " is " +
                       dtypeName(a.dtype) + " but " + whatB + " is " +
                       dtypeName(b.dtype));
}

Status checkOutputShape(const TensorDesc &out, const Shape &expected,
                        const std::string &what) {
  if (out.shape == expected)
    return Status::ok();
  return Status::error(what + " shape " + fmtShape(out.shape) +
                       " does not match the expected shape " +
                       fmtShape(expected));
}

Status requireFloat(const Attrs &attrs, const std::string &name, double &out) {
  const std::vector<double> *v = attrs.getFloats(name);
  if (!v || v->size() != 1)
    return Status::error("attribute " + name +
                         " is required (one float); the plan does not carry "
                         "it");
  out = (*v)[0];
  return Status::ok();
}

Status requireInt(const Attrs &attrs, const std::string &name, int64_t &out) {
  const std::vector<int64_t> *v = attrs.getInts(name);
  if (!v || v->size() != 1)
    return Status::error("attribute " + name +
                         " is required (one integer); the plan does not "
                         "carry it");
  out = (*v)[0];
  return Status::ok();
}

Status requireFlag(const Attrs &attrs, const std::string &name, bool &out) {
  int64_t v;
  TPC_RETURN_IF_ERROR(requireInt(attrs, name, v));
  if (v != 0 && v != 1)
    return Status::error("attribute " + name + " must be 0 or 1, got " +
                         std::to_string(v));
  out = v == 1;
  return Status::ok();
}

Status requireInts(const Attrs &attrs, const std::string &name,
                   std::vector<int64_t> &out) {
  const std::vector<int64_t> *v = attrs.getInts(name);
  if (!v)
    return Status::error("attribute " + name +
                         " is required (a list of integers); the plan does "
                         "not carry it");
  out = *v;
  return Status::ok();
}

Status normalizeAxis(int64_t axis, int64_t rank, const std::string &attr,
                     int64_t &out) {
  if (axis < -rank || axis >= rank)
    return Status::error(attr + " " + std::to_string(axis) +
                         " is out of range for rank " + std::to_string(rank));
  out = axis < 0 ? axis + rank : axis;
  return Status::ok();
}

Shape stripLeadingOnes(const Shape &s) {
  size_t i = 0;
  while (i < s.size() && s[i] == 1)
    ++i;
  return Shape(s.begin() + i, s.end());
}

int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i)
    p *= shape[i];
  return p;
}

Status requireString(const Attrs &attrs, const std::string &name,
                     std::string &out) {
  auto it = attrs.strings().find(name);
  if (it == attrs.strings().end())
    return Status::error("attribute " + name +
                         " is required (a string); the plan does not carry "
                         "it");
  out = it->second;
  return Status::ok();
}

} // namespace tpc
