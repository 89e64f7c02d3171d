//===- GatherKernels.cpp - The gathers and the scatters -------------------===//
//
// Indices are i64 or i32. Negative indices count from the end of the axis as
// ONNX specifies. An index outside [-dim, dim) fails the run: runStatus()
// names the indices input, the element and its value, as onnxruntime does.
// The kernels themselves never read out of bounds: such an index yields
// zeros (a zero row for Gather, a zero element for GatherElements) and
// ScatterND and ScatterElements skip the tuple or element, before the run
// is reported failed.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Movement.h"

namespace tpc::cpu {
namespace {

/// Wraps a kernel whose input `input` holds indices: after each run, finds
/// the first element outside [-dim, dim), dim cycling through `dims` (one
/// bound per tuple component).
class IndexChecked final : public PreparedKernel {
public:
  IndexChecked(std::unique_ptr<PreparedKernel> inner, size_t input,
               DType indexType, int64_t count, std::vector<int64_t> dims)
      : inner_(std::move(inner)), input_(input), indexType_(indexType),
        count_(count), dims_(std::move(dims)) {}
  void run(const void *const *inputs, void *const *outputs,
           const ExecContext &ctx) override {
    inner_->run(inputs, outputs, ctx);
    status_ = Status::ok();
    const void *indices = inputs[input_];
    const size_t depth = dims_.size();
    for (int64_t k = 0; k < count_; ++k) {
      int64_t v = indexType_ == DType::I64
                      ? static_cast<const int64_t *>(indices)[k]
                      : static_cast<const int32_t *>(indices)[k];
      int64_t dim = dims_[size_t(k) % depth];
      if (v < -dim || v >= dim) {
        status_ = Status::outOfRange(
            "indices (input " + std::to_string(input_) + ") element " +
            std::to_string(k) + " is " + std::to_string(v) + ", outside [" +
            std::to_string(-dim) + ", " + std::to_string(dim) + ")");
        return;
      }
    }
  }
  Status runStatus() const override { return status_; }
  void bindConstantInput(size_t index, const void *data) override {
    inner_->bindConstantInput(index, data);
  }

private:
  std::unique_ptr<PreparedKernel> inner_;
  size_t input_;
  DType indexType_;
  int64_t count_;
  std::vector<int64_t> dims_;
  Status status_;
};

std::unique_ptr<PreparedKernel>
indexChecked(std::unique_ptr<PreparedKernel> inner, size_t input,
             const TensorDesc &indices, std::vector<int64_t> dims) {
  return std::make_unique<IndexChecked>(std::move(inner), input, indices.dtype,
                                        indices.numel(), std::move(dims));
}

Status checkGatherOperands(const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out,
                           const Attrs &attrs, int64_t &axis) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 2, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(
      checkDType(in[1], "input 1 (indices)", {DType::I64, DType::I32}));
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  const int64_t rank = static_cast<int64_t>(in[0].shape.size());
  if (rank == 0)
    return Status::error("input 0 (data) must have rank >= 1");
  return normalizeAxis(attrs.getInt("axis", 0), rank, "axis", axis);
}

Status prepareGather(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  int64_t axis;
  TPC_RETURN_IF_ERROR(checkGatherOperands(in, out, attrs, axis));
  const Shape &s = in[0].shape;
  Shape expected(s.begin(), s.begin() + axis);
  expected.insert(expected.end(), in[1].shape.begin(), in[1].shape.end());
  expected.insert(expected.end(), s.begin() + axis + 1, s.end());
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  GatherParams p;
  p.outer = product(s, 0, axis);
  p.axisDim = s[axis];
  p.numIndices = in[1].numel();
  p.innerBytes = product(s, axis + 1, s.size()) *
                 static_cast<int64_t>(dtypeSize(in[0].dtype));
  p.indexType = in[1].dtype;
  kernel = indexChecked(
      makeKernel([p](const void *const *i, void *const *o,
                     const ExecContext &) { gatherKernel(p, i[0], i[1], o[0]); }),
      1, in[1], {s[axis]});
  return Status::ok();
}

Status prepareGatherElements(const std::vector<TensorDesc> &in,
                             const std::vector<TensorDesc> &out,
                             const Attrs &attrs,
                             std::unique_ptr<PreparedKernel> &kernel) {
  int64_t axis;
  TPC_RETURN_IF_ERROR(checkGatherOperands(in, out, attrs, axis));
  const Shape &s = in[0].shape;
  const Shape &is = in[1].shape;
  if (is.size() != s.size())
    return Status::error("indices rank " + std::to_string(is.size()) +
                         " differs from data rank " + std::to_string(s.size()));
  for (size_t d = 0; d < s.size(); ++d)
    if (static_cast<int64_t>(d) != axis && is[d] > s[d])
      return Status::error("indices shape " + fmtShape(is) +
                           " exceeds data shape " + fmtShape(s) + " at dim " +
                           std::to_string(d));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], is));
  GatherElementsParams p;
  p.elemSize = dtypeSize(in[0].dtype);
  p.indexType = in[1].dtype;
  p.axisDim = s[axis];
  std::vector<int64_t> dataStrides = denseStrides(s);
  p.axisStride = dataStrides[axis];
  dataStrides[axis] = 0;
  TPC_RETURN_IF_ERROR(
      makeLayout<2>(is, {denseStrides(is), dataStrides}, p.layout));
  kernel = indexChecked(
      makeKernel([p](const void *const *i, void *const *o,
                     const ExecContext &) {
        gatherElementsKernel(p, i[0], i[1], o[0]);
      }),
      1, in[1], {s[axis]});
  return Status::ok();
}

Status prepareGatherND(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 2, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(
      checkDType(in[1], "input 1 (indices)", {DType::I64, DType::I32}));
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  const Shape &s = in[0].shape, &is = in[1].shape;
  const int64_t b = attrs.getInt("batch_dims", 0);
  const int64_t rank = int64_t(s.size()), irank = int64_t(is.size());
  if (irank < 1 || b < 0 || b >= std::min(rank, irank))
    return Status::error("batch_dims " + std::to_string(b) +
                         " is out of range for data rank " +
                         std::to_string(rank) + " and indices rank " +
                         std::to_string(irank));
  const int64_t depth = is.back();
  if (depth < 1 || b + depth > rank)
    return Status::error("indices' last dimension " + std::to_string(depth) +
                         " does not fit data of rank " + std::to_string(rank) +
                         " with batch_dims " + std::to_string(b));
  for (int64_t d = 0; d < b; ++d)
    if (s[d] != is[d])
      return Status::error("batch dimension " + std::to_string(d) +
                           " differs between data " + fmtShape(s) +
                           " and indices " + fmtShape(is));
  Shape expected(is.begin(), is.end() - 1);
  expected.insert(expected.end(), s.begin() + b + depth, s.end());
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  GatherNDParams p;
  p.batch = product(s, 0, b);
  p.tuples = product(is, b, is.size() - 1);
  p.depth = depth;
  p.dims.assign(s.begin() + b, s.begin() + b + depth);
  p.slicesPerBatch = product(s, b, b + depth);
  p.sliceBytes = product(s, b + depth, s.size()) *
                 static_cast<int64_t>(dtypeSize(in[0].dtype));
  p.indexType = in[1].dtype;
  kernel = indexChecked(
      makeKernel([p](const void *const *i, void *const *o,
                     const ExecContext &) {
        gatherNDKernel(p, i[0], i[1], o[0]);
      }),
      1, in[1], p.dims);
  return Status::ok();
}

Status prepareScatterND(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        std::unique_ptr<PreparedKernel> &kernel) {
  ScatterNDParams p;
  TPC_RETURN_IF_ERROR(makeScatterNDParams(in, out, attrs, p));
  kernel = indexChecked(
      makeKernel([p](const void *const *i, void *const *o,
                     const ExecContext &) {
        scatterNDKernel(p, i[0], i[1], i[2], o[0]);
      }),
      1, in[1], p.dims);
  return Status::ok();
}

Status prepareScatterElements(const std::vector<TensorDesc> &in,
                              const std::vector<TensorDesc> &out,
                              const Attrs &attrs,
                              std::unique_ptr<PreparedKernel> &kernel) {
  ScatterElementsParams p;
  TPC_RETURN_IF_ERROR(makeScatterElementsParams(in, out, attrs, p));
  kernel = indexChecked(
      makeKernel([p](const void *const *i, void *const *o,
                     const ExecContext &) {
        scatterElementsKernel(p, i[0], i[1], i[2], o[0]);
      }),
      1, in[1], {p.axisDim});
  return Status::ok();
}

/// Checks the operands the two scatters have in common: data and output
/// alike, int64 or int32 indices, updates of data's dtype.
Status checkScatterOperands(const std::vector<TensorDesc> &in,
                            const std::vector<TensorDesc> &out) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 3, 3, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(
      checkDType(in[1], "input 1 (indices)", {DType::I64, DType::I32}));
  TPC_RETURN_IF_ERROR(checkSameDType(in[2], "input 2", in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  return checkOutputShape(out[0], in[0].shape);
}

Status parseScatterReduction(const Attrs &attrs, ScatterReduction &r) {
  const std::string s = attrs.getString("reduction", "none");
  static const std::pair<const char *, ScatterReduction> kNames[] = {
      {"none", ScatterReduction::None}, {"add", ScatterReduction::Add},
      {"mul", ScatterReduction::Mul},   {"max", ScatterReduction::Max},
      {"min", ScatterReduction::Min}};
  for (const auto &[name, value] : kNames)
    if (s == name) {
      r = value;
      return Status::ok();
    }
  return Status::error("reduction must be none, add, mul, max or min, not '" +
                       s + "'");
}

/// The reduction attribute, and that data of `d`'s dtype can take it.
Status scatterReduction(const Attrs &attrs, const TensorDesc &d,
                        ScatterReduction &r) {
  TPC_RETURN_IF_ERROR(parseScatterReduction(attrs, r));
  if (r == ScatterReduction::None)
    return Status::ok();
  return checkDType(d, "input 0 (reduced data)",
                    {DType::F32, DType::F64, DType::F16, DType::BF16,
                     DType::I32, DType::I64});
}

} // namespace

Status makeScatterNDParams(const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out,
                           const Attrs &attrs, ScatterNDParams &p) {
  TPC_RETURN_IF_ERROR(checkScatterOperands(in, out));
  const Shape &s = in[0].shape, &is = in[1].shape;
  const int64_t rank = int64_t(s.size());
  if (is.empty() || is.back() > rank)
    return Status::error("indices " + fmtShape(is) +
                         " must have rank >= 1 and a last dim <= data rank " +
                         std::to_string(rank));
  const int64_t depth = is.back();
  Shape want(is.begin(), is.end() - 1);
  want.insert(want.end(), s.begin() + depth, s.end());
  TPC_RETURN_IF_ERROR(checkOutputShape(in[2], want, "input 2 (updates)"));
  TPC_RETURN_IF_ERROR(scatterReduction(attrs, in[0], p.reduction));
  p.dtype = in[0].dtype;
  p.numel = in[0].numel();
  p.tuples = product(is, 0, is.size() - 1);
  p.depth = depth;
  p.dims.assign(s.begin(), s.begin() + depth);
  p.sliceElems = product(s, size_t(depth), s.size());
  p.indexType = in[1].dtype;
  return Status::ok();
}

Status makeScatterElementsParams(const std::vector<TensorDesc> &in,
                                 const std::vector<TensorDesc> &out,
                                 const Attrs &attrs,
                                 ScatterElementsParams &p) {
  TPC_RETURN_IF_ERROR(checkScatterOperands(in, out));
  const Shape &s = in[0].shape, &is = in[1].shape;
  const int64_t rank = int64_t(s.size());
  if (rank == 0)
    return Status::error("input 0 (data) must have rank >= 1");
  if (int64_t(is.size()) != rank)
    return Status::error("indices rank " + std::to_string(is.size()) +
                         " differs from data rank " + std::to_string(rank));
  int64_t axis;
  TPC_RETURN_IF_ERROR(
      normalizeAxis(attrs.getInt("axis", 0), rank, "axis", axis));
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && is[d] > s[d])
      return Status::error("indices shape " + fmtShape(is) +
                           " exceeds data shape " + fmtShape(s) + " at dim " +
                           std::to_string(d));
  TPC_RETURN_IF_ERROR(checkOutputShape(in[2], is, "input 2 (updates)"));
  TPC_RETURN_IF_ERROR(scatterReduction(attrs, in[0], p.reduction));
  p.dtype = in[0].dtype;
  p.numel = in[0].numel();
  p.indexType = in[1].dtype;
  p.lineLength = is[axis];
  p.indexStride = product(is, size_t(axis) + 1, is.size());
  p.axisDim = s[axis];
  std::vector<int64_t> dataStrides = denseStrides(s);
  p.axisStride = dataStrides[axis];
  dataStrides[axis] = 0;
  Shape lines = is;
  lines[axis] = 1;
  return makeLayout<2>(lines, {denseStrides(is), dataStrides}, p.lines);
}

void addGatherKernels(KernelTable &t) {
  t.push_back({"GatherND", "take slices addressed by index tuples",
               prepareGatherND});
  t.push_back(
      {"Gather", "take slices along attr axis by index tensor", prepareGather});
  t.push_back({"GatherElements", "take elements along attr axis by index",
               prepareGatherElements});
  t.push_back({"ScatterND",
               "copy of data with slices written at index tuples (attr "
               "reduction)",
               prepareScatterND});
  t.push_back({"ScatterElements",
               "copy of data with updates written along attr axis at "
               "indices (attr reduction)",
               prepareScatterElements});
}

} // namespace tpc::cpu
