//===- ElementwiseImporters.cpp - Elementwise, GEMM and norm nodes --------===//
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "compiler/Importer/Emitter.h"
#include "compiler/Importer/NodeImporter.h"
#include "mlir/IR/Matchers.h"
#include <cstdio>

using namespace mlir;
using namespace tpc::onnx;

namespace tpc {
namespace {

using Results = SmallVectorImpl<Value>;

/// Unary ops whose result has the operand's type.
template <typename OpTy>
LogicalResult importUnary(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  results.append(c.create(OpTy::getOperationName(), c.input(0).getType(),
                          c.input(0)));
  return success();
}

/// Broadcasting and variadic ops with inferred result types.
template <typename OpTy>
LogicalResult importInferred(NodeContext &c, Results &results) {
  // The op's own definition says how many inputs it takes: a fixed count
  // must all be there and no more (a MatMul with one input used to crash
  // shape inference; extra inputs were ignored); variadic ops need one.
  std::optional<size_t> fixed;
  if (OpTy::template hasTrait<OpTrait::OneOperand>())
    fixed = 1;
  else if (OpTy::template hasTrait<OpTrait::NOperands<2>::Impl>())
    fixed = 2;
  else if (OpTy::template hasTrait<OpTrait::NOperands<3>::Impl>())
    fixed = 3;
  if (failed(c.requireInputs(fixed.value_or(1))))
    return failure();
  if (fixed && c.inputs.size() > *fixed)
    return c.error() << "has " << c.inputs.size() << " inputs; "
                     << c.node.op_type() << " takes " << *fixed;
  return pushAll(c.createInferred<OpTy>(c.givenInputs(c.inputs.size())),
                 results);
}

LogicalResult importMod(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  return pushAll(
      c.createInferred<ModOp>({c.input(0), c.input(1)}, {c.intAttr("fmod", 0)}),
      results);
}

/// BitShift: the direction, an attribute the node must set.
LogicalResult importBitShift(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  std::string direction = c.attrString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return c.error() << "direction must be \"LEFT\" or \"RIGHT\", not \""
                     << direction << "\"";
  return pushAll(c.createInferred<BitShiftOp>(
                     {c.input(0), c.input(1)},
                     {c.named("direction", c.b.getStringAttr(direction))}),
                 results);
}

/// BitwiseNot: x ^ all ones.
LogicalResult importBitwiseNot(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  auto elem = dyn_cast<IntegerType>(c.inputType(0).getElementType());
  if (!elem || elem.getWidth() == 1)
    return c.error() << "takes integer tensors, not "
                     << c.inputType(0).getElementType();
  auto t = RankedTensorType::get({}, elem);
  Value ones = c.b.create<ConstantOp>(
      c.loc, t,
      DenseElementsAttr::get(t, APInt::getAllOnes(elem.getWidth())));
  return pushAll(c.createInferred<BitwiseXorOp>({c.input(0), ones}), results);
}

/// A unary op whose attributes are the ONNX node's of the same names: each
/// one the node sets is copied (floats as f32, strings, ints as i64), and
/// each one it leaves out takes the op's ODS default, the only place a
/// default is written.
template <typename OpTy>
LogicalResult importAttrUnary(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  SmallVector<NamedAttribute> attrs;
  for (StringRef name : OpTy::getAttributeNames()) {
    const ::onnx::AttributeProto *a = c.attr(name);
    if (!a)
      continue;
    switch (a->type()) {
    case ::onnx::AttributeProto::FLOAT:
      attrs.push_back(c.named(name, c.b.getF32FloatAttr(a->f())));
      break;
    case ::onnx::AttributeProto::STRING:
      attrs.push_back(c.named(name, c.b.getStringAttr(a->s())));
      break;
    case ::onnx::AttributeProto::INT:
      attrs.push_back(c.named(name, c.b.getI64IntegerAttr(a->i())));
      break;
    default:
      return c.error() << "attribute " << name << " has an unsupported type";
    }
  }
  results.append(c.create(OpTy::getOperationName(), c.input(0).getType(),
                          c.input(0), attrs));
  return success();
}

LogicalResult importGelu(NodeContext &c, Results &results) {
  if (const ::onnx::AttributeProto *a = c.attr("approximate"))
    if (a->s() != "none" && a->s() != "tanh")
      return c.error() << "approximate must be 'none' or 'tanh', not '"
                       << a->s() << "'";
  return importAttrUnary<GeluOp>(c, results);
}

template <typename OpTy>
LogicalResult importSoftmax(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  // Before opset 13 (versions 1 and 11) the input is coerced to 2-D at
  // `axis` (default 1) and normalized over the flattened [axis, rank) dims:
  // a reshape to [outer, inner], opset 13's op on the last axis, and a
  // reshape back.
  bool coerced = c.opset < 13;
  RankedTensorType in = c.inputType(0);
  int64_t axis = c.attrInt("axis", coerced ? 1 : -1);
  FailureOr<int64_t> normalized = normalizeAxis(axis, in.getRank());
  if (failed(normalized))
    return c.error() << "axis " << axis << " is out of range for rank "
                     << in.getRank();
  int64_t trailing = 1;
  for (int64_t i = *normalized + 1; i < in.getRank(); ++i)
    trailing *= in.getDimSize(i);
  if (!coerced || trailing == 1) {
    results.append(c.create(OpTy::getOperationName(), in, c.input(0),
                            {c.named("axis", c.b.getI64IntegerAttr(axis))}));
    return success();
  }
  int64_t inner = in.getDimSize(*normalized) * trailing;
  auto flat = RankedTensorType::get(
      {in.getNumElements() / std::max<int64_t>(inner, 1), inner},
                                    in.getElementType());
  Value v = c.create(ReshapeOp::getOperationName(), flat, c.input(0))[0];
  v = c.create(OpTy::getOperationName(), flat, v,
               {c.named("axis", c.b.getI64IntegerAttr(1))})[0];
  results.append(c.create(ReshapeOp::getOperationName(), in, v));
  return success();
}

LogicalResult castTo(NodeContext &c, Value v, Type elem, Results &results) {
  std::optional<int64_t> to = onnxTypeNumber(elem);
  if (!to)
    return c.error() << "unsupported target type " << elem;
  auto type = RankedTensorType::get(cast<RankedTensorType>(v.getType()).getShape(),
                                    elem);
  SmallVector<NamedAttribute> attrs{c.named("to", c.b.getI64IntegerAttr(*to))};
  // `saturate` (opset 19) only changes float8 targets; 1 is the default.
  int64_t saturate = c.attrInt("saturate", 1);
  if (saturate != 0 && saturate != 1)
    return c.error() << "saturate must be 0 or 1, not " << saturate;
  if (saturate == 0 && isa<FloatType>(elem) && elem.getIntOrFloatBitWidth() == 8)
    attrs.push_back(c.named("saturate", c.b.getI64IntegerAttr(0)));
  results.append(c.create(CastOp::getOperationName(), type, v, attrs));
  return success();
}

/// The element type that the `to` attribute of a node with one input names
/// (Cast, BitCast).
FailureOr<Type> targetElementType(NodeContext &c) {
  if (failed(c.requireInputs(1)))
    return failure();
  int64_t to = c.attrInt("to", 0);
  Type elem = onnxElementType(c.b.getContext(), to);
  if (!elem)
    return c.error() << "unsupported target data type " << onnxTypeName(to);
  return elem;
}

LogicalResult importCast(NodeContext &c, Results &results) {
  FailureOr<Type> elem = targetElementType(c);
  if (failed(elem))
    return failure();
  return castTo(c, c.input(0), *elem, results);
}

/// BitCast (opset 26): the same bits as a type of the same width.
LogicalResult importBitCast(NodeContext &c, Results &results) {
  FailureOr<Type> target = targetElementType(c);
  if (failed(target))
    return failure();
  Type elem = *target, from = c.inputType(0).getElementType();
  // bool is a byte, as ONNX counts it.
  auto width = [](Type t) { return t.isInteger(1) ? 8u : t.getIntOrFloatBitWidth(); };
  if (width(from) != width(elem))
    return c.error() << "cannot reinterpret " << from << " as " << elem
                     << ": the bit widths differ";
  auto type = RankedTensorType::get(c.inputType(0).getShape(), elem);
  results.append(c.create(BitCastOp::getOperationName(), type, c.input(0),
                          {c.intAttr("to", 0)}));
  return success();
}

LogicalResult importCastLike(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  return castTo(c, c.input(0), c.inputType(1).getElementType(), results);
}

LogicalResult importGemm(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  return pushAll(c.createInferred<GemmOp>(
                     c.givenInputs(3),
                     {c.floatAttr("alpha", 1.0f), c.floatAttr("beta", 1.0f),
                      c.intAttr("transA", 0), c.intAttr("transB", 0)}),
                 results);
}

LogicalResult importLayerNorm(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  int64_t axis = c.attrInt("axis", -1);
  float epsilon = c.attrFloat("epsilon", 1e-5f);
  if (failed(pushAll(c.createInferred<LayerNormalizationOp>(
                         c.givenInputs(3),
                         {c.named("axis", c.b.getI64IntegerAttr(axis)),
                          c.named("epsilon", c.b.getF32FloatAttr(epsilon))}),
                     results)))
    return failure();
  bool wantStats = false;
  for (int i = 1; i < c.node.output_size(); ++i)
    wantStats |= !c.node.output(i).empty();
  if (!wantStats)
    return success();
  if (c.attrInt("stash_type", 1) != 1)
    return c.error() << "the Mean and InvStdDev outputs are supported with "
                        "stash_type 1 (float), not "
                     << c.attrInt("stash_type", 1);
  FailureOr<int64_t> normalized = normalizeAxis(axis, c.inputType(0).getRank());
  if (failed(normalized))
    return c.error() << "axis " << axis << " out of range";
  // Mean and InvStdDev: the statistics over [axis, rank) in float
  // (stash_type 1), dims kept.
  Emitter e(c);
  Value invStd;
  Value mean = e.layerNormStats(c.input(0), *normalized, epsilon, invStd);
  return e.finish({mean, invStd}, results);
}

LogicalResult importDropout(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  // Dropout is the identity, with an all-true mask, unless training_mode
  // (an input from opset 12 on) is true and the ratio is not 0: that draws
  // random numbers, which an inference engine does not.
  if (Value mode = c.input(2)) {
    DenseElementsAttr attr;
    if (!matchPattern(mode, m_Constant(&attr)) || attr.getNumElements() != 1)
      return c.error() << "the 'training_mode' input must be a compile-time "
                          "constant (tpc runs Dropout for inference)";
    if (*attr.getValues<bool>().begin()) {
      double ratio = 0.5;
      if (Value r = c.input(1)) {
        DenseElementsAttr ratioAttr;
        if (!matchPattern(r, m_Constant(&ratioAttr)) ||
            ratioAttr.getNumElements() != 1)
          return c.error() << "training_mode is true and the 'ratio' input "
                              "is not a constant";
        ratio = (*ratioAttr.getValues<APFloat>().begin()).convertToDouble();
      }
      char text[32];
      std::snprintf(text, sizeof(text), "%g", ratio);
      if (ratio != 0)
        return c.error() << "training_mode is true with ratio " << text
                         << ": random dropout is not supported (tpc runs "
                            "Dropout for inference)";
    }
  }
  results.push_back(c.input(0));
  if (c.node.output_size() > 1 && !c.node.output(1).empty()) {
    auto maskType = RankedTensorType::get(c.inputType(0).getShape(),
                                          c.b.getI1Type());
    auto mask = DenseElementsAttr::get(maskType, true);
    results.push_back(c.b.create<ConstantOp>(c.loc, maskType, mask));
  }
  return success();
}

LogicalResult importIdentity(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  results.push_back(c.input(0));
  return success();
}

} // namespace

void addElementwiseImporters(std::vector<OpTableEntry> &t) {
#define UNARY(NAME) t.push_back({#NAME, 13, importUnary<NAME##Op>, "onnx." #NAME});
  UNARY(Sqrt)
  UNARY(Reciprocal)
  UNARY(Neg) UNARY(Abs) UNARY(Exp) UNARY(Log) UNARY(Erf) UNARY(Tanh) UNARY(
      Sigmoid) UNARY(Relu) UNARY(Floor) UNARY(Ceil) UNARY(Sign)
#undef UNARY
  // The versions in force at opsets 11 and 12; 13 only added bfloat16.
#define UNARY_OLD(NAME, SINCE)                                                 \
  t.push_back({#NAME, SINCE, importUnary<NAME##Op>, "onnx." #NAME});
      UNARY_OLD(Sqrt, 6) UNARY_OLD(Reciprocal, 6) UNARY_OLD(Neg, 6) UNARY_OLD(
          Abs, 6) UNARY_OLD(Exp, 6) UNARY_OLD(Log,
                                              6) UNARY_OLD(Erf,
                                                           9) UNARY_OLD(Tanh, 6)
          UNARY_OLD(Sigmoid, 6) UNARY_OLD(Relu, 6) UNARY_OLD(Cos, 7) UNARY_OLD(
              Sin, 7) UNARY_OLD(Floor, 6) UNARY_OLD(Ceil, 6) UNARY_OLD(Sign, 9)
              UNARY_OLD(Softplus, 1) UNARY_OLD(Not, 1) UNARY_OLD(
                  Tan, 7) UNARY_OLD(Asin, 7) UNARY_OLD(Acos, 7) UNARY_OLD(Atan,
                                                                          7)
                  UNARY_OLD(Sinh, 9) UNARY_OLD(Cosh, 9) UNARY_OLD(
                      Asinh, 9) UNARY_OLD(Acosh,
                                          9) UNARY_OLD(Atanh,
                                                       9) UNARY_OLD(Round, 11)
#undef UNARY_OLD
#define INFERRED(NAME, SINCE)                                                  \
  t.push_back({#NAME, SINCE, importInferred<NAME##Op>, "onnx." #NAME});
                      INFERRED(Add, 13) INFERRED(Add, 14) INFERRED(
                          Sub, 13) INFERRED(Sub, 14) INFERRED(Mul, 13)
                          INFERRED(Mul, 14) INFERRED(Div, 13) INFERRED(
                              Div, 14) INFERRED(Pow, 13) INFERRED(Pow, 15)
                              INFERRED(PRelu, 16) INFERRED(Equal, 13) INFERRED(
                                  Equal, 19) INFERRED(Less, 13)
                                  INFERRED(Greater, 13) INFERRED(
                                      LessOrEqual, 12) INFERRED(LessOrEqual, 16)
                                      INFERRED(GreaterOrEqual, 12) INFERRED(
                                          GreaterOrEqual,
                                          16) INFERRED(And, 7) INFERRED(Or, 7)
                                          INFERRED(Xor, 7) INFERRED(Max, 13)
                                              INFERRED(Min, 13) INFERRED(
                                                  Sum, 13) INFERRED(Mean, 13)
                                                  INFERRED(Where, 9) INFERRED(
                                                      Where,
                                                      16) INFERRED(MatMul, 13)
                                                      INFERRED(IsNaN, 13)
                                                          INFERRED(IsNaN, 20)
      // Opsets 11 and 12: the same meaning, fewer types (Pow-7 takes one type
      // for base and exponent, Max-8 and Min-8 no integers).
      INFERRED(Add, 7) INFERRED(Sub, 7) INFERRED(Mul, 7) INFERRED(Div, 7)
          INFERRED(Pow, 7) INFERRED(Pow, 12) INFERRED(PRelu, 9)
              INFERRED(Equal, 11) INFERRED(Less, 9) INFERRED(Greater, 9)
                  INFERRED(Max, 8) INFERRED(Max, 12) INFERRED(Min, 8)
                      INFERRED(Min, 12) INFERRED(Sum, 8) INFERRED(Mean, 8)
                          INFERRED(MatMul, 9) INFERRED(IsNaN, 9)
#undef INFERRED
      // The versions of these ops that tpc imports, each alike. Mod-28 spelled
      // out its special cases; Elu, HardSigmoid and Dropout-22 added
      // bfloat16; Cast, CastLike and Identity 23 to 25 and Cast-28 added
      // element types tpc does not take (4-bit, float8e8m0 and 2-bit; Cast-24's
      // round_mode only applies to float8e8m0).
      addVersions(t, "Mod", {10, 13, 28}, importMod, "onnx.Mod");
  addVersions(t, "LeakyRelu", {6, 16}, importAttrUnary<LeakyReluOp>,
              "onnx.LeakyRelu");
  addVersions(t, "Elu", {6, 22}, importAttrUnary<EluOp>, "onnx.Elu");
  addVersions(t, "HardSigmoid", {6, 22}, importAttrUnary<HardSigmoidOp>,
              "onnx.HardSigmoid");
  addVersions(t, "Gelu", {20}, importGelu, "onnx.Gelu");
  // Versions 1 and 11: the input is coerced to 2-D at `axis`
  // (importSoftmax).
  addVersions(t, "Softmax", {1, 11, 13}, importSoftmax<SoftmaxOp>,
              "onnx.Softmax");
  addVersions(t, "LogSoftmax", {1, 11, 13}, importSoftmax<LogSoftmaxOp>,
              "onnx.LogSoftmax");
  addVersions(t, "Cast", {6, 9, 13, 19, 21, 23, 24, 25, 28}, importCast,
              "onnx.Cast");
  addVersions(t, "CastLike", {15, 19, 21, 23, 24, 25}, importCastLike,
              "onnx.Cast");
  addVersions(t, "Gemm", {7, 9, 11, 13}, importGemm, "onnx.Gemm");
  addVersions(t, "LayerNormalization", {17}, importLayerNorm,
              "onnx.LayerNormalization");
  // Dropout-7 and -10 (ratio attribute) and -12 (ratio and training_mode
  // inputs) are the identity at inference, like 13.
  addVersions(t, "Dropout", {7, 10, 12, 13, 22}, importDropout,
              "its input (inference)");
  addVersions(t, "Identity", {1, 13, 14, 16, 19, 21, 23, 24, 25},
              importIdentity, "its input");
  addVersions(t, "BitCast", {26}, importBitCast, "onnx.BitCast");
  addVersions(t, "BitwiseAnd", {18}, importInferred<BitwiseAndOp>,
              "onnx.BitwiseAnd");
  addVersions(t, "BitwiseOr", {18}, importInferred<BitwiseOrOp>,
              "onnx.BitwiseOr");
  addVersions(t, "BitwiseXor", {18}, importInferred<BitwiseXorOp>,
              "onnx.BitwiseXor");
  addVersions(t, "BitwiseNot", {18}, importBitwiseNot,
              "onnx.BitwiseXor with all ones");
  // BitShift-28 added the signed types (arithmetic right shifts).
  addVersions(t, "BitShift", {11, 28}, importBitShift, "onnx.BitShift");
  // Opset 22 added bfloat16 to these.
#define UNARY22(NAME)                                                          \
  t.push_back({#NAME, 22, importUnary<NAME##Op>, "onnx." #NAME});
  UNARY22(Cos)
  UNARY22(Sin)
  UNARY22(Softplus) UNARY22(Tan) UNARY22(Asin) UNARY22(Acos) UNARY22(Atan)
      UNARY22(Sinh) UNARY22(Cosh) UNARY22(Asinh) UNARY22(Acosh) UNARY22(Atanh)
          UNARY22(Round)
#undef UNARY22
              t.push_back({"Relu", 14, importUnary<ReluOp>, "onnx.Relu"});
  // The versions in force at opsets 7 to 10. They mean what the next
  // version means on the types they take: Max-6, Min-6, Sum-6 and Mean-6
  // do not broadcast (a subset).
#define INFERRED_OLD(NAME, SINCE)                                              \
  t.push_back({#NAME, SINCE, importInferred<NAME##Op>, "onnx." #NAME});
  INFERRED_OLD(Equal, 7) INFERRED_OLD(Greater, 7) INFERRED_OLD(Less, 7)
  INFERRED_OLD(MatMul, 1) INFERRED_OLD(Max, 6) INFERRED_OLD(Min, 6)
  INFERRED_OLD(Sum, 6) INFERRED_OLD(Mean, 6) INFERRED_OLD(PRelu, 7)
#undef INFERRED_OLD
}

} // namespace tpc
