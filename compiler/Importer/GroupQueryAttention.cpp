//===- GroupQueryAttention.cpp - ONNX Runtime's GroupQueryAttention -------===//
//
// com.microsoft GroupQueryAttention, the attention onnxruntime-genai's model
// builder writes: query (Q, K and V packed when key and value are left
// out), past_key / past_value [B, kv, P, d], seqlens_k (per batch the index
// of the last token), total_sequence_length, the rotary caches. Imported as
// the ops of the standard Attention: rotary on Q and K, present = past ++
// new, kv heads repeated, softmax(Q K^T * scale (softcapped) + bias) V.
//
// Positions and the mask follow onnxruntime's CPU kernel: with no past
// (the first prompt) the new tokens are at 0..S-1; otherwise batch b has
// seqlens_k[b] + 1 - S tokens of its past, the new ones follow them, query s
// attends to its past tokens and to the new ones up to itself (and, with a
// local window, to the last local_window_size + 1 of those). The new keys
// and values are written after the whole past buffer, so the present of a
// batch whose past is shorter than the buffer differs from onnxruntime's
// (which writes them right after its tokens); the output does not. A
// decode step (`tpc compile --kv-cache`) writes them at their positions,
// as onnxruntime does.
//
//===----------------------------------------------------------------------===//
#include "compiler/Importer/AttentionParts.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace tpc {
using namespace onnx;

namespace {

using Results = SmallVectorImpl<Value>;

LogicalResult importGroupQueryAttention(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(1)))
    return failure();
  int64_t heads = c.attrInt("num_heads", 0);
  int64_t kvHeads = c.attrInt("kv_num_heads", 0);
  if (heads <= 0 || kvHeads <= 0 || heads % kvHeads != 0)
    return c.error() << "num_heads " << heads << " must be a positive "
                     << "multiple of kv_num_heads " << kvHeads;
  if (c.input(11))
    return c.error() << "head_sink is not supported";
  if (c.attrInt("smooth_softmax", 0) != 0)
    return c.error() << "smooth_softmax is not supported";
  if (c.attrInt("qk_output", 0) != 0 || c.wantsOutput(3))
    return c.error() << "the output_qk output is not supported";
  if (!c.input(5))
    return c.error() << "seqlens_k (input 5) is required";
  RankedTensorType qt = c.inputType(0);
  if (qt.getRank() != 3)
    return c.error() << "query must be [batch, sequence, hidden], not " << qt;
  Type elem = qt.getElementType();
  if (!isa<FloatType>(elem))
    return c.error() << "query must be a float tensor, not " << qt;
  int64_t batch = qt.getDimSize(0), seq = qt.getDimSize(1);
  Emitter e(c);
  Value q = c.input(0), k = c.input(1), v = c.input(2);
  int64_t head;
  if (!k && !v) {
    // Packed [Q | K | V] along the hidden axis.
    if (qt.getDimSize(2) % (heads + 2 * kvHeads) != 0)
      return c.error() << "the packed query's " << qt.getDimSize(2)
                       << " columns are not (num_heads + 2 kv_num_heads) "
                          "heads";
    head = qt.getDimSize(2) / (heads + 2 * kvHeads);
    SmallVector<int64_t> sizes{heads * head, kvHeads * head, kvHeads * head};
    FailureOr<SmallVector<Value>> parts = c.createInferred<SplitOp>(
        q, {c.named("axis", c.b.getI64IntegerAttr(2)),
            c.named("split", c.b.getDenseI64ArrayAttr(sizes))});
    if (failed(parts))
      return failure();
    q = (*parts)[0];
    k = (*parts)[1];
    v = (*parts)[2];
  } else if (k && v) {
    head = qt.getDimSize(2) / heads;
    if (qt.getDimSize(2) % heads != 0 ||
        c.inputType(1).getShape() !=
            ArrayRef<int64_t>{batch, seq, kvHeads * head} ||
        c.inputType(2).getShape() != c.inputType(1).getShape())
      return c.error() << "query " << qt << ", key " << c.inputType(1)
                       << " and value " << c.inputType(2)
                       << " do not have num_heads and kv_num_heads heads of "
                          "one size";
  } else {
    return c.error() << "key and value must be given together (or both left "
                        "out, with Q, K and V packed in query)";
  }

  // Past tokens per batch, and the positions of the new ones.
  if (bool(c.input(3)) != bool(c.input(4)))
    return c.error() << "past_key and past_value must be given together";
  int64_t past = 0;
  if (c.input(3)) {
    auto pt = c.inputType(3);
    if (pt.getRank() != 4 || pt.getDimSize(0) != batch ||
        pt.getDimSize(1) != kvHeads || pt.getDimSize(3) != head ||
        c.inputType(4) != pt)
      return c.error() << "past_key and past_value must be [" << batch
                       << ", " << kvHeads << ", past, " << head << "], not "
                       << pt << " and " << c.inputType(4);
    past = pt.getDimSize(2);
  }
  Type i64 = c.b.getI64Type();
  Value pastLen = past == 0
                      ? e.constant(DenseElementsAttr::get(
                            RankedTensorType::get({batch}, i64),
                            c.b.getI64IntegerAttr(0)))
                      : e.binary<SubOp>(e.cast(c.input(5), i64),
                                        e.scalar(i64, double(seq - 1)));
  Value pastCol = e.reshape(pastLen, {batch, 1});
  Value positions = c.input(9)
                        ? e.cast(c.input(9), i64)
                        : e.binary<AddOp>(pastCol, e.range({1, seq}, i64));

  Value q4 = e.reshape(q, {batch, seq, heads, head});
  Value k4 = e.reshape(k, {batch, seq, kvHeads, head});
  if (c.attrInt("do_rotary", 0) != 0) {
    if (!c.input(7) || !c.input(8))
      return c.error() << "do_rotary needs cos_cache and sin_cache";
    RankedTensorType ct = c.inputType(7);
    int64_t rot = ct.getRank() == 2 ? 2 * ct.getDimSize(1) : 0;
    if (rot <= 0 || rot > head || c.inputType(8) != ct)
      return c.error() << "the rotary caches must be [positions, at most "
                       << head / 2 << "], not " << ct << " and "
                       << c.inputType(8);
    Value cosC = e.gather(c.input(7), positions, 0);
    Value sinC = e.gather(c.input(8), positions, 0);
    bool interleaved = c.attrInt("rotary_interleaved", 0) != 0;
    q4 = rotateHeads(e, q4, cosC, sinC, rot, interleaved);
    k4 = rotateHeads(e, k4, cosC, sinC, rot, interleaved);
  }
  Value qh = e.transpose(q4, {0, 2, 1, 3});
  Value kh = e.transpose(k4, {0, 2, 1, 3});
  Value vh = toHeads(e, v, kvHeads);
  if (past) {
    kh = e.concat({c.input(3), kh}, 2);
    vh = e.concat({c.input(4), vh}, 2);
  }
  if (!e.ok({qh, kh, vh}))
    return failure();
  Value presentK = kh, presentV = vh;
  int64_t total = past + seq;

  Value past4 = e.reshape(pastLen, {batch, 1, 1, 1});
  Value queryPos = e.binary<AddOp>(past4, e.range({1, 1, seq, 1}, i64));
  Value keyPos, allowed;
  if (c.decodeStep) {
    // A decode step's cache holds token j at slot j (the new ones are
    // written at their positions), so key j is the token at position j.
    keyPos = e.range({1, 1, 1, total}, i64);
    allowed = e.binary<LessOrEqualOp>(keyPos, queryPos);
  } else {
    // Key j's position: j in the past buffer, pastLen + (j - past) after
    // it; a past slot beyond the batch's past holds no token.
    SmallVector<int64_t> slot(size_t(total), 0), isPast(size_t(total), 0);
    for (int64_t j = 0; j < total; ++j) {
      slot[size_t(j)] = j < past ? j : j - past;
      isPast[size_t(j)] = j < past;
    }
    auto row = [&](ArrayRef<int64_t> values) {
      return e.constant(DenseElementsAttr::get(
          RankedTensorType::get({1, 1, 1, total}, i64), values));
    };
    Value inPast = e.binary<EqualOp>(row(isPast), e.scalar(i64, 1));
    keyPos = e.where(inPast, row(slot), e.binary<AddOp>(past4, row(slot)));
    Value held = e.binary<OrOp>(e.unary<NotOp>(inPast),
                                e.binary<LessOp>(row(slot), past4));
    allowed =
        e.binary<AndOp>(held, e.binary<LessOrEqualOp>(keyPos, queryPos));
  }
  int64_t window = c.attrInt("local_window_size", -1);
  if (window >= 0)
    allowed = e.binary<AndOp>(
        allowed, e.binary<LessOrEqualOp>(e.binary<SubOp>(queryPos, keyPos),
                                         e.scalar(i64, double(window))));
  float ninf = -std::numeric_limits<float>::infinity();
  Value bias = e.where(allowed, e.scalar(elem, 0), e.scalar(elem, ninf));
  if (Value extra = c.input(10))
    bias = e.binary<AddOp>(bias, extra);

  float scale = c.attrFloat("scale", 0.0f);
  if (scale == 0)
    scale = 1.0f / std::sqrt(float(head));
  Value scores = attentionScores(e, qh, repeatKVHeads(e, kh, heads), scale,
                                 c.attrFloat("softcap", 0.0f));
  Value probs = e.softmax(e.binary<AddOp>(scores, bias), -1);
  Value y = e.binary<MatMulOp>(probs, repeatKVHeads(e, vh, heads));
  y = e.reshape(e.transpose(y, {0, 2, 1, 3}), {batch, seq, heads * head});
  return e.finish({y, presentK, presentV}, results);
}

} // namespace

void addGroupQueryAttentionImporters(std::vector<OpTableEntry> &t) {
  t.push_back({"GroupQueryAttention", 1, importGroupQueryAttention,
               "rotary, heads, MatMul, bias, Softmax, MatMul",
               kMicrosoftDomain});
}

} // namespace tpc
