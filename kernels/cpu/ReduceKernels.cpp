//===- ReduceKernels.cpp - Adapters of reductions, TopK and CumSum --------===//
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Reduce.h"

namespace tpc::cpu {
namespace {

const std::initializer_list<DType> kNumeric = {
    DType::F32, DType::F64, DType::I64, DType::I32, DType::F16, DType::BF16};

Status checkFlag(const Attrs &attrs, const char *name, int64_t dflt,
                 bool &out) {
  int64_t v = attrs.getInt(name, dflt);
  if (v != 0 && v != 1)
    return Status::error(std::string("attribute ") + name +
                         " must be 0 or 1, got " + std::to_string(v));
  out = v == 1;
  return Status::ok();
}

/// Attribute axis (default `dflt`) of input 0 `in`, which must have rank
/// >= 1, in [0, rank).
Status axisOf(const TensorDesc &in, const Attrs &attrs, int64_t dflt,
              int64_t &axis) {
  const int64_t rank = static_cast<int64_t>(in.shape.size());
  if (rank == 0)
    return Status::error("input 0 must have rank >= 1");
  return normalizeAxis(attrs.getInt("axis", dflt), rank, "axis", axis);
}

/// ONNX Reduce*: attribute axes (possibly empty), keepdims (default 1) and
/// noop_with_empty_axes (default 0). Empty axes reduce everything unless
/// noop_with_empty_axes is set; then the kernel reduces no axis, which maps
/// each element on its own (x for most ops, x*x for SumSquare, |x| for L2).
template <ReduceOp Op>
Status prepareReduce(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kNumeric));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  if (in.size() == 2 && !isAbsent(in[1]) && !attrs.getInts("axes"))
    return Status::error("input axes must be resolved to attribute axes");
  bool keepDims, noop;
  TPC_RETURN_IF_ERROR(checkFlag(attrs, "keepdims", 1, keepDims));
  TPC_RETURN_IF_ERROR(checkFlag(attrs, "noop_with_empty_axes", 0, noop));

  const Shape &s = in[0].shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  std::vector<bool> reduced(rank, false);
  std::vector<int64_t> axes = intsAttr(attrs, "axes");
  for (int64_t a : axes) {
    int64_t axis;
    TPC_RETURN_IF_ERROR(normalizeAxis(a, rank, "axis", axis));
    if (reduced[axis])
      return Status::error("axis " + std::to_string(a) + " is repeated");
    reduced[axis] = true;
  }
  if (axes.empty() && !noop)
    reduced.assign(rank, true);

  Shape expected;
  std::vector<int64_t> outStrides(rank, 0);
  int64_t count = 1, stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (reduced[d]) {
      count *= s[d];
      if (keepDims)
        expected.insert(expected.begin(), 1);
    } else {
      outStrides[d] = stride;
      stride *= s[d];
      expected.insert(expected.begin(), s[d]);
    }
  }
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));

  ReduceParams p;
  p.op = Op;
  p.dtype = in[0].dtype;
  p.outNumel = numElements(expected);
  p.count = count;
  TPC_RETURN_IF_ERROR(
      makeLayout<2>(s, {outStrides, denseStrides(s)}, p.layout));
  kernel =
      makeKernel([p](const void *const *i, void *const *o,
                     const ExecContext &) { reduceKernel(p, i[0], o[0]); });
  return Status::ok();
}

template <bool IsMax>
Status prepareArgReduce(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kNumeric));
  TPC_RETURN_IF_ERROR(checkDType(out[0], "output 0", {DType::I64}));
  const Shape &s = in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(axisOf(in[0], attrs, 0, axis));
  bool keepDims, selectLast;
  TPC_RETURN_IF_ERROR(checkFlag(attrs, "keepdims", 1, keepDims));
  TPC_RETURN_IF_ERROR(checkFlag(attrs, "select_last_index", 0, selectLast));
  if (s[axis] == 0)
    return Status::error("cannot take the arg-extremum of empty axis " +
                         std::to_string(axis));
  Shape expected = s;
  if (keepDims)
    expected[axis] = 1;
  else
    expected.erase(expected.begin() + axis);
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  ArgReduceParams p;
  p.dtype = in[0].dtype;
  p.isMax = IsMax;
  p.selectLast = selectLast;
  p.outer = product(s, 0, axis);
  p.axisDim = s[axis];
  p.inner = product(s, axis + 1, s.size());
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        argReduceKernel(p, i[0], static_cast<int64_t *>(o[0]));
      });
  return Status::ok();
}

Status prepareTopK(const std::vector<TensorDesc> &in,
                   const std::vector<TensorDesc> &out, const Attrs &attrs,
                   std::unique_ptr<PreparedKernel> &kernel) {
  TopKParams p;
  TPC_RETURN_IF_ERROR(makeTopKParams(in, out, attrs, p));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        topKKernel(p, i[0], o[0], static_cast<int64_t *>(o[1]));
      });
  return Status::ok();
}

Status prepareCumSum(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kNumeric));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));
  CumSumParams p;
  TPC_RETURN_IF_ERROR(makeCumSumParams(in[0], attrs, p));
  kernel =
      makeKernel([p](const void *const *i, void *const *o,
                     const ExecContext &) { cumSumKernel(p, i[0], o[0]); });
  return Status::ok();
}

} // namespace

Status makeTopKParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      TopKParams &p) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, 1, 2, 2));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0",
                                 {DType::F32, DType::F64, DType::F16,
                                  DType::BF16, DType::I32, DType::I64,
                                  DType::I8, DType::U8}));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkDType(out[1], "output 1 (indices)", {DType::I64}));
  const Shape &s = in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(axisOf(in[0], attrs, -1, axis));
  // The ONNX K input (opset 10 on) is resolved to this attribute.
  if (!attrs.getInts("k"))
    return Status::error("attribute k is required (the resolved K input)");
  const int64_t k = attrs.getInt("k", 0);
  if (k < 0 || k > s[axis])
    return Status::error("k " + std::to_string(k) + " is outside [0, " +
                         std::to_string(s[axis]) + "], the size of axis " +
                         std::to_string(axis));
  bool sorted;
  TPC_RETURN_IF_ERROR(checkFlag(attrs, "largest", 1, p.largest));
  TPC_RETURN_IF_ERROR(checkFlag(attrs, "sorted", 1, sorted));
  Shape expected = s;
  expected[axis] = k;
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[1], expected, "output 1"));
  p.dtype = in[0].dtype;
  p.outer = product(s, 0, axis);
  p.axisDim = s[axis];
  p.inner = product(s, axis + 1, s.size());
  p.k = k;
  return Status::ok();
}

Status makeCumSumParams(const TensorDesc &in, const Attrs &attrs,
                        CumSumParams &p) {
  // The ONNX axis is an input; the compiler resolves it to this attribute.
  if (!attrs.getInts("axis"))
    return Status::error("attribute axis is required (the resolved axis "
                         "input)");
  const Shape &s = in.shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(normalizeAxis(
      attrs.getInt("axis", 0), static_cast<int64_t>(s.size()), "axis", axis));
  TPC_RETURN_IF_ERROR(checkFlag(attrs, "exclusive", 0, p.exclusive));
  TPC_RETURN_IF_ERROR(checkFlag(attrs, "reverse", 0, p.reverse));
  p.dtype = in.dtype;
  p.outer = product(s, 0, axis);
  p.axisDim = s[axis];
  p.inner = product(s, axis + 1, s.size());
  return Status::ok();
}

void addReduceKernels(KernelTable &t) {
  t.push_back(
      {"ReduceSum", "sum over attr axes", prepareReduce<ReduceOp::Sum>});
  t.push_back(
      {"ReduceMean", "mean over attr axes", prepareReduce<ReduceOp::Mean>});
  t.push_back({"ReduceMax", "max over attr axes (NaN propagates)",
               prepareReduce<ReduceOp::Max>});
  t.push_back({"ReduceMin", "min over attr axes (NaN propagates)",
               prepareReduce<ReduceOp::Min>});
  t.push_back(
      {"ReduceProd", "product over attr axes", prepareReduce<ReduceOp::Prod>});
  t.push_back({"ReduceL2", "sqrt of sum of squares over attr axes",
               prepareReduce<ReduceOp::L2>});
  t.push_back({"ReduceSumSquare", "sum of squares over attr axes",
               prepareReduce<ReduceOp::SumSquare>});
  t.push_back({"ArgMax", "index of the max along attr axis -> i64",
               prepareArgReduce<true>});
  t.push_back({"ArgMin", "index of the min along attr axis -> i64",
               prepareArgReduce<false>});
  t.push_back({"TopK",
               "k largest (attr largest = 0: smallest) along attr axis, "
               "sorted; values and i64 indices",
               prepareTopK});
  t.push_back({"CumSum",
               "running sums along attr axis (attrs exclusive, reverse)",
               prepareCumSum});
}

} // namespace tpc::cpu
