//===- AttentionImporters.cpp - Opset 23's transformer ops ----------------===//
//
// Attention (23, 24, 25), RMSNormalization (23) and RotaryEmbedding (23),
// imported as the onnx ops of their function bodies: heads cut by Reshape and
// Transpose, grouped kv heads repeated by Reshape / Expand / Reshape, the
// masks as one additive bias, softmax, the rotary halves by Slice and
// Concat. Sharding then cuts heads as it does for exported graphs, and the
// fusion passes give back the fused kernels per rank.
//
//===----------------------------------------------------------------------===//
#include "compiler/Importer/AttentionParts.h"

#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace tpc {
using namespace onnx;

Value toHeads(Emitter &e, Value v, int64_t heads) {
  auto t = cast<RankedTensorType>(v.getType());
  int64_t d = t.getDimSize(2) / heads;
  return e.transpose(
      e.reshape(v, {t.getDimSize(0), t.getDimSize(1), heads, d}),
      {0, 2, 1, 3});
}

Value repeatKVHeads(Emitter &e, Value x, int64_t qHeads) {
  if (!e.ok({x}))
    return Value();
  auto t = cast<RankedTensorType>(x.getType());
  int64_t batch = t.getDimSize(0), kvHeads = t.getDimSize(1);
  int64_t len = t.getDimSize(2), d = t.getDimSize(3);
  if (kvHeads == qHeads)
    return x;
  int64_t rep = qHeads / kvHeads;
  Value r = e.reshape(x, {batch, kvHeads, 1, len, d});
  r = e.expand(r, {batch, kvHeads, rep, len, d});
  return e.reshape(r, {batch, qHeads, len, d});
}

Value rotateHeads(Emitter &e, Value x, Value cosC, Value sinC, int64_t rot,
                  bool interleaved) {
  if (!e.ok({x, cosC, sinC}))
    return Value();
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t batch = xt.getDimSize(0), seq = xt.getDimSize(1);
  int64_t heads = xt.getDimSize(2), head = xt.getDimSize(3);
  auto ct = cast<RankedTensorType>(cosC.getType());
  cosC = e.reshape(cosC, {ct.getDimSize(0), ct.getDimSize(1), 1, rot / 2});
  sinC = e.reshape(sinC, {ct.getDimSize(0), ct.getDimSize(1), 1, rot / 2});
  Value xr = rot == head ? x : e.slice(x, 3, 0, rot);
  Value x1 = interleaved ? e.slice(xr, 3, 0, rot, 2) : e.slice(xr, 3, 0, rot / 2);
  Value x2 =
      interleaved ? e.slice(xr, 3, 1, rot, 2) : e.slice(xr, 3, rot / 2, rot);
  Value real = e.binary<SubOp>(e.binary<MulOp>(cosC, x1),
                               e.binary<MulOp>(sinC, x2));
  Value imag = e.binary<AddOp>(e.binary<MulOp>(sinC, x1),
                               e.binary<MulOp>(cosC, x2));
  Value rotated;
  if (interleaved) {
    SmallVector<int64_t> pair{batch, seq, heads, rot / 2, 1};
    rotated = e.reshape(e.concat({e.reshape(real, pair), e.reshape(imag, pair)},
                                 4),
                        {batch, seq, heads, rot});
  } else {
    rotated = e.concat({real, imag}, 3);
  }
  return rot == head ? rotated
                     : e.concat({rotated, e.slice(x, 3, rot, head)}, 3);
}

Value attentionScores(Emitter &e, Value q, Value k, float scale,
                      float softcap) {
  if (!e.ok({q, k}))
    return Value();
  Type elem = cast<RankedTensorType>(q.getType()).getElementType();
  Value scores = e.binary<MulOp>(
      e.binary<MatMulOp>(q, e.transpose(k, {0, 1, 3, 2})),
      e.scalar(elem, scale));
  if (softcap > 0)
    scores = e.binary<MulOp>(
        e.unary<TanhOp>(e.binary<DivOp>(scores, e.scalar(elem, softcap))),
        e.scalar(elem, softcap));
  return scores;
}

namespace {

using Results = SmallVectorImpl<Value>;

/// The additive bias [.., q, kv] for the scores: a boolean mask (true
/// attends) as 0 / -inf, a float mask as it is, padded with -inf to kv keys.
Value maskBias(NodeContext &c, Emitter &e, Value mask, Type elem,
               int64_t kvLen) {
  auto t = cast<RankedTensorType>(mask.getType());
  float ninf = -std::numeric_limits<float>::infinity();
  Value bias = t.getElementType().isInteger(1)
                   ? e.where(mask, e.scalar(elem, 0), e.scalar(elem, ninf))
                   : e.cast(mask, elem);
  int64_t have = t.getDimSize(t.getRank() - 1);
  if (have < kvLen) {
    SmallVector<int64_t> shape(t.getShape());
    shape.back() = kvLen - have;
    auto padType = RankedTensorType::get(shape, elem);
    Value pad = e.constant(
        DenseElementsAttr::get(padType, c.b.getFloatAttr(elem, ninf)));
    bias = e.concat({bias, pad}, t.getRank() - 1);
  }
  return bias;
}

/// A constant [q, kv] bias: 0 where key j may be attended by query i, -inf
/// elsewhere. `causal` keeps j <= i + offset; the windows keep
/// i + offset - left <= j <= i + offset + right (a bound of -1 is open).
DenseElementsAttr staticBias(NodeContext &c, Type elem, int64_t q, int64_t kv,
                             bool causal, int64_t offset, int64_t left,
                             int64_t right, bool &anyRowMasked) {
  SmallVector<APFloat> values;
  const llvm::fltSemantics &sem = cast<FloatType>(elem).getFloatSemantics();
  anyRowMasked = false;
  for (int64_t i = 0; i < q; ++i) {
    bool rowOpen = false;
    for (int64_t j = 0; j < kv; ++j) {
      int64_t diff = i + offset - j;
      bool allowed = (!causal || diff >= 0) && (left < 0 || diff <= left) &&
                     (right < 0 || -diff <= right);
      rowOpen |= allowed;
      values.push_back(allowed ? APFloat::getZero(sem)
                               : APFloat::getInf(sem, /*Negative=*/true));
    }
    anyRowMasked |= !rowOpen;
  }
  return DenseElementsAttr::get(RankedTensorType::get({q, kv}, elem), values);
}

/// Attention: Q [B, q_heads, Sq, d] and K, V [B, kv_heads, Skv, d] (or 3-D
/// [B, S, heads * d] with q_num_heads / kv_num_heads), optional attn_mask,
/// past_key / past_value (concatenated before K and V and returned as
/// present), nonpad_kv_seqlen (24), sliding windows (25). softmax(Q K^T *
/// scale, softcapped, + bias) V, with fully masked rows giving 0.
LogicalResult importAttention(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(3)))
    return failure();
  RankedTensorType qt = c.inputType(0), kt = c.inputType(1),
                   vt = c.inputType(2);
  int64_t rank = qt.getRank();
  if ((rank != 3 && rank != 4) || kt.getRank() != rank ||
      vt.getRank() != rank)
    return c.error() << "Q, K and V must all be 3-D or all 4-D, not " << qt
                     << ", " << kt << ", " << vt;
  Type elem = qt.getElementType();
  if (!isa<FloatType>(elem))
    return c.error() << "Q must be a float tensor, not " << qt;
  int64_t qHeads = c.attrInt("q_num_heads", 0);
  int64_t kvHeads = c.attrInt("kv_num_heads", 0);
  Emitter e(c);
  Value q = c.input(0), k = c.input(1), v = c.input(2);
  if (rank == 3) {
    if (qHeads <= 0 || kvHeads <= 0 || qt.getDimSize(2) % qHeads != 0 ||
        kt.getDimSize(2) % kvHeads != 0 || vt.getDimSize(2) % kvHeads != 0)
      return c.error() << "3-D inputs need q_num_heads and kv_num_heads that "
                          "divide the hidden sizes (q_num_heads "
                       << qHeads << ", kv_num_heads " << kvHeads << ")";
    q = toHeads(e, q, qHeads);
    k = toHeads(e, k, kvHeads);
    v = toHeads(e, v, kvHeads);
  } else {
    qHeads = qt.getDimSize(1);
    kvHeads = kt.getDimSize(1);
  }
  if (!e.ok({q, k, v}))
    return failure();
  int64_t batch = qt.getDimSize(0);
  int64_t qLen = cast<RankedTensorType>(q.getType()).getDimSize(2);
  int64_t headQ = cast<RankedTensorType>(q.getType()).getDimSize(3);
  if (kvHeads <= 0 || qHeads % kvHeads != 0 ||
      cast<RankedTensorType>(v.getType()).getDimSize(1) != kvHeads)
    return c.error() << "the " << qHeads << " query heads are not a multiple "
                     << "of the " << kvHeads << " key/value heads";

  // The cache: past ++ new along the sequence axis.
  int64_t pastLen = 0;
  if (bool(c.input(4)) != bool(c.input(5)))
    return c.error() << "past_key and past_value must be given together";
  if (c.input(4)) {
    if (c.inputType(4).getRank() != 4 || c.inputType(5).getRank() != 4)
      return c.error() << "past_key and past_value must be 4-D [batch, "
                          "kv_heads, past, head_size], not "
                       << c.inputType(4) << " and " << c.inputType(5);
    pastLen = c.inputType(4).getDimSize(2);
    k = e.concat({c.input(4), k}, 2);
    v = e.concat({c.input(5), v}, 2);
    if (!e.ok({k, v}))
      return failure();
  }
  Value presentK = k, presentV = v;
  int64_t kvLen = cast<RankedTensorType>(k.getType()).getDimSize(2);

  // Grouped kv heads, each repeated for its q heads: [h0, h0, h1, h1, ...].
  k = repeatKVHeads(e, k, qHeads);
  v = repeatKVHeads(e, v, qHeads);

  float scale = c.attrFloat("scale", 0.0f);
  if (!c.attr("scale"))
    scale = 1.0f / std::sqrt(float(headQ));
  Value scores =
      attentionScores(e, q, k, scale, c.attrFloat("softcap", 0.0f));
  Value qkRaw = scores;

  // The additive bias: the mask, the causal and window masks (constants when
  // their offset is static), the padding of nonpad_kv_seqlen.
  bool causal = c.attrInt("is_causal", 0) != 0;
  int64_t left = c.attrInt("left_window_size", -1);
  int64_t right = c.attrInt("right_window_size", -1);
  Value nonpad = c.input(6);
  if (nonpad && c.input(4))
    return c.error() << "nonpad_kv_seqlen cannot be combined with past_key";
  Value bias;
  bool runtimeBias = false;
  if (Value mask = c.input(3)) {
    auto mt = cast<RankedTensorType>(mask.getType());
    if (mt.getRank() < 1)
      return c.error() << "attn_mask must have rank >= 1 (its last dim is "
                          "the key length; it broadcasts over the rest), got "
                       << mt;
    if (mt.getDimSize(mt.getRank() - 1) > kvLen)
      return c.error() << "attn_mask " << mt << " has more keys than the "
                       << kvLen << " attended";
    bias = maskBias(c, e, mask, elem, kvLen);
    runtimeBias = !matchPattern(mask, m_Constant());
  }
  bool needGuard = runtimeBias;
  if (causal || left >= 0 || right >= 0) {
    if (nonpad) {
      // Per batch, the frontier is nonpad_kv_seqlen[b] - Sq: with diff =
      // i + nonpad[b] - Sq - j, causal keeps diff >= 0, the windows
      // diff <= left and -diff <= right.
      Type i64 = c.b.getI64Type();
      Value qi = e.range({1, 1, qLen, 1}, i64, -qLen);
      Value kj = e.range({1, 1, 1, kvLen}, i64);
      Value frontier = e.binary<AddOp>(
          qi, e.reshape(e.cast(nonpad, i64), {batch, 1, 1, 1}));
      Value diff = e.binary<SubOp>(frontier, kj);
      Value allowed;
      auto both = [&](Value a, Value b) {
        return a ? e.binary<AndOp>(a, b) : b;
      };
      if (causal)
        allowed = both(allowed,
                       e.binary<GreaterOrEqualOp>(diff, e.scalar(i64, 0)));
      if (left >= 0)
        allowed = both(allowed,
                       e.binary<LessOrEqualOp>(diff, e.scalar(i64, left)));
      if (right >= 0)
        allowed = both(allowed, e.binary<GreaterOrEqualOp>(
                                    diff, e.scalar(i64, -right)));
      Value causalBias =
          e.where(allowed, e.scalar(elem, 0),
                  e.scalar(elem, -std::numeric_limits<float>::infinity()));
      bias = bias ? e.binary<AddOp>(bias, causalBias) : causalBias;
      needGuard = true;
    } else {
      bool rowMasked = false;
      DenseElementsAttr cb = staticBias(c, elem, qLen, kvLen, causal, pastLen,
                                        left, right, rowMasked);
      Value causalBias = e.constant(cb);
      bias = bias ? e.binary<AddOp>(bias, causalBias) : causalBias;
      needGuard |= rowMasked;
    }
  }
  if (nonpad) {
    Type i64 = c.b.getI64Type();
    Value kj = e.range({1, kvLen}, i64);
    Value valid = e.binary<LessOp>(kj, e.reshape(e.cast(nonpad, i64),
                                                 {batch, 1}));
    Value pad = e.reshape(
        e.where(valid, e.scalar(elem, 0),
                e.scalar(elem, -std::numeric_limits<float>::infinity())),
        {batch, 1, 1, kvLen});
    bias = bias ? e.binary<AddOp>(bias, pad) : pad;
    needGuard = true;
  }
  if (bias)
    scores = e.binary<AddOp>(scores, bias);
  Value qkBiased = scores;

  int64_t precision = c.attrInt("softmax_precision", 0);
  Type softmaxType = elem;
  if (precision != 0) {
    softmaxType = onnxElementType(c.b.getContext(), precision);
    if (!softmaxType || !isa<FloatType>(softmaxType))
      return c.error() << "softmax_precision " << precision
                       << " is not a float type tpc supports";
  }
  Value probs = e.cast(e.softmax(e.cast(scores, softmaxType), -1), elem);
  if (needGuard && bias) {
    // A query whose every key is masked has no distribution: its row is 0.
    Value rowMax = e.reduceMax(bias, {-1});
    Value none = e.binary<EqualOp>(
        rowMax, e.scalar(elem, -std::numeric_limits<float>::infinity()));
    probs = e.where(none, e.scalar(elem, 0), probs);
  }
  Value y = e.binary<MatMulOp>(probs, v);
  if (rank == 3) {
    int64_t headV = cast<RankedTensorType>(c.input(2).getType()).getDimSize(2) /
                    kvHeads;
    y = e.reshape(e.transpose(y, {0, 2, 1, 3}), {batch, qLen, qHeads * headV});
  }
  Value qk;
  if (c.wantsOutput(3)) {
    switch (c.attrInt("qk_matmul_output_mode", 0)) {
    case 0:
    case 1:
      qk = qkRaw;
      break;
    case 2:
      qk = qkBiased;
      break;
    case 3:
      qk = probs;
      break;
    default:
      return c.error() << "qk_matmul_output_mode "
                       << c.attrInt("qk_matmul_output_mode", 0)
                       << " is not 0, 1, 2 or 3";
    }
  }
  return e.finish({y, presentK, presentV, qk}, results);
}

/// RMSNormalization: Cast(X_f / sqrt(mean(X_f^2) + epsilon), T) * scale over
/// the dims [axis, rank), X_f being X in float (stash_type 1).
LogicalResult importRMSNormalization(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  if (c.attrInt("stash_type", 1) != 1)
    return c.error() << "stash_type " << c.attrInt("stash_type", 1)
                     << " is not supported; tpc normalizes in float "
                        "(stash_type 1)";
  int64_t rank = c.inputType(0).getRank();
  FailureOr<int64_t> axis = normalizeAxis(c.attrInt("axis", -1), rank);
  if (failed(axis))
    return c.error() << "axis " << c.attrInt("axis", -1)
                     << " is out of range for rank " << rank;
  Emitter e(c);
  return e.finish({e.rmsNorm(c.input(0), c.input(1),
                             c.attrFloat("epsilon", 1e-5f), *axis)},
                  results);
}

/// RotaryEmbedding: X [B, heads, S, d] or [B, S, heads * d] (num_heads);
/// the first rotary_embedding_dim dims of each head are rotated by the
/// cos / sin caches (indexed by position_ids when given), as halves or
/// interleaved pairs; the rest pass through.
LogicalResult importRotaryEmbedding(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(3)))
    return failure();
  RankedTensorType xt = c.inputType(0);
  int64_t rank = xt.getRank();
  if (rank != 3 && rank != 4)
    return c.error() << "X must be 3-D or 4-D, not " << xt;
  Emitter e(c);
  Value x = c.input(0);
  int64_t batch = xt.getDimSize(0), heads, seq, head;
  if (rank == 4) {
    heads = xt.getDimSize(1);
    seq = xt.getDimSize(2);
    head = xt.getDimSize(3);
    x = e.transpose(x, {0, 2, 1, 3});
  } else {
    heads = c.attrInt("num_heads", 0);
    seq = xt.getDimSize(1);
    if (heads <= 0 || xt.getDimSize(2) % heads != 0)
      return c.error() << "3-D X needs num_heads dividing its hidden size "
                       << xt.getDimSize(2) << " (num_heads " << heads << ")";
    head = xt.getDimSize(2) / heads;
    x = e.reshape(x, {batch, seq, heads, head});
  }
  int64_t rot = c.attrInt("rotary_embedding_dim", 0);
  if (rot == 0)
    rot = head;
  if (rot % 2 != 0 || rot > head)
    return c.error() << "rotary_embedding_dim " << rot
                     << " must be even and at most the head size " << head;
  Value cosC = c.input(1), sinC = c.input(2);
  if (Value pos = c.input(3)) {
    cosC = e.gather(cosC, pos, 0);
    sinC = e.gather(sinC, pos, 0);
  }
  if (!e.ok({cosC, sinC}))
    return failure();
  auto ct = cast<RankedTensorType>(cosC.getType());
  if (ct.getRank() != 3 || ct.getDimSize(2) != rot / 2)
    return c.error() << "the cos/sin caches must give [batch, sequence, "
                     << rot / 2 << "] per position, not " << ct;
  Value y = rotateHeads(e, x, cosC, sinC, rot, c.attrInt("interleaved", 0) != 0);
  y = rank == 4 ? e.transpose(y, {0, 2, 1, 3}) : e.reshape(y, xt.getShape());
  return e.finish({y}, results);
}

} // namespace

void addAttentionImporters(std::vector<OpTableEntry> &t) {
  // 24 added nonpad_kv_seqlen, 25 the sliding window bounds.
  for (int v : {23, 24, 25})
    t.push_back({"Attention", v, importAttention,
                 "heads, MatMul, bias, Softmax, MatMul"});
  t.push_back({"RMSNormalization", 23, importRMSNormalization,
               "RMS norm ops"});
  t.push_back({"RotaryEmbedding", 23, importRotaryEmbedding,
               "Slice, Mul, Sub, Add, Concat"});
}

} // namespace tpc
