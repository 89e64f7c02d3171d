//===- ElementwiseCases.cpp - Parity cases of the elementwise kernels -----===//
//
// Shapes are odd on purpose: a contiguous run whose length is not a
// multiple of the vector width (vector body + scalar tail), broadcasts on
// leading, middle and trailing dims, scalars, and misaligned operands that
// must leave the 16-byte vector paths.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"
#include "kernels/Unary.h"

#include <cmath>
#include <limits>

namespace tpc::cuda::test {
namespace {

using Cases = std::vector<ParityCase>;

const char *tag(DType t) { return dtypeName(t); }


/// Same-shape (vector path + tail), broadcast and scalar variants of one
/// binary op on dtype t with inputs drawn from [lo, hi].
void binaryVariants(Cases &v, const std::string &op, DType t, double lo,
                    double hi, Attrs a = {}, DType out = DType::F32,
                    bool sameOut = true, const std::string &variant = "") {
  const DType o = sameOut ? t : out;
  const std::string n = tag(t) + variant;
  addCase(v, n + "_same", op, {rnd(t, {37, 29}, lo, hi), rnd(t, {37, 29}, lo, hi)},
      {{o, {37, 29}}}, a);
  addCase(v, n + "_bcast", op,
      {rnd(t, {3, 1, 5, 7}, lo, hi), rnd(t, {4, 5, 1}, lo, hi)},
      {{o, {3, 4, 5, 7}}}, a);
  addCase(v, n + "_scalar", op, {rnd(t, {}, lo, hi), rnd(t, {6, 11}, lo, hi)},
      {{o, {6, 11}}}, a);
  addCase(v, n + "_misaligned", op,
      {rnd(t, {1001}, lo, hi), rnd(t, {1001}, lo, hi)}, {{o, {1001}}}, a, 1,
      /*misalign=*/1);
}

/// Values that are small integers, stored as floats, so that comparisons
/// meet equal elements.
Tensor intValued(DType t, Shape s) {
  Tensor x = rnd(DType::I32, s, -3, 3);
  Tensor y(t, s);
  for (int64_t i = 0; i < x.numel(); ++i)
    y.set(i, x.at(i));
  return y;
}

void addBinary(Cases &v) {
  const DType halfAndFull[] = {DType::F32, DType::F16, DType::BF16};
  for (const char *op : {"Add", "Sub", "Mul", "Div"}) {
    for (DType t : halfAndFull)
      binaryVariants(v, op, t, -2, 2);
    binaryVariants(v, op, DType::I32, -40, 40);
    binaryVariants(v, op, DType::I64, -40, 40);
  }
  binaryVariants(v, "Add", DType::F64, -2, 2);
  for (DType t : halfAndFull) {
    binaryVariants(v, "Pow", t, 0.25, 2);
    binaryVariants(v, "Mod", t, -5, 5, intAttr("fmod", 1));
    // fmod=0: the sign of B (Mod-28).
    binaryVariants(v, "Mod", t, -5, 5, {}, DType::F32, true, "_floor");
  }
  binaryVariants(v, "Pow", DType::I64, 0, 5);
  addCase(v, "f32_int_exponent", "Pow",
      {rnd(DType::F32, {5, 9}, -2, 2), rnd(DType::I64, {9}, -3, 3)},
      {{DType::F32, {5, 9}}});
  binaryVariants(v, "Mod", DType::I32, -9, 9);
  for (const char *op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    binaryVariants(v, op, DType::I32, -99, 99);
    binaryVariants(v, op, DType::I64, -99, 99);
  }
  binaryVariants(v, "BitShift", DType::I32, -40, 40,
                 [] { Attrs a; a.setString("direction", "LEFT"); return a; }());
  binaryVariants(v, "BitShift", DType::I64, -70, 70,
                 [] { Attrs a; a.setString("direction", "RIGHT"); return a; }(),
                 DType::F32, true, "_right");
  binaryVariants(v, "Mod", DType::I64, -9, 9, intAttr("fmod", 1));
  for (DType t : halfAndFull) {
    addCase(v, std::string(tag(t)) + "_channel", "PRelu",
        {rnd(t, {2, 3, 9}), rnd(t, {9}, 0, 1)}, {{t, {2, 3, 9}}});
    addCase(v, std::string(tag(t)) + "_same", "PRelu",
        {rnd(t, {41}), rnd(t, {41}, 0, 1)}, {{t, {41}}});
  }
  for (const char *op :
       {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
      addCase(v, std::string(tag(t)) + "_same", op,
          {intValued(t, {3, 67}), intValued(t, {3, 67})},
          {{DType::Bool, {3, 67}}});
      addCase(v, std::string(tag(t)) + "_bcast", op,
          {intValued(t, {4, 1, 6}), intValued(t, {5, 1})},
          {{DType::Bool, {4, 5, 6}}});
    }
    for (DType t : {DType::I32, DType::I64})
      addCase(v, std::string(tag(t)) + "_bcast", op,
          {rnd(t, {4, 1, 6}, -3, 3), rnd(t, {5, 1}, -3, 3)},
          {{DType::Bool, {4, 5, 6}}});
  }
  addCase(v, "bool", "Equal",
      {rnd(DType::Bool, {7, 5}), rnd(DType::Bool, {5})},
      {{DType::Bool, {7, 5}}});
  for (const char *op : {"And", "Or", "Xor"}) {
    addCase(v, "same", op, {rnd(DType::Bool, {333}), rnd(DType::Bool, {333})},
        {{DType::Bool, {333}}});
    addCase(v, "bcast", op, {rnd(DType::Bool, {3, 1, 4}), rnd(DType::Bool, {5, 1})},
        {{DType::Bool, {3, 5, 4}}});
  }
}

void addVariadic(Cases &v) {
  for (const char *op : {"Max", "Min", "Sum", "Mean"}) {
    for (DType t : {DType::F32, DType::F16, DType::BF16}) {
      addCase(v, std::string(tag(t)) + "_three", op,
          {rnd(t, {2, 3, 5}), rnd(t, {3, 1}), rnd(t, {5})},
          {{t, {2, 3, 5}}});
      addCase(v, std::string(tag(t)) + "_one", op, {rnd(t, {4, 7})},
          {{t, {4, 7}}});
    }
  }
  for (const char *op : {"Max", "Min", "Sum"})
    addCase(v, "i64_two", op,
        {rnd(DType::I64, {6, 1}, -50, 50), rnd(DType::I64, {6, 9}, -50, 50)},
        {{DType::I64, {6, 9}}});
  // NaN propagates through Max and Min.
  Tensor withNan = rnd(DType::F32, {16});
  withNan.set(3, std::nan(""));
  addCase(v, "f32_nan", "Max", {withNan, rnd(DType::F32, {16})},
      {{DType::F32, {16}}});
  addCase(v, "f32_nan", "Min", {rnd(DType::F32, {16}), withNan},
      {{DType::F32, {16}}});
}

void addWhere(Cases &v) {
  for (DType t : {DType::F32, DType::F16, DType::I64, DType::Bool, DType::F64})
    addCase(v, tag(t), "Where",
        {rnd(DType::Bool, {3, 1, 5}), rnd(t, {4, 5}), rnd(t, {3, 4, 1})},
        {{t, {3, 4, 5}}});
  addCase(v, "f32_same", "Where",
      {rnd(DType::Bool, {257}), rnd(DType::F32, {257}),
       rnd(DType::F32, {257})},
      {{DType::F32, {257}}});
}

/// Inputs of `name` inside its domain: positive for the ops undefined or
/// steep below zero, [-4, 4] otherwise.
std::pair<double, double> unaryRange(const std::string &name) {
  if (name == "Sqrt" || name == "Log")
    return {0.01, 5};
  if (name == "Reciprocal")
    return {0.1, 3};
  return {-4, 4};
}

void addUnary(Cases &v) {
  Attrs tanh;
  tanh.setString("approximate", "tanh");
  // Every float unary kernel of the shared list, with values other than
  // the ODS defaults for the attributes it reads.
  for (const UnaryKernelInfo &k : kUnaryKernels) {
    if (k.domain == UnaryDomain::IsFloat || k.domain == UnaryDomain::Bool)
      continue;
    Attrs attrs;
    if (k.alphaAttr)
      attrs.setFloat(k.alphaAttr, 0.3);
    if (k.betaAttr)
      attrs.setFloat(k.betaAttr, 0.4);
    if (k.op == UnaryOp::Gelu)
      attrs.setString("approximate", "none");
    auto [lo, hi] = unaryRange(k.name);
    for (DType t : {DType::F32, DType::F16, DType::BF16})
      addCase(v, std::string(tag(t)) + "_odd", k.name, {rnd(t, {7, 33}, lo, hi)},
          {{t, {7, 33}}}, attrs);
    addCase(v, "f32_misaligned", k.name, {rnd(DType::F32, {130}, lo, hi)},
        {{DType::F32, {130}}}, attrs, 1, 1);
  }
  addCase(v, "f64", "Exp", {rnd(DType::F64, {19}, -3, 3)}, {{DType::F64, {19}}});
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    addCase(v, std::string(tag(t)) + "_tanh", "Gelu", {rnd(t, {5, 31}, -4, 4)},
        {{t, {5, 31}}}, tanh);
  for (const UnaryKernelInfo &k : kUnaryKernels)
    if (k.domain == UnaryDomain::Signed || k.domain == UnaryDomain::Numeric)
      for (DType t : {DType::I32, DType::I64})
        addCase(v, tag(t), k.name, {rnd(t, {3, 17}, -50, 50)}, {{t, {3, 17}}});
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    Tensor x = rnd(t, {45});
    for (int64_t i = 0; i < 45; i += 4)
      x.set(i, std::nan(""));
    addCase(v, tag(t), "IsNaN", {x}, {{DType::Bool, {45}}});
  }
  addCase(v, "bool", "Not", {rnd(DType::Bool, {3, 37})}, {{DType::Bool, {3, 37}}});
}

void addCast(Cases &v) {
  const std::pair<DType, DType> pairs[] = {
      {DType::F32, DType::F16},  {DType::F32, DType::BF16},
      {DType::F16, DType::F32},  {DType::BF16, DType::F32},
      {DType::F16, DType::BF16}, {DType::F64, DType::F16},
      {DType::F32, DType::I32},  {DType::F32, DType::I64},
      {DType::I64, DType::F32},  {DType::I32, DType::I64},
      {DType::I64, DType::I32},  {DType::F32, DType::Bool},
      {DType::Bool, DType::F32}, {DType::F32, DType::F64},
      {DType::F64, DType::F32},  {DType::I64, DType::F16},
      {DType::F32, DType::U8},   {DType::I8, DType::F32},
      // The storage types: every code decoded, and values encoded.
      {DType::F8E4M3FN, DType::F32},   {DType::F8E4M3FNUZ, DType::F16},
      {DType::F8E5M2, DType::F32},     {DType::F8E5M2FNUZ, DType::BF16},
      {DType::I4, DType::F32},         {DType::U4, DType::I64},
      {DType::I2, DType::F16},         {DType::U2, DType::I32},
      {DType::F32, DType::F8E4M3FN},   {DType::F16, DType::F8E4M3FNUZ},
      {DType::F32, DType::F8E5M2},     {DType::BF16, DType::F8E5M2FNUZ},
      {DType::F32, DType::I4},         {DType::I64, DType::U4},
      {DType::F16, DType::I2},         {DType::I32, DType::U2},
      {DType::F8E5M2, DType::F8E4M3FN},
  };
  for (auto [from, to] : pairs)
    addCase(v, std::string(tag(from)) + "_to_" + tag(to), "Cast",
        {rnd(from, {5, 23}, -100, 100)}, {{to, {5, 23}}},
        intAttr("to", int64_t(to)));
  // Out-of-range values without saturation: infinity or NaN.
  for (DType to : {DType::F8E4M3FN, DType::F8E5M2})
    addCase(v, std::string("f32_to_") + tag(to) + "_no_saturate", "Cast",
        {rnd(DType::F32, {5, 23}, -1e5, 1e5)}, {{to, {5, 23}}},
        intAttr("saturate", 0, intAttr("to", int64_t(to))));
}

void addCopiesAndGenerators(Cases &v) {
  addCase(v, "f32", "Reshape", {rnd(DType::F32, {2, 3, 5})},
      {{DType::F32, {6, 5}}}, ints("shape", {-1, 5}));
  addCase(v, "f16", "Reshape", {rnd(DType::F16, {2, 1, 7})},
      {{DType::F16, {2, 7}}}, ints("shape", {2, 7}));
  addCase(v, "bool", "Copy", {rnd(DType::Bool, {9})}, {{DType::Bool, {9}}});
  addCase(v, "f32", "Copy", {rnd(DType::F32, {3, 11})}, {{DType::F32, {3, 11}}});
  addCase(v, "f32_to_i32", "BitCast", {rnd(DType::F32, {3, 11})},
      {{DType::I32, {3, 11}}}, intAttr("to", int64_t(DType::I32)));
  Attrs se;
  se.setInt("start", 1);
  se.setInt("end", -1);
  addCase(v, "all", "Shape", {rnd(DType::F32, {2, 3, 5, 7})},
      {{DType::I64, {4}}});
  addCase(v, "start_end", "Shape", {rnd(DType::F32, {2, 3, 5, 7})},
      {{DType::I64, {2}}}, se);
  addCase(v, "f16", "Size", {rnd(DType::F16, {3, 7})}, {{DType::I64, {}}});
  for (DType t : {DType::F32, DType::I64, DType::I32, DType::F64, DType::F16,
                 DType::BF16}) {
    Tensor s(t, {}), l(t, {}), d(t, {});
    s.set(0, -3);
    l.set(0, 40);
    d.set(0, t == DType::I64 || t == DType::I32 ? 2 : 0.75);
    const int64_t n = int64_t(std::ceil(43.0 / d.at(0)));
    addCase(v, tag(t), "Range", {s, l, d}, {{t, {n}}});
  }
  Tensor shape(DType::I64, {3});
  shape.set(0, 2);
  shape.set(1, 3);
  shape.set(2, 7);
  Attrs fv;
  fv.setFloats("value", {1.5});
  addCase(v, "f32", "ConstantOfShape", {shape}, {{DType::F32, {2, 3, 7}}}, fv);
  addCase(v, "f16", "ConstantOfShape", {shape}, {{DType::F16, {2, 3, 7}}}, fv);
  addCase(v, "i64", "ConstantOfShape", {shape}, {{DType::I64, {2, 3, 7}}},
      ints("value", {-7}));
}

/// The kernels the memory planner runs in place (CPU KernelDef::elementwise)
/// with the output over either operand.
void addInPlace(Cases &v) {
  auto inPlace = [&](std::string name, std::string kernel,
                     std::vector<Tensor> in, TensorDesc out, int operand,
                     Attrs a = {}) {
    addCase(v, name, std::move(kernel), std::move(in), {out}, std::move(a));
    v.back().inPlace = operand;
  };
  inPlace("f32_in_place_lhs", "Add",
          {rnd(DType::F32, {37, 29}), rnd(DType::F32, {37, 29})},
          {DType::F32, {37, 29}}, 0);
  inPlace("f16_in_place_rhs_bcast", "Mul",
          {rnd(DType::F16, {29}), rnd(DType::F16, {5, 29})},
          {DType::F16, {5, 29}}, 1);
  inPlace("f32_in_place_base", "Pow",
          {rnd(DType::F32, {3, 41}, 0.25, 2), rnd(DType::F32, {41}, -2, 2)},
          {DType::F32, {3, 41}}, 0);
  inPlace("bool_in_place", "And",
          {rnd(DType::Bool, {99}), rnd(DType::Bool, {99})},
          {DType::Bool, {99}}, 1);
  Attrs erf;
  erf.setString("approximate", "none");
  inPlace("bf16_in_place", "Gelu", {rnd(DType::BF16, {7, 33}, -4, 4)},
          {DType::BF16, {7, 33}}, 0, erf);
  inPlace("f32_in_place", "Sigmoid", {rnd(DType::F32, {1031}, -8, 8)},
          {DType::F32, {1031}}, 0);
  inPlace("bool_in_place", "Not", {rnd(DType::Bool, {77})},
          {DType::Bool, {77}}, 0);
}

} // namespace

void addElementwiseCases(std::vector<ParityCase> &v) {
  addInPlace(v);
  addBinary(v);
  addVariadic(v);
  addWhere(v);
  addUnary(v);
  addCast(v);
  addCopiesAndGenerators(v);
}

} // namespace tpc::cuda::test
