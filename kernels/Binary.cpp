//===- Binary.cpp - Params of the broadcasting kernels, every backend -----===//
#include "kernels/Binary.h"
#include "kernels/Checks.h"

namespace tpc {

bool isComparison(BinaryOp op) {
  switch (op) {
  case BinaryOp::Equal:
  case BinaryOp::Less:
  case BinaryOp::Greater:
  case BinaryOp::LessOrEqual:
  case BinaryOp::GreaterOrEqual:
    return true;
  default:
    return false;
  }
}

bool isLogical(BinaryOp op) {
  return op == BinaryOp::And || op == BinaryOp::Or || op == BinaryOp::Xor;
}

bool isBitwise(BinaryOp op) {
  return op == BinaryOp::BitAnd || op == BinaryOp::BitOr ||
         op == BinaryOp::BitXor || op == BinaryOp::ShiftLeft ||
         op == BinaryOp::ShiftRight;
}

Status makeBinaryParams(BinaryOp op, DType lhsType, DType rhsType,
                        const Shape &lhsShape, const Shape &rhsShape,
                        const Shape &outShape, BinaryParams &p) {
  p.op = op;
  p.lhsType = lhsType;
  p.rhsType = rhsType;
  return makeLayout<3>(outShape,
                       {denseStrides(outShape),
                        broadcastStrides(lhsShape, outShape),
                        broadcastStrides(rhsShape, outShape)},
                       p.layout);
}

namespace {

const std::initializer_list<DType> kNumeric = {
    DType::F32, DType::F64, DType::I64, DType::I32, DType::I16, DType::I8,
    DType::U64, DType::U32, DType::U16, DType::U8,  DType::F16, DType::BF16};
const std::initializer_list<DType> kFloats = {DType::F32, DType::F64,
                                              DType::F16, DType::BF16};
const std::initializer_list<DType> kIntegers = {
    DType::I64, DType::I32, DType::I16, DType::I8,
    DType::U64, DType::U32, DType::U16, DType::U8};

Status checkBroadcastOutput(const std::vector<TensorDesc> &inputs,
                            const TensorDesc &out, Shape &shape) {
  std::vector<Shape> shapes;
  for (const TensorDesc &d : inputs)
    shapes.push_back(d.shape);
  TPC_RETURN_IF_ERROR(broadcastShapes(shapes, shape));
  return checkOutputShape(out, shape);
}

} // namespace

Status makeBinaryOpParams(BinaryOp op, const std::vector<TensorDesc> &in,
                          const std::vector<TensorDesc> &out,
                          const Attrs &attrs, BinaryParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 2, 2, 1, 1));
  DType outType = in[0].dtype;
  if (isLogical(op)) {
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", {DType::Bool}));
    TPC_RETURN_IF_ERROR(checkDType(in[1], "input 1", {DType::Bool}));
  } else if (isBitwise(op)) {
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kIntegers));
  } else if (op == BinaryOp::Equal) {
    TPC_RETURN_IF_ERROR(
        checkDType(in[0], "input 0",
                   {DType::F32, DType::F64, DType::I64, DType::I32, DType::I16,
                    DType::I8, DType::U64, DType::U32, DType::U16, DType::U8,
                    DType::F16, DType::BF16, DType::Bool}));
  } else {
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kNumeric));
  }
  if (op == BinaryOp::Pow)
    TPC_RETURN_IF_ERROR(checkDType(in[1], "input 1 (exponent)", kNumeric));
  else
    TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", in[1], "input 1"));
  if (isComparison(op) || isLogical(op))
    outType = DType::Bool;
  if (out[0].dtype != outType)
    return Status::error(std::string("output 0 has dtype ") +
                         dtypeName(out[0].dtype) + ", expected " +
                         dtypeName(outType));

  if (op == BinaryOp::Mod) {
    bool fmod;
    TPC_RETURN_IF_ERROR(requireFlag(attrs, "fmod", fmod));
    if (fmod)
      op = BinaryOp::FMod;
  }
  if (op == BinaryOp::ShiftLeft) {
    std::string direction;
    TPC_RETURN_IF_ERROR(requireString(attrs, "direction", direction));
    if (direction != "LEFT" && direction != "RIGHT")
      return Status::error("attribute direction must be \"LEFT\" or "
                           "\"RIGHT\", got \"" +
                           direction + "\"");
    if (direction == "RIGHT")
      op = BinaryOp::ShiftRight;
  }

  Shape shape;
  if (op == BinaryOp::PRelu) {
    // The slope broadcasts to X, never the other way round.
    if (!broadcastsTo(in[1].shape, in[0].shape))
      return Status::error("slope shape " + fmtShape(in[1].shape) +
                           " does not broadcast to X shape " +
                           fmtShape(in[0].shape));
    shape = in[0].shape;
    TPC_RETURN_IF_ERROR(checkOutputShape(out[0], shape));
  } else {
    TPC_RETURN_IF_ERROR(checkBroadcastOutput(in, out[0], shape));
  }
  p = BinaryParams();
  return makeBinaryParams(op, in[0].dtype, in[1].dtype, in[0].shape,
                          in[1].shape, shape, p);
}

Status makeVariadicParams(VariadicOp op, const std::vector<TensorDesc> &in,
                          const std::vector<TensorDesc> &out,
                          VariadicParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 1, SIZE_MAX, 1, 1));
  if (op == VariadicOp::Mean)
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kFloats));
  else
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kNumeric));
  for (size_t i = 1; i < in.size(); ++i)
    TPC_RETURN_IF_ERROR(
        checkSameDType(in[0], "input 0", in[i], "input " + std::to_string(i)));
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  Shape shape;
  TPC_RETURN_IF_ERROR(checkBroadcastOutput(in, out[0], shape));
  const BinaryOp step = op == VariadicOp::Max   ? BinaryOp::Max
                        : op == VariadicOp::Min ? BinaryOp::Min
                                                : BinaryOp::Add;
  p = VariadicParams();
  p.op = op;
  p.dtype = in[0].dtype;
  for (size_t i = 1; i < in.size(); ++i) {
    BinaryParams b;
    const Shape &lhs = i == 1 ? in[0].shape : shape;
    TPC_RETURN_IF_ERROR(makeBinaryParams(step, in[0].dtype, in[0].dtype, lhs,
                                         in[i].shape, shape, b));
    p.steps.push_back(b);
  }
  p.bytes = out[0].bytes();
  p.numel = out[0].numel();
  p.scale = 1.0 / double(in.size());
  return Status::ok();
}

Status makeWhereParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, WhereParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 3, 3, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0 (condition)", {DType::Bool}));
  TPC_RETURN_IF_ERROR(checkSameDType(in[1], "input 1", in[2], "input 2"));
  TPC_RETURN_IF_ERROR(checkSameDType(in[1], "input 1", out[0], "output 0"));
  Shape shape;
  TPC_RETURN_IF_ERROR(checkBroadcastOutput(in, out[0], shape));
  p = WhereParams();
  p.elemSize = dtypeSize(in[1].dtype);
  return makeLayout<4>(shape,
                       {denseStrides(shape),
                        broadcastStrides(in[0].shape, shape),
                        broadcastStrides(in[1].shape, shape),
                        broadcastStrides(in[2].shape, shape)},
                       p.layout);
}

} // namespace tpc
