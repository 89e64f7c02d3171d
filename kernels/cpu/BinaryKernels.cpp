//===- BinaryKernels.cpp - Registry adapters for broadcasting ops ---------===//
//
// prepare() functions for the binary, variadic (Max, Min, Sum, Mean) and
// Where kernels: they check dtypes and the broadcast against the output
// description and bind BinaryParams / WhereParams.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Binary.h"
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/KernelTable.h"

#include <cstring>

namespace tpc::cpu {
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

template <BinaryOp Op>
Status prepareBinary(const std::vector<TensorDesc> &in,
                     const std::vector<TensorDesc> &out, const Attrs &attrs,
                     std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 2, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  BinaryOp op = Op;
  DType outType = in[0].dtype;
  if (isLogical(op)) {
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", {DType::Bool}));
    TPC_RETURN_IF_ERROR(checkDType(in[1], "input 1", {DType::Bool}));
  } else if (isBitwise(op)) {
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kIntegers));
  } else if (op == BinaryOp::Equal) {
    TPC_RETURN_IF_ERROR(checkDType(
        in[0], "input 0",
        {DType::F32, DType::F64, DType::I64, DType::I32, DType::I16, DType::I8,
         DType::U64, DType::U32, DType::U16, DType::U8, DType::F16,
         DType::BF16, DType::Bool}));
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
    int64_t fmod = attrs.getInt("fmod", 0);
    if (fmod != 0 && fmod != 1)
      return Status::error("attribute fmod must be 0 or 1, got " +
                           std::to_string(fmod));
    if (fmod == 1)
      op = BinaryOp::FMod;
  }
  if (op == BinaryOp::ShiftLeft) {
    std::string direction = attrs.getString("direction", "");
    if (direction != "LEFT" && direction != "RIGHT")
      return Status::error("attribute direction must be \"LEFT\" or "
                           "\"RIGHT\", got \"" + direction + "\"");
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

  BinaryParams p;
  TPC_RETURN_IF_ERROR(makeBinaryParams(op, in[0].dtype, in[1].dtype,
                                       in[0].shape, in[1].shape, shape, p));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        binaryKernel(p, i[0], i[1], o[0]);
      });
  return Status::ok();
}

enum class Variadic { Max, Min, Sum, Mean };

/// Folds N inputs into the output: out = op(in0, in1), then out = op(out,
/// in_i); Mean divides at the end. One input is a plain copy.
template <Variadic V>
Status prepareVariadic(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &,
                       std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 1, SIZE_MAX, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  if (V == Variadic::Mean)
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kFloats));
  else
    TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0", kNumeric));
  for (size_t i = 1; i < in.size(); ++i)
    TPC_RETURN_IF_ERROR(
        checkSameDType(in[0], "input 0", in[i], "input " + std::to_string(i)));
  TPC_RETURN_IF_ERROR(checkSameDType(in[0], "input 0", out[0], "output 0"));
  Shape shape;
  TPC_RETURN_IF_ERROR(checkBroadcastOutput(in, out[0], shape));

  BinaryOp op = V == Variadic::Max   ? BinaryOp::Max
                : V == Variadic::Min ? BinaryOp::Min
                                     : BinaryOp::Add;
  std::vector<BinaryParams> steps;
  for (size_t i = 1; i < in.size(); ++i) {
    BinaryParams p;
    const Shape &lhs = i == 1 ? in[0].shape : shape;
    TPC_RETURN_IF_ERROR(makeBinaryParams(op, in[0].dtype, in[0].dtype, lhs,
                                         in[i].shape, shape, p));
    steps.push_back(p);
  }
  DType dtype = in[0].dtype;
  size_t bytes = out[0].bytes();
  int64_t numel = out[0].numel();
  double scale = 1.0 / static_cast<double>(in.size());
  kernel = makeKernel([steps, dtype, bytes, numel, scale](const void *const *i,
                                                          void *const *o,
                                                          const ExecContext &) {
    if (steps.empty()) {
      if (bytes)
        std::memcpy(o[0], i[0], bytes);
      return;
    }
    for (size_t s = 0; s < steps.size(); ++s)
      binaryKernel(steps[s], s == 0 ? i[0] : o[0], i[s + 1], o[0]);
    if (V == Variadic::Mean) {
      visitFloat(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T *y = static_cast<T *>(o[0]);
        for (int64_t k = 0; k < numel; ++k)
          y[k] = static_cast<T>(y[k] * scale);
      });
      // The 16-bit floats hold the sum rounded at each step, as their Add
      // does; the division is rounded once (through round-to-odd float).
      if (dtype == DType::F16) {
        Half *y = static_cast<Half *>(o[0]);
        for (int64_t k = 0; k < numel; ++k)
          y[k] = floatToHalf(doubleToFloatRoundOdd(halfToFloat(y[k]) * scale));
      } else if (dtype == DType::BF16) {
        BFloat16 *y = static_cast<BFloat16 *>(o[0]);
        for (int64_t k = 0; k < numel; ++k)
          y[k] = floatToBFloat16(
              doubleToFloatRoundOdd(bfloat16ToFloat(y[k]) * scale));
      }
    }
  });
  return Status::ok();
}

Status prepareWhere(const std::vector<TensorDesc> &in,
                    const std::vector<TensorDesc> &out, const Attrs &,
                    std::unique_ptr<PreparedKernel> &kernel) {
  TPC_RETURN_IF_ERROR(checkArity(in, out, 3, 3, 1, 1));
  TPC_RETURN_IF_ERROR(checkDescs(in, out));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0 (condition)", {DType::Bool}));
  TPC_RETURN_IF_ERROR(checkSameDType(in[1], "input 1", in[2], "input 2"));
  TPC_RETURN_IF_ERROR(checkSameDType(in[1], "input 1", out[0], "output 0"));
  Shape shape;
  TPC_RETURN_IF_ERROR(checkBroadcastOutput(in, out[0], shape));
  WhereParams p;
  p.elemSize = dtypeSize(in[1].dtype);
  TPC_RETURN_IF_ERROR(
      makeLayout<4>(shape,
                    {denseStrides(shape), broadcastStrides(in[0].shape, shape),
                     broadcastStrides(in[1].shape, shape),
                     broadcastStrides(in[2].shape, shape)},
                    p.layout));
  kernel = makeKernel(
      [p](const void *const *i, void *const *o, const ExecContext &) {
        whereKernel(p, static_cast<const uint8_t *>(i[0]), i[1], i[2], o[0]);
      });
  return Status::ok();
}

} // namespace

void addBinaryKernels(KernelTable &t) {
  const size_t first = t.size();
  t.push_back({"Add", "a + b with broadcasting", prepareBinary<BinaryOp::Add>});
  t.push_back({"Sub", "a - b with broadcasting", prepareBinary<BinaryOp::Sub>});
  t.push_back({"Mul", "a * b with broadcasting", prepareBinary<BinaryOp::Mul>});
  t.push_back({"Div", "a / b with broadcasting; integers truncate",
               prepareBinary<BinaryOp::Div>});
  t.push_back({"Pow", "a ^ b with broadcasting", prepareBinary<BinaryOp::Pow>});
  t.push_back({"Mod", "remainder (attr fmod) with broadcasting",
               prepareBinary<BinaryOp::Mod>});
  t.push_back(
      {"PRelu", "x < 0 ? slope * x : x", prepareBinary<BinaryOp::PRelu>});
  t.push_back({"Equal", "a == b -> bool", prepareBinary<BinaryOp::Equal>});
  t.push_back({"Less", "a < b -> bool", prepareBinary<BinaryOp::Less>});
  t.push_back({"Greater", "a > b -> bool", prepareBinary<BinaryOp::Greater>});
  t.push_back(
      {"LessOrEqual", "a <= b -> bool", prepareBinary<BinaryOp::LessOrEqual>});
  t.push_back({"GreaterOrEqual", "a >= b -> bool",
               prepareBinary<BinaryOp::GreaterOrEqual>});
  t.push_back({"And", "logical and of bools", prepareBinary<BinaryOp::And>});
  t.push_back({"Or", "logical or of bools", prepareBinary<BinaryOp::Or>});
  t.push_back({"Xor", "logical xor of bools", prepareBinary<BinaryOp::Xor>});
  t.push_back({"BitwiseAnd", "a & b of integers",
               prepareBinary<BinaryOp::BitAnd>});
  t.push_back({"BitwiseOr", "a | b of integers",
               prepareBinary<BinaryOp::BitOr>});
  t.push_back({"BitwiseXor", "a ^ b of integers",
               prepareBinary<BinaryOp::BitXor>});
  t.push_back({"BitShift", "a << b or a >> b of integers (attr direction)",
               prepareBinary<BinaryOp::ShiftLeft>});
  // One pass over the output, reading each operand's element at the same
  // index when the operand has the output's shape: in place is safe. Not so
  // for the variadic kernels below, which accumulate into the output.
  for (size_t i = first; i < t.size(); ++i)
    t[i].elementwise = true;
  t.push_back({"Max", "elementwise max of N inputs (NaN propagates)",
               prepareVariadic<Variadic::Max>});
  t.push_back({"Min", "elementwise min of N inputs (NaN propagates)",
               prepareVariadic<Variadic::Min>});
  t.push_back(
      {"Sum", "elementwise sum of N inputs", prepareVariadic<Variadic::Sum>});
  t.push_back({"Mean", "elementwise mean of N inputs",
               prepareVariadic<Variadic::Mean>});
  t.push_back({"Where", "cond ? x : y with broadcasting", prepareWhere});
}

} // namespace tpc::cpu
