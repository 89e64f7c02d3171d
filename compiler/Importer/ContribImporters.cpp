//===- ContribImporters.cpp - ONNX Runtime's transformer ops --------------===//
//
// The com.microsoft ops that ONNX Runtime's transformer optimizer writes
// (Attention, SkipLayerNormalization, EmbedLayerNormalization, BiasGelu,
// FastGelu, Gelu, QuickGelu, SkipSimplifiedLayerNormalization) and the
// SimplifiedLayerNormalization it registers in the default domain. Each is
// imported as the onnx ops it is defined by, so that sharding sees the
// projections, heads and norms it already knows, and the fusion passes turn
// them back into fused kernels per rank. Inputs and attributes that change
// the meaning beyond that (past key/values, rotary embedding, packed mask
// formats) are refused with an error naming them.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "compiler/Importer/Emitter.h"
#include "compiler/Importer/NodeImporter.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;

namespace tpc {
using namespace onnx;

namespace {

using Results = SmallVectorImpl<Value>;

/// An error unless the node leaves input `i` out.
LogicalResult refuseInput(NodeContext &c, size_t i, StringRef what) {
  if (c.input(i))
    return c.error() << "input " << i << " (" << what
                     << ") is not supported";
  return success();
}

LogicalResult refuseOutput(NodeContext &c, int i, StringRef what) {
  if (c.wantsOutput(i))
    return c.error() << "output " << i << " (" << what
                     << ") is not supported";
  return success();
}


/// SkipLayerNormalization: input, skip, gamma, beta?, bias?. The sum
/// input + skip (+ bias) is layer-normalized over the last axis; outputs
/// Y, Mean, InvStdDev and the sum.
LogicalResult importSkipLayerNorm(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(3)))
    return failure();
  Emitter e(c);
  float eps = c.attrFloat("epsilon", 1e-12f);
  Value sum = e.binary<AddOp>(c.input(0), c.input(1));
  if (c.input(4))
    sum = e.binary<AddOp>(sum, c.input(4));
  Value y = e.layerNorm(sum, c.input(2), c.input(3), eps);
  Value mean, invStd;
  if (c.wantsOutput(1) || c.wantsOutput(2))
    mean = e.layerNormStats(sum, -1, eps, invStd);
  return e.finish({y, mean, invStd, sum}, results);
}

/// SkipSimplifiedLayerNormalization: input, skip, gamma, bias?; RMS
/// normalization of input + skip (+ bias); outputs Y, (mean: refused),
/// InvStdDev and the sum.
LogicalResult importSkipSimplifiedLayerNorm(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(3)) ||
      failed(refuseOutput(c, 1, "mean; RMS normalization has none")))
    return failure();
  Emitter e(c);
  Value sum = e.binary<AddOp>(c.input(0), c.input(1));
  if (c.input(3))
    sum = e.binary<AddOp>(sum, c.input(3));
  Value inv;
  Value y = e.rmsNorm(sum, c.input(2), c.attrFloat("epsilon", 1e-12f), -1,
                      &inv);
  return e.finish({y, Value(), inv, sum}, results);
}

/// SimplifiedLayerNormalization (ONNX Runtime's RMS norm, default domain):
/// X, scale; outputs Y and InvStdDev. Only the last axis is supported.
LogicalResult importSimplifiedLayerNorm(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  int64_t rank = c.inputType(0).getRank();
  int64_t axis = c.attrInt("axis", -1);
  if (axis != -1 && axis != rank - 1)
    return c.error() << "axis " << axis
                     << " is not supported; only the last axis is";
  Emitter e(c);
  Value inv;
  Value y = e.rmsNorm(c.input(0), c.input(1), c.attrFloat("epsilon", 1e-5f),
                      -1, &inv);
  return e.finish({y, inv}, results);
}

/// Gelu (com.microsoft): the exact, erf-based Gelu.
LogicalResult importMsGelu(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  Emitter e(c);
  return e.finish({e.gelu(c.input(0), "none")}, results);
}

/// BiasGelu: Gelu(A + B), erf-based.
LogicalResult importBiasGelu(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  Emitter e(c);
  return e.finish({e.gelu(e.binary<AddOp>(c.input(0), c.input(1)), "none")},
                results);
}

/// FastGelu: the tanh approximation of Gelu(X + bias?).
LogicalResult importFastGelu(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  Emitter e(c);
  Value x = c.input(0);
  if (c.input(1))
    x = e.binary<AddOp>(x, c.input(1));
  return e.finish({e.gelu(x, "tanh")}, results);
}

/// QuickGelu: x * sigmoid(alpha * x) (alpha 1.702 by default; ONNX
/// Runtime writes SiLU as alpha 1).
LogicalResult importQuickGelu(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  Emitter e(c);
  return e.finish({e.swish(c.input(0), c.attrFloat("alpha", 1.702f))}, results);
}

/// EmbedLayerNormalization: input_ids, segment_ids?, word_embedding,
/// position_embedding, segment_embedding?, gamma, beta, mask?,
/// position_ids?. The sum of the word, position (0..S-1 unless given) and
/// segment embeddings is layer-normalized; outputs Y, mask_index (per batch
/// the number of ones of the mask, 0 without one) and the sum.
LogicalResult importEmbedLayerNorm(NodeContext &c, Results &results) {
  for (size_t i : {0, 2, 3, 5, 6})
    if (!c.input(i))
      return c.error() << "input " << i << " is required";
  if (bool(c.input(1)) != bool(c.input(4)))
    return c.error() << "segment_ids and segment_embedding must be given "
                        "together";
  if (c.attrInt("mask_index_type", 1) != 1 && c.wantsOutput(1))
    return c.error() << "mask_index_type "
                     << c.attrInt("mask_index_type", 1)
                     << " with a mask_index output is not supported";
  RankedTensorType ids = c.inputType(0);
  if (ids.getRank() != 2)
    return c.error() << "input_ids must be [batch, sequence], not " << ids;
  int64_t batch = ids.getDimSize(0), seq = ids.getDimSize(1);
  Emitter e(c);
  auto gather = [&](Value table, Value indices) {
    return e.gather(table, indices, 0);
  };
  Value sum = gather(c.input(2), c.input(0));
  Value positions = c.input(8);
  if (!positions)
    positions = e.range({1, seq}, c.b.getI64Type());
  sum = e.binary<AddOp>(sum, gather(c.input(3), positions));
  if (c.input(1))
    sum = e.binary<AddOp>(sum, gather(c.input(4), c.input(1)));
  Value y = e.layerNorm(sum, c.input(5), c.input(6),
                        c.attrFloat("epsilon", 1e-12f));
  Type i32 = c.b.getI32Type();
  Value maskIndex;
  if (Value mask = c.input(7)) {
    Value ones = e.cast(
        e.binary<EqualOp>(mask, e.scalar(c.inputType(7).getElementType(), 1)),
        i32);
    if (e.ok({ones}))
      maskIndex = e.first(c.createInferred<ReduceSumOp>(
          ones, {c.named("axes", c.b.getDenseI64ArrayAttr({1})),
                 c.named("keepdims", c.b.getI64IntegerAttr(0)),
                 c.named("noop_with_empty_axes", c.b.getI64IntegerAttr(0))}));
  } else {
    auto t = RankedTensorType::get({batch}, i32);
    maskIndex = e.constant(DenseElementsAttr::get(t, int32_t(0)));
  }
  return e.finish({y, maskIndex, sum}, results);
}

/// The additive mask [B, 1, 1 or S, T] of Attention's mask_index: 1-D end
/// positions [B] (keys at and after the end are masked), or a raw 0/1 mask
/// [B, T] or [B, S, T] (zeros masked); masked scores get `filter`.
Value attentionMask(NodeContext &c, Emitter &e, Value mask, int64_t batch,
                    int64_t seq, double filter) {
  RankedTensorType t = c.inputType(3);
  Type f32 = c.b.getF32Type();
  Value masked; // true where the score is masked
  SmallVector<int64_t> shape;
  if (t.getRank() == 1 && t.getDimSize(0) == batch) {
    Value keys =
        e.cast(e.range({1, seq}, c.b.getI32Type()), t.getElementType());
    Value ends = e.reshape(mask, {batch, 1});
    masked = e.binary<GreaterOrEqualOp>(keys, ends);
    shape = {batch, 1, 1, seq};
  } else if (t.getRank() == 2 && t.getDimSize(0) == batch &&
             t.getDimSize(1) == seq) {
    masked = e.binary<EqualOp>(mask, e.scalar(t.getElementType(), 0));
    shape = {batch, 1, 1, seq};
  } else if (t.getRank() == 3 && t.getDimSize(0) == batch &&
             t.getDimSize(1) == seq && t.getDimSize(2) == seq) {
    masked = e.binary<EqualOp>(mask, e.scalar(t.getElementType(), 0));
    shape = {batch, 1, seq, seq};
  } else {
    c.error() << "mask_index of type " << t
              << " is not supported: tpc takes end positions [batch] or a "
                 "0/1 mask [batch, sequence] or [batch, sequence, sequence]";
    e.failed = true;
    return Value();
  }
  if (!e.ok({masked}))
    return Value();
  Value add = e.where(masked, e.scalar(f32, filter), e.scalar(f32, 0));
  return e.reshape(add, shape);
}

/// Attention (com.microsoft): input [B, S, Hin], weights [Hin, Hq + Hk +
/// Hv], bias?, mask_index?, attention_bias? (input 5). The projection is
/// split into Q, K and V, cut into num_heads heads, and attended with
/// softmax(Q K^T * scale + mask) V; unidirectional adds a causal mask.
LogicalResult importMsAttention(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)) || failed(refuseInput(c, 4, "past")) ||
      failed(refuseInput(c, 6, "past_sequence_length")) ||
      failed(refuseOutput(c, 1, "present")))
    return failure();
  if (c.attrInt("do_rotary", 0) != 0)
    return c.error() << "do_rotary is not supported";
  int64_t heads = c.attrInt("num_heads", 0);
  RankedTensorType in = c.inputType(0), w = c.inputType(1);
  if (in.getRank() != 3 || w.getRank() != 2 ||
      w.getDimSize(0) != in.getDimSize(2))
    return c.error() << "expects input [batch, sequence, hidden] and weights "
                        "[hidden, q + k + v], not "
                     << in << " and " << w;
  int64_t batch = in.getDimSize(0), seq = in.getDimSize(1);
  SmallVector<int64_t> sizes;
  if (auto q = c.attrInts("qkv_hidden_sizes"))
    sizes = *q;
  else
    sizes.assign(3, w.getDimSize(1) / 3);
  if (sizes.size() != 3 || sizes[0] + sizes[1] + sizes[2] != w.getDimSize(1) ||
      sizes[0] != sizes[1])
    return c.error() << "the weights' " << w.getDimSize(1)
                     << " columns do not split into Q, K and V of equal Q "
                        "and K widths (qkv_hidden_sizes)";
  if (heads <= 0 || sizes[0] % heads != 0 || sizes[2] % heads != 0)
    return c.error() << "num_heads " << heads
                     << " does not divide the Q and V widths " << sizes[0]
                     << " and " << sizes[2];
  int64_t headQ = sizes[0] / heads, headV = sizes[2] / heads;
  float scale = c.attrFloat("scale", 0.0f);
  if (scale == 0)
    scale = 1.0f / std::sqrt(float(headQ));
  double filter = c.attrFloat("mask_filter_value", -10000.0f);

  Emitter e(c);
  Value proj = e.binary<MatMulOp>(c.input(0), c.input(1));
  if (c.input(2))
    proj = e.binary<AddOp>(proj, c.input(2));
  if (!e.ok({proj}))
    return failure();
  FailureOr<SmallVector<Value>> parts = c.createInferred<SplitOp>(
      proj, {c.named("axis", c.b.getI64IntegerAttr(2)),
             c.named("split", c.b.getDenseI64ArrayAttr(sizes))});
  if (failed(parts))
    return failure();
  Value q = e.transpose(e.reshape((*parts)[0], {batch, seq, heads, headQ}),
                        {0, 2, 1, 3});
  Value kt = e.transpose(e.reshape((*parts)[1], {batch, seq, heads, headQ}),
                         {0, 2, 3, 1});
  Value v = e.transpose(e.reshape((*parts)[2], {batch, seq, heads, headV}),
                        {0, 2, 1, 3});
  Type elem = in.getElementType();
  Value scores =
      e.binary<MulOp>(e.binary<MatMulOp>(q, kt), e.scalar(elem, scale));
  if (Value mask = c.input(3))
    scores = e.binary<AddOp>(
        scores, e.cast(attentionMask(c, e, mask, batch, seq, filter), elem));
  if (Value bias = c.input(5))
    scores = e.binary<AddOp>(scores, bias);
  if (c.attrInt("unidirectional", 0) != 0) {
    SmallVector<float> causal;
    for (int64_t i = 0; i < seq; ++i)
      for (int64_t j = 0; j < seq; ++j)
        causal.push_back(j > i ? float(filter) : 0.0f);
    auto t = RankedTensorType::get({1, 1, seq, seq}, c.b.getF32Type());
    scores = e.binary<AddOp>(
        scores,
        e.cast(e.constant(DenseElementsAttr::get(t, ArrayRef<float>(causal))),
               elem));
  }
  if (!e.ok({scores}))
    return failure();
  Value probs = e.softmax(scores, -1);
  Value ctx = e.transpose(e.binary<MatMulOp>(probs, v), {0, 2, 1, 3});
  return e.finish({e.reshape(ctx, {batch, seq, heads * headV})}, results);
}

} // namespace

void addContribImporters(std::vector<OpTableEntry> &t) {
  const char *ms = "com.microsoft";
  t.push_back({"Attention", 1, importMsAttention,
               "MatMul, Split, heads, Softmax attention", ms});
  t.push_back({"BiasGelu", 1, importBiasGelu, "onnx.Add, onnx.Gelu", ms});
  t.push_back({"EmbedLayerNormalization", 1, importEmbedLayerNorm,
               "onnx.Gather, onnx.Add, onnx.LayerNormalization", ms});
  t.push_back({"FastGelu", 1, importFastGelu, "onnx.Gelu (tanh)", ms});
  t.push_back({"Gelu", 1, importMsGelu, "onnx.Gelu", ms});
  t.push_back({"QuickGelu", 1, importQuickGelu, "onnx.Mul, onnx.Sigmoid", ms});
  t.push_back({"SkipLayerNormalization", 1, importSkipLayerNorm,
               "onnx.Add, onnx.LayerNormalization", ms});
  t.push_back({"SkipSimplifiedLayerNormalization", 1,
               importSkipSimplifiedLayerNorm, "onnx.Add, RMS norm ops", ms});
  // ONNX Runtime registers its RMS norm in the default domain.
  t.push_back({"SimplifiedLayerNormalization", 1, importSimplifiedLayerNorm,
               "RMS norm ops (ONNX Runtime)", ""});
}

} // namespace tpc
