//===- Reduce.cpp - Params of the reduction kernels, for every backend ----===//
#include "kernels/Reduce.h"
#include "kernels/Checks.h"

namespace tpc {

namespace {

const std::initializer_list<DType> kNumeric = {
    DType::F32, DType::F64, DType::I64, DType::I32, DType::F16, DType::BF16};

/// Attribute axis of input 0 `in`, which must have rank >= 1, in [0, rank).
Status axisOf(const TensorDesc &in, const Attrs &attrs, int64_t &axis) {
  const int64_t rank = int64_t(in.shape.size());
  if (rank == 0)
    return Status::error("input 0 must have rank >= 1");
  TPC_RETURN_IF_ERROR(requireInt(attrs, "axis", axis));
  return normalizeAxis(axis, rank, "axis", axis);
}

} // namespace

Status makeReduceParams(ReduceOp op, const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        ReduceParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kNumeric));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  const std::vector<int64_t> *axesAttr = attrs.getInts("axes");
  if (in.size() == 2 && !isAbsent(in[1]) && !axesAttr)
    return Status::error("input axes must be resolved to attribute axes");
  bool keepDims, noop;
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "keepdims", keepDims));
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "noop_with_empty_axes", noop));

  const Shape &s = in[0].shape;
  const int64_t rank = int64_t(s.size());
  std::vector<bool> reduced(size_t(rank), false);
  const std::vector<int64_t> axes =
      axesAttr ? *axesAttr : std::vector<int64_t>();
  for (int64_t a : axes) {
    int64_t axis;
    TPC_RETURN_IF_ERROR(normalizeAxis(a, rank, "axis", axis));
    if (reduced[size_t(axis)])
      return Status::error("axis " + std::to_string(a) + " is repeated");
    reduced[size_t(axis)] = true;
  }
  if (axes.empty() && !noop)
    reduced.assign(size_t(rank), true);

  Shape expected;
  std::vector<int64_t> outStrides(size_t(rank), 0);
  int64_t count = 1, stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (reduced[size_t(d)]) {
      count *= s[size_t(d)];
      if (keepDims)
        expected.insert(expected.begin(), 1);
    } else {
      outStrides[size_t(d)] = stride;
      stride *= s[size_t(d)];
      expected.insert(expected.begin(), s[size_t(d)]);
    }
  }
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  p = ReduceParams();
  p.op = op;
  p.dtype = in[0].dtype;
  p.outNumel = numElements(expected);
  p.count = count;
  return makeLayout<2>(s, {outStrides, denseStrides(s)}, p.layout);
}

Status makeArgReduceParams(bool isMax, const std::vector<TensorDesc> &in,
                           const std::vector<TensorDesc> &out,
                           const Attrs &attrs, ArgReduceParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kNumeric));
  TPC_RETURN_IF_ERROR(checkDType(out[0], "output 0", {DType::I64}));
  const Shape &s = in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(axisOf(in[0], attrs, axis));
  bool keepDims, selectLast;
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "keepdims", keepDims));
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "select_last_index", selectLast));
  if (s[size_t(axis)] == 0)
    return Status::error("cannot take the arg-extremum of empty axis " +
                         std::to_string(axis));
  Shape expected = s;
  if (keepDims)
    expected[size_t(axis)] = 1;
  else
    expected.erase(expected.begin() + axis);
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  p = ArgReduceParams();
  p.dtype = in[0].dtype;
  p.isMax = isMax;
  p.selectLast = selectLast;
  p.outer = product(s, 0, size_t(axis));
  p.axisDim = s[size_t(axis)];
  p.inner = product(s, size_t(axis) + 1, s.size());
  return Status::ok();
}

Status makeTopKParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      TopKParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 1, 2, 2));
  TPC_RETURN_IF_ERROR(
      checkDType(in[0], "input 0",
                 {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32,
                  DType::I64, DType::I8, DType::U8}));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkDType(out[1], "output 1 (indices)", {DType::I64}));
  const Shape &s = in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(axisOf(in[0], attrs, axis));
  // The ONNX K input (opset 10 on) is resolved to this attribute.
  if (!attrs.getInts("k"))
    return Status::error("attribute k is required (the resolved K input)");
  const int64_t k = attrs.getInt("k", 0);
  if (k < 0 || k > s[size_t(axis)])
    return Status::error("k " + std::to_string(k) + " is outside [0, " +
                         std::to_string(s[size_t(axis)]) +
                         "], the size of axis " + std::to_string(axis));
  p = TopKParams();
  bool sorted;
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "largest", p.largest));
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "sorted", sorted));
  Shape expected = s;
  expected[size_t(axis)] = k;
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[1], expected, "output 1"));
  p.dtype = in[0].dtype;
  p.outer = product(s, 0, size_t(axis));
  p.axisDim = s[size_t(axis)];
  p.inner = product(s, size_t(axis) + 1, s.size());
  p.k = k;
  return Status::ok();
}

Status makeCumSumParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, const Attrs &attrs,
                        CumSumParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, 1, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kNumeric));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0"));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], in[0].shape));
  // The ONNX axis is an input; the compiler resolves it to this attribute.
  if (!attrs.getInts("axis"))
    return Status::error("attribute axis is required (the resolved axis "
                         "input)");
  const Shape &s = in[0].shape;
  int64_t axis;
  TPC_RETURN_IF_ERROR(
      normalizeAxis(attrs.getInt("axis", 0), int64_t(s.size()), "axis", axis));
  p = CumSumParams();
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "exclusive", p.exclusive));
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "reverse", p.reverse));
  p.dtype = in[0].dtype;
  p.outer = product(s, 0, size_t(axis));
  p.axisDim = s[size_t(axis)];
  p.inner = product(s, size_t(axis) + 1, s.size());
  return Status::ok();
}

} // namespace tpc
