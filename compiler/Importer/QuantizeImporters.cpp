//===- QuantizeImporters.cpp - Linear quantization as float arithmetic ----===//
//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger and
// QLinearMatMul, imported as the arithmetic ONNX defines them by:
//   * DequantizeLinear: (float(x) - float(zero_point)) * scale, in float32,
//     cast to the output type;
//   * QuantizeLinear: an integer target gets clamp(round(x / scale) +
//     zero_point) cast to it (ties to even), a float8 target Cast(x / scale)
//     (saturating unless `saturate` is 0);
// with the scale and zero point per tensor, per `axis`, or per block of
// `block_size` along the axis (x seen as [..., blocks, block_size, ...] when
// the blocks divide the axis, else each block's value gathered to its
// elements). MatMulInteger is an int32 MatMul of the operands less their
// zero points; QLinearMatMul requantizes that product by a_scale * b_scale /
// y_scale. Every step is an op tpc has, so nothing here is a kernel.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "compiler/Importer/Emitter.h"
#include "compiler/Importer/NodeImporter.h"

#include <cmath>

using namespace mlir;

namespace tpc {
using namespace onnx;

namespace {

using Results = SmallVectorImpl<Value>;

bool isFloat8(Type t) { return isa<FloatType>(t) && t.getIntOrFloatBitWidth() == 8; }

/// The range of an integer quantized type.
std::pair<double, double> integerRange(Type t) {
  unsigned bits = t.getIntOrFloatBitWidth();
  if (t.isUnsignedInteger())
    return {0.0, std::ldexp(1.0, bits) - 1};
  return {-std::ldexp(1.0, bits - 1), std::ldexp(1.0, bits - 1) - 1};
}

/// `param` (a scale or zero point) made to broadcast against `x`: a scalar
/// or one-element tensor as a scalar, a 1-D tensor along `axis`, and with
/// `blockSize` each entry repeated over its block along `axis`.
Value broadcastParam(NodeContext &c, Emitter &e, Value param, Value x,
                     int64_t axis, int64_t blockSize, StringRef what) {
  if (!e.ok({param, x}))
    return Value();
  auto pt = cast<RankedTensorType>(param.getType());
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  if (blockSize == 0 && pt.getNumElements() == 1 && pt.getRank() <= 1)
    return pt.getRank() ? e.reshape(param, {}) : param;
  FailureOr<int64_t> a = normalizeAxis(axis, rank);
  if (failed(a)) {
    c.error() << "axis " << axis << " is out of range for rank " << rank;
    e.failed = true;
    return Value();
  }
  int64_t n = xt.getDimSize(*a);
  if (blockSize == 0) {
    if (pt.getRank() != 1 || pt.getDimSize(0) != n) {
      c.error() << what << " has shape " << pt << "; per-axis quantization "
                << "along axis " << *a << " needs " << n << " values";
      e.failed = true;
      return Value();
    }
    SmallVector<int64_t> shape(rank, 1);
    shape[*a] = n;
    return e.reshape(param, shape);
  }
  if (blockSize < 0 || pt.getRank() != rank ||
      pt.getDimSize(*a) != (n + blockSize - 1) / blockSize) {
    c.error() << what << " has shape " << pt << "; blocks of " << blockSize
              << " along axis " << *a << " of " << xt << " need "
              << (blockSize > 0 ? (n + blockSize - 1) / blockSize : 0)
              << " there and the input's other dims";
    e.failed = true;
    return Value();
  }
  if (n % blockSize == 0) {
    // x is seen as [..., n / blockSize, blockSize, ...] (see BlockedView):
    // each block's entry broadcasts over its block.
    SmallVector<int64_t> shape(pt.getShape());
    shape.insert(shape.begin() + *a + 1, 1);
    return e.reshape(param, shape);
  }
  SmallVector<int64_t> blockOf;
  for (int64_t i = 0; i < n; ++i)
    blockOf.push_back(i / blockSize);
  auto idxType = RankedTensorType::get({n}, c.b.getI64Type());
  return e.gather(param, e.constant(DenseElementsAttr::get(idxType,
                                                           ArrayRef(blockOf))),
                  *a);
}

/// The node's `axis` and `block_size` (block_size exists from opset 21).
std::pair<int64_t, int64_t> axisAndBlock(NodeContext &c) {
  return {c.attrInt("axis", 1), c.opset >= 21 ? c.attrInt("block_size", 0) : 0};
}

/// Blocks that divide their axis are computed on x reshaped to [...,
/// blocks, block_size, ...] with the block parameters broadcast over the
/// new axis (a reshape sharding can split by whole blocks), and the result
/// reshaped back; other blocks gather their parameter per element.
struct BlockedView {
  Value x;
  SmallVector<int64_t> shape; // x's own shape to restore; empty: none

  BlockedView(Emitter &e, Value in, int64_t axis, int64_t blockSize) : x(in) {
    if (!e.ok({in}) || blockSize <= 0)
      return;
    auto t = cast<RankedTensorType>(in.getType());
    FailureOr<int64_t> a = normalizeAxis(axis, t.getRank());
    if (failed(a) || t.getDimSize(*a) % blockSize)
      return;
    shape.assign(t.getShape().begin(), t.getShape().end());
    SmallVector<int64_t> blocked(shape);
    blocked[*a] = shape[*a] / blockSize;
    blocked.insert(blocked.begin() + *a + 1, blockSize);
    x = e.reshape(in, blocked);
  }
  Value restore(Emitter &e, Value y) const {
    if (shape.empty() || !e.ok({y}))
      return y;
    return e.reshape(y, shape);
  }
};

/// The quantized type of QuantizeLinear's result: the zero point's, else
/// `output_dtype`, else uint8.
FailureOr<Type> quantizedType(NodeContext &c) {
  if (c.input(2))
    return elementTypeOf(c.input(2));
  int64_t dt = c.attrInt("output_dtype", 0);
  if (dt == 0)
    return Type(IntegerType::get(c.b.getContext(), 8, IntegerType::Unsigned));
  Type t = onnxElementType(c.b.getContext(), dt);
  if (!t)
    return c.error() << "output_dtype " << dt << " is not a type tpc takes";
  return t;
}

/// x quantized to `q` with its (broadcast) scale and zero point, computed in
/// float32.
Value quantize(NodeContext &c, Emitter &e, Value x, Value scale, Value zero,
               Type q, bool saturate) {
  Type f32 = c.b.getF32Type();
  Value scaled = e.binary<DivOp>(e.cast(x, f32), e.cast(scale, f32));
  if (isFloat8(q)) {
    if (!e.ok({scaled}))
      return Value();
    auto type = RankedTensorType::get(tensorTypeOf(scaled).getShape(), q);
    SmallVector<NamedAttribute> attrs{c.named(
        "to", c.b.getI64IntegerAttr(*onnxTypeNumber(q)))};
    if (!saturate)
      attrs.push_back(c.named("saturate", c.b.getI64IntegerAttr(0)));
    return c.create(CastOp::getOperationName(), type, scaled, attrs)[0];
  }
  Value r = e.unary<RoundOp>(scaled);
  if (zero)
    r = e.binary<AddOp>(r, e.cast(zero, f32));
  auto [lo, hi] = integerRange(q);
  r = e.inferred<MaxOp>({r, e.scalar(f32, lo)});
  r = e.inferred<MinOp>({r, e.scalar(f32, hi)});
  return e.cast(r, q);
}

LogicalResult importQuantizeLinear(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  FailureOr<Type> q = quantizedType(c);
  if (failed(q))
    return failure();
  bool f8 = isFloat8(*q);
  if (!f8 && !q->isInteger())
    return c.error() << "quantizing to " << *q << " is not supported";
  Emitter e(c);
  Value x = c.input(0);
  auto [axis, block] = axisAndBlock(c);
  Value scale = broadcastParam(c, e, c.input(1), x, axis, block, "y_scale");
  Value zero;
  if (c.input(2) && !f8)
    zero = broadcastParam(c, e, c.input(2), x, axis, block, "y_zero_point");
  BlockedView view(e, x, axis, block);
  Value y = quantize(c, e, view.x, scale, zero, *q,
                     c.attrInt("saturate", 1) != 0);
  return e.finish({view.restore(e, y)}, results);
}

/// (float(x) - float(zero)) * scale in float32, cast to `out`.
Value dequantize(Emitter &e, Value x, Value scale, Value zero, Type out) {
  Type f32 = e.c.b.getF32Type();
  Value v = e.cast(x, f32);
  if (zero)
    v = e.binary<SubOp>(v, e.cast(zero, f32));
  return e.cast(e.binary<MulOp>(v, e.cast(scale, f32)), out);
}

FailureOr<bool> importBlockedWeightDequantize(NodeContext &c, Results &results);

LogicalResult importDequantizeLinear(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  FailureOr<bool> blocked = importBlockedWeightDequantize(c, results);
  if (failed(blocked) || *blocked)
    return blocked;
  Emitter e(c);
  Value x = c.input(0);
  Type out = elementTypeOf(c.input(1));
  if (int64_t dt = c.attrInt("output_dtype", 0)) {
    out = onnxElementType(c.b.getContext(), dt);
    if (!out || !isa<FloatType>(out))
      return c.error() << "output_dtype " << dt << " is not a float type";
  }
  if (!isa<FloatType>(elementTypeOf(c.input(1))))
    return c.error() << "x_scale has type " << elementTypeOf(c.input(1))
                     << ", not a float type";
  auto [axis, block] = axisAndBlock(c);
  Value scale = broadcastParam(c, e, c.input(1), x, axis, block, "x_scale");
  Value zero;
  if (c.input(2) && !isFloat8(elementTypeOf(x)))
    zero = broadcastParam(c, e, c.input(2), x, axis, block, "x_zero_point");
  BlockedView view(e, x, axis, block);
  Value y = dequantize(e, view.x, scale, zero, out);
  return e.finish({view.restore(e, y)}, results);
}

/// DynamicQuantizeLinear: uint8 with the scale and zero point that map
/// [min(x, 0), max(x, 0)] onto [0, 255].
LogicalResult importDynamicQuantizeLinear(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  Emitter e(c);
  Value x = e.cast(c.input(0), c.b.getF32Type());
  if (!e.ok({x}))
    return e.finish({x}, results);
  Type f32 = c.b.getF32Type();
  auto all = [&](StringRef op) {
    auto scalarType = RankedTensorType::get({}, f32);
    return c.create(op, scalarType, x,
                    {c.named("axes", c.b.getDenseI64ArrayAttr({})),
                     c.named("keepdims", c.b.getI64IntegerAttr(0)),
                     c.named("noop_with_empty_axes",
                             c.b.getI64IntegerAttr(0))})[0];
  };
  Value zeroF = e.scalar(f32, 0);
  Value lo = e.inferred<MinOp>(
      {all(ReduceMinOp::getOperationName()), zeroF});
  Value hi = e.inferred<MaxOp>(
      {all(ReduceMaxOp::getOperationName()), zeroF});
  Value scale = e.binary<DivOp>(e.binary<SubOp>(hi, lo), e.scalar(f32, 255));
  Type u8 = IntegerType::get(c.b.getContext(), 8, IntegerType::Unsigned);
  // zero point = clamp(round(-lo / scale)), as a uint8 quantization of 0.
  Value zero = quantize(c, e, e.unary<NegOp>(lo), scale, Value(), u8, true);
  Value y = quantize(c, e, x, scale, zero, u8, true);
  return e.finish({y, scale, zero}, results);
}

/// int32 (a - a_zero) @ (b - b_zero); a zero point is a scalar, or per row
/// of a / per column of b.
Value integerProduct(NodeContext &c, Emitter &e, Value a, Value b,
                     Value aZero, Value bZero) {
  Type i32 = c.b.getI32Type();
  Value av = e.cast(a, i32), bv = e.cast(b, i32);
  if (aZero && e.ok({a, aZero})) {
    auto zt = cast<RankedTensorType>(aZero.getType());
    if (zt.getNumElements() != 1 && zt.getRank() == 1)
      // Per row of a: [M] -> [M, 1].
      aZero = e.reshape(aZero, {zt.getDimSize(0), 1});
    av = e.binary<SubOp>(av, e.cast(aZero, i32));
  }
  if (bZero)
    bv = e.binary<SubOp>(bv, e.cast(bZero, i32));
  return e.inferred<MatMulOp>({av, bv});
}

LogicalResult importMatMulInteger(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  Emitter e(c);
  return e.finish({integerProduct(c, e, c.input(0), c.input(1), c.input(2),
                                  c.input(3))},
                  results);
}

/// QLinearMatMul: a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero.
LogicalResult importQLinearMatMul(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(8)))
    return failure();
  Emitter e(c);
  Type f32 = c.b.getF32Type();
  Value acc = e.cast(
      integerProduct(c, e, c.input(0), c.input(3), c.input(2), c.input(5)),
      f32);
  auto asRow = [&](Value s) {
    // a's scale per row: [M] -> [M, 1]; a scalar stays. (A cast that
    // failed has reported why and gives nothing to reshape.)
    if (!e.ok({s}))
      return s;
    auto t = cast<RankedTensorType>(s.getType());
    return t.getRank() == 1 && t.getNumElements() != 1
               ? e.reshape(s, {t.getDimSize(0), 1})
               : s;
  };
  Value multiplier = e.binary<DivOp>(
      e.binary<MulOp>(asRow(e.cast(c.input(1), f32)), e.cast(c.input(4), f32)),
      e.cast(c.input(6), f32));
  Value y = quantize(c, e, e.binary<MulOp>(acc, multiplier), e.scalar(f32, 1),
                     c.input(7), elementTypeOf(c.input(7)), true);
  return e.finish({y}, results);
}


/// `v` seen as `shape` (same element count): a weight no node has read yet
/// takes the new type (the same bytes), so that sharding cuts it on the
/// new axes; anything else is reshaped.
Value viewAs(Emitter &e, Value v, ArrayRef<int64_t> shape) {
  if (!e.ok({v}))
    return Value();
  auto w = v.getDefiningOp<WeightOp>();
  if (w && v.use_empty()) {
    v.setType(RankedTensorType::get(shape, w.getType().getElementType()));
    return v;
  }
  return e.reshape(v, shape);
}

/// The 4-bit codes of `packed` (uint8, two per byte, the first in the low
/// nibble) along its last axis, `count` of them: each byte is repeated
/// (Gather), the odd copies shifted down (Div by 16) and the high nibble
/// dropped (x - x / 16 * 16), uint8 arithmetic ONNX defines exactly.
Value unpackNibbles(Emitter &e, Value packed, int64_t count) {
  if (!e.ok({packed}))
    return Value();
  auto t = cast<RankedTensorType>(packed.getType());
  int64_t axis = t.getRank() - 1;
  MLIRContext *ctx = e.c.b.getContext();
  SmallVector<int64_t> twice, shift;
  for (int64_t i = 0; i < count; ++i) {
    twice.push_back(i / 2);
    shift.push_back(i % 2 ? 16 : 1);
  }
  auto idxType = RankedTensorType::get({count}, e.c.b.getI64Type());
  Value spread = e.gather(
      packed, e.constant(DenseElementsAttr::get(idxType, ArrayRef(twice))),
      axis);
  Type u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  auto shiftType = RankedTensorType::get({count}, u8);
  SmallVector<APInt> shifts;
  for (int64_t s : shift)
    shifts.push_back(APInt(8, s));
  Value down = e.binary<DivOp>(
      spread, e.constant(DenseElementsAttr::get(shiftType, shifts)));
  Value sixteen = e.scalar(u8, 16);
  return e.binary<SubOp>(
      down, e.binary<MulOp>(e.binary<DivOp>(down, sixteen), sixteen));
}

/// A weight of the QDQ format: DequantizeLinear of a 4- or 8-bit integer
/// initializer [K, N] blocked along K (axis 0, blocks that divide K) with
/// initializer scales [K / block, N]. Imported as MatMulNBits' dataflow on
/// weights the engine writer repacks from the initializers' bytes (codes
/// [N, blocks, block * bits / 8], scales [N, blocks], zero points packed;
/// signed codes stored offset by 2^(bits - 1), their zero point with
/// them), transposed back to [K, N]: the same values, and the MatMul it
/// feeds fuses into MatMulNBits over the packed bytes. True when it
/// matched; false leaves the node to the general import.
FailureOr<bool> importBlockedWeightDequantize(NodeContext &c,
                                              Results &results) {
  Value x = c.input(0), scale = c.input(1), zp = c.input(2);
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  if (!xt || xt.getRank() != 2 || !xt.hasStaticShape())
    return false;
  auto it = dyn_cast<IntegerType>(xt.getElementType());
  if (!it || (it.getWidth() != 4 && it.getWidth() != 8))
    return false;
  const int bits = int(it.getWidth());
  const bool isSigned = !it.isUnsigned();
  auto [axis, block] = axisAndBlock(c);
  const int64_t k = xt.getDimSize(0), n = xt.getDimSize(1);
  if ((axis != 0 && axis != -2) || block < 16 || block > 256 ||
      (block & (block - 1)) || k % block)
    return false;
  const int64_t blocks = k / block;
  // Where the bytes lie: a 4-bit initializer is a constant that remembers
  // its packed source, an 8-bit one a weight.
  auto source = [&](Value v) -> std::optional<DictionaryAttr> {
    if (auto cst = v.getDefiningOp<ConstantOp>())
      if (auto d = cst->getAttrOfType<DictionaryAttr>("onnx.packed_source"))
        return d;
    if (auto w = v.getDefiningOp<WeightOp>())
      return DictionaryAttr::get(
          c.b.getContext(),
          {c.named("name", w.getNameAttr()), c.named("file", w.getFileAttr()),
           c.named("offset", w.getOffsetAttr()),
           c.named("length", w.getLengthAttr())});
    return std::nullopt;
  };
  std::optional<DictionaryAttr> xs = source(x);
  if (!xs || xt.getNumElements() <= 4096)
    return false;
  auto st = dyn_cast<RankedTensorType>(scale.getType());
  if (!st || !isa<FloatType>(st.getElementType()) ||
      st.getShape() != ArrayRef<int64_t>{blocks, n})
    return false;
  if (zp && cast<RankedTensorType>(zp.getType()).getShape() !=
                ArrayRef<int64_t>{blocks, n})
    return false;
  Type out = st.getElementType();
  if (int64_t dt = c.attrInt("output_dtype", 0)) {
    out = onnxElementType(c.b.getContext(), dt);
    if (!out || !isa<FloatType>(out))
      return c.error() << "output_dtype " << dt << " is not a float type";
  }
  Emitter e(c);
  MLIRContext *ctx = c.b.getContext();
  Type u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  Type f32 = c.b.getF32Type();
  // A weight the writer computes from `src`'s bytes: part `part` of the
  // repacking, of type [shape] x elem.
  auto repacked = [&](DictionaryAttr src, StringRef part,
                      ArrayRef<int64_t> shape, Type elem,
                      Type stored) -> Value {
    auto w = c.b.create<WeightOp>(
        c.loc, RankedTensorType::get(shape, elem),
        c.b.getStringAttr(cast<StringAttr>(src.get("name")).str() + "." +
                          part.str()),
        cast<StringAttr>(src.get("file")), cast<IntegerAttr>(src.get("offset")),
        cast<IntegerAttr>(src.get("length")));
    w->setAttr("onnx.quantize",
               c.b.getDictionaryAttr(
                   {c.named("part", c.b.getStringAttr("repack_" + part.str())),
                    c.named("bits", c.b.getI64IntegerAttr(bits)),
                    c.named("block_size", c.b.getI64IntegerAttr(block)),
                    c.named("signed", c.b.getBoolAttr(isSigned)),
                    c.named("k", c.b.getI64IntegerAttr(k)),
                    c.named("n", c.b.getI64IntegerAttr(n)),
                    c.named("source_type", TypeAttr::get(stored))}));
    return w;
  };
  const double offset = isSigned ? double(int64_t(1) << (bits - 1)) : 0.0;
  Value codes = repacked(*xs, "codes", {n, blocks, block * bits / 8}, u8,
                         it);
  if (bits == 4)
    codes = unpackNibbles(e, codes, block);
  Value zero;
  if (!zp) {
    zero = e.scalar(f32, offset);
  } else if (std::optional<DictionaryAttr> zs = source(zp);
             zs && elementTypeOf(zp) == Type(it)) {
    zero = repacked(*zs, "zeros", {n, (blocks * bits + 7) / 8}, u8, it);
    if (bits == 4)
      zero = unpackNibbles(e, zero, blocks);
    zero = e.reshape(e.cast(zero, f32), {n, blocks, 1});
  } else {
    zero = e.cast(zp, f32);
    if (offset != 0)
      zero = e.binary<AddOp>(zero, e.scalar(f32, offset));
    zero = e.reshape(e.transpose(zero, {1, 0}), {n, blocks, 1});
  }
  Value scales;
  if (std::optional<DictionaryAttr> ss = source(scale);
      ss && scale.getDefiningOp<WeightOp>())
    scales = repacked(*ss, "scales", {n, blocks}, st.getElementType(),
                      st.getElementType());
  else
    scales = e.transpose(scale, {1, 0});
  scales = e.reshape(e.cast(scales, f32), {n, blocks, 1});
  Value w = e.binary<MulOp>(e.binary<SubOp>(e.cast(codes, f32), zero), scales);
  w = e.transpose(e.cast(e.reshape(w, {n, k}), out), {1, 0});
  if (failed(e.finish({w}, results)))
    return failure();
  return true;
}

/// MatMulNBits (com.microsoft): Y = A x dequantize(B)^T + bias, B [N,
/// blocks, block_size * bits / 8] of `bits`-bit codes packed low first along
/// K, one scale (and zero point, default 2^(bits-1)) per block of each
/// column. Imported as its definition: the codes unpacked, (code - zero) *
/// scale in float32 per block, the [N, K] weight transposed into a MatMul.
/// The weight expression shards like any dequantized weight: each rank's
/// shard keeps its block of the packed codes, scales and zero points.
LogicalResult importMatMulNBits(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(3)))
    return failure();
  int64_t k = c.attrInt("K", -1), n = c.attrInt("N", -1);
  int64_t bits = c.attrInt("bits", 4), block = c.attrInt("block_size", -1);
  if (bits != 4 && bits != 8)
    return c.error() << "bits " << bits << " is not supported (4 or 8)";
  if (block < 16 || (block & (block - 1)))
    return c.error() << "block_size " << block
                     << " is not a power of two of at least 16";
  if (k <= 0 || n <= 0)
    return c.error() << "attributes K and N must be positive (K " << k
                     << ", N " << n << ")";
  Value a = c.input(0), b = c.input(1), scales = c.input(2);
  Type t1 = elementTypeOf(a);
  if (!isa<FloatType>(t1))
    return c.error() << "input A has type " << t1 << ", not a float type";
  auto at = c.inputType(0);
  if (at.getRank() < 1 || at.getDimSize(at.getRank() - 1) != k)
    return c.error() << "input A has shape " << at << "; its last dim must "
                     << "be K = " << k;
  int64_t blocks = (k + block - 1) / block, blob = block * bits / 8;
  auto bt = c.inputType(1);
  Type u8 = IntegerType::get(c.b.getContext(), 8, IntegerType::Unsigned);
  if (bt.getElementType() != u8 ||
      bt.getNumElements() != n * blocks * blob)
    return c.error() << "input B has type " << bt << "; K " << k << ", N "
                     << n << ", bits " << bits << " and block_size " << block
                     << " need ui8 [" << n << ", " << blocks << ", " << blob
                     << "]";
  auto st = c.inputType(2);
  if (st.getElementType() != t1 || st.getNumElements() != n * blocks)
    return c.error() << "scales have type " << st << "; they must be "
                     << n * blocks << " values (N x blocks) of A's type "
                     << t1;
  if (c.input(4)) {
    // g_idx (act order) maps each k to its block; only the identity map
    // k / block_size, which some exporters write, is the plain layout.
    FailureOr<SmallVector<int64_t>> g = c.constInts(4, "g_idx");
    if (failed(g))
      return failure();
    bool identity = int64_t(g->size()) == k;
    for (int64_t i = 0; identity && i < k; ++i)
      identity = (*g)[i] == i / block;
    if (!identity)
      return c.error() << "g_idx with a reordered block map (act order) is "
                          "not supported";
  }
  Emitter e(c);
  Type f32 = c.b.getF32Type();
  Value codes = viewAs(e, b, {n, blocks, blob});
  if (bits == 4)
    codes = unpackNibbles(e, codes, block);
  Value zero;
  if (Value zp = c.input(3)) {
    auto zt = cast<RankedTensorType>(zp.getType());
    int64_t perColumn = zt.getElementType() == u8
                            ? (blocks * bits + 7) / 8
                            : blocks;
    if ((zt.getElementType() != u8 && zt.getElementType() != t1) ||
        zt.getNumElements() != n * perColumn)
      return c.error() << "zero_points have type " << zt << "; they must be "
                       << n * ((blocks * bits + 7) / 8) << " packed ui8 or "
                       << n * blocks << " values of A's type " << t1;
    zero = viewAs(e, zp, {n, perColumn});
    if (zt.getElementType() == u8 && bits == 4)
      zero = unpackNibbles(e, zero, blocks);
    zero = e.reshape(e.cast(zero, f32), {n, blocks, 1});
  } else {
    zero = e.scalar(f32, double(int64_t(1) << (bits - 1)));
  }
  Value scale = e.reshape(e.cast(viewAs(e, scales, {n, blocks}), f32),
                          {n, blocks, 1});
  Value w = e.binary<MulOp>(e.binary<SubOp>(e.cast(codes, f32), zero), scale);
  w = e.reshape(w, {n, blocks * block});
  if (blocks * block != k)
    w = e.gather(w, e.range({k}, c.b.getI64Type()), 1);
  w = e.transpose(e.cast(w, t1), {1, 0});
  Value y = e.binary<MatMulOp>(a, w);
  if (Value bias = c.input(5)) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (biasType.getElementType() != t1 || biasType.getNumElements() != n)
      return c.error() << "bias has type " << biasType << "; it must be " << n
                       << " values of A's type " << t1;
    y = e.binary<AddOp>(y, e.reshape(bias, {n}));
  }
  return e.finish({y}, results);
}

} // namespace

void addQuantizeImporters(std::vector<OpTableEntry> &t) {
  const char *q = "onnx.Div, onnx.Round, onnx.Add, onnx.Max, onnx.Min, onnx.Cast";
  const char *dq = "onnx.Cast, onnx.Sub, onnx.Mul";
  for (int v : {10, 13, 19, 21, 23, 24, 25, 28}) {
    t.push_back({"QuantizeLinear", v, importQuantizeLinear, q});
    t.push_back({"DequantizeLinear", v, importDequantizeLinear, dq});
  }
  t.push_back({"DynamicQuantizeLinear", 11, importDynamicQuantizeLinear,
               "onnx.ReduceMin, onnx.ReduceMax and QuantizeLinear's ops"});
  t.push_back({"MatMulInteger", 10, importMatMulInteger,
               "onnx.Cast, onnx.Sub, onnx.MatMul (int32)"});
  for (int v : {10, 21})
    t.push_back({"QLinearMatMul", v, importQLinearMatMul,
                 "MatMulInteger's ops, then QuantizeLinear's"});
  t.push_back({"MatMulNBits", 1, importMatMulNBits,
               "onnx.Gather, onnx.Div, onnx.Sub, onnx.Mul (codes unpacked), "
               "onnx.Cast, onnx.MatMul",
               "com.microsoft"});
}

} // namespace tpc
