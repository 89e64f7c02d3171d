//===- CopyKernels.cpp - Reshape-like kernels that copy bytes -------------===//
//
// Reshape, Copy and BitCast only change the description, so their kernel is
// one memcpy (the importer writes Squeeze, Unsqueeze, Flatten and Identity
// as Reshapes, or drops them). prepare() still checks that the
// output description is what the op's attributes imply, when they are given.
// The copy is skipped when the runtime hands the same buffer as input and
// output, which these kernels allow.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Support.h"

#include <algorithm>
#include <cstring>

namespace tpc::cpu {
namespace {

Status checkCopyDescs(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out) {
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  if (in[0].numel() != out[0].numel())
    return Status::error(
        "output 0 shape " + fmtShape(out[0].shape) + " has " +
        std::to_string(out[0].numel()) + " elements but input 0 shape " +
        fmtShape(in[0].shape) + " has " + std::to_string(in[0].numel()));
  return Status::ok();
}

std::unique_ptr<PreparedKernel> makeCopy(size_t bytes) {
  return makeKernel(
      [bytes](const void *const *i, void *const *o, const ExecContext &) {
        if (i[0] != o[0] && bytes)
          std::memcpy(o[0], i[0], bytes);
      });
}

Status reshapeTarget(const Shape &in, const std::vector<int64_t> &spec,
                     bool allowZero, Shape &out) {
  out.clear();
  int64_t inferAt = -1, known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (inferAt >= 0)
        return Status::error("attribute shape has more than one -1");
      inferAt = static_cast<int64_t>(i);
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
    out[inferAt] = numElements(in) / known;
  }
  return Status::ok();
}

Status prepareReshape(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkCopyDescs(in, out));
  if (const std::vector<int64_t> *spec = attrs.getInts("shape")) {
    Shape target;
    TPC_RETURN_IF_ERROR(reshapeTarget(
        in[0].shape, *spec, attrs.getInt("allowzero", 0) != 0, target));
    TPC_RETURN_IF_ERROR(checkOutputShape(out[0], target));
  }
  kernel = makeCopy(out[0].bytes());
  return Status::ok();
}

Status prepareCopy(const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &,
                   std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkCopyDescs(in, out));
  kernel = makeCopy(out[0].bytes());
  return Status::ok();
}

/// BitCast: the same bytes as another dtype of the same width.
Status prepareBitCast(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  if (!attrs.has("to") || attrs.getInt("to", 0) != int64_t(out[0].dtype))
    return Status::error("attribute to must name output 0's dtype " +
                         std::string(dtypeName(out[0].dtype)));
  if (dtypeBits(in[0].dtype) != dtypeBits(out[0].dtype))
    return Status::error(std::string("input 0 has dtype ") +
                         dtypeName(in[0].dtype) + ", not of the bit width of " +
                         dtypeName(out[0].dtype));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));
  kernel = makeCopy(out[0].bytes());
  return Status::ok();
}

} // namespace

void addCopyKernels(KernelTable &t) {
  t.push_back(
      {"Reshape", "copy under a new shape (may run in place)", prepareReshape});
  t.push_back({"Copy", "copy into a buffer of the same size (may run in place)",
               prepareCopy});
  t.push_back({"BitCast", "the same bytes as a dtype of the same width (attr to)",
               prepareBitCast});
}

} // namespace tpc::cpu
