//===- FuseAttention.cpp - scaled dot-product attention -------------------===//
//
// softmax(scale * Q K^T + mask) V as exporters write it: the scale on the
// scores, on Q or on K (or split between them), masks added or applied with
// Where, K^T as a Transpose of K, and GQA's repeat of the kv heads.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "passes/fusion/Match.h"
#include "passes/fusion/Passes.h"

#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>

namespace tpc {
#define GEN_PASS_DEF_FUSEATTENTIONPASS
#include "passes/fusion/Passes.h.inc"
} // namespace tpc

using namespace mlir;
using namespace tpc::fusion;

namespace tpc {
namespace {

/// Scores this negative (or -inf) mean "masked"; exporters write
/// finfo(float).min, -1e4 (older BERTs) or -inf.
constexpr double kMaskedBelow = -1e4;

/// What the scores chain between Q K^T and the softmax holds.
struct Scores {
  onnx::MatMulOp qk;
  double scale = 1.0;
  SmallVector<Value, 2> floatMasks;
  Value boolMask;
};

/// Peels Mul/Div by constants, Add of a mask and Where(mask, s, -big) off
/// `s` down to the Q K^T MatMul. Every op of the chain has a single use.
static bool peelScores(Value s, Scores &st) {
  if (!s.hasOneUse())
    return false;
  Operation *op = s.getDefiningOp();
  if (!op)
    return false;
  if (auto mm = dyn_cast<onnx::MatMulOp>(op)) {
    st.qk = mm;
    return true;
  }
  if (auto mul = dyn_cast<onnx::MulOp>(op)) {
    for (int i = 0; i < 2; ++i)
      if (std::optional<double> c = splatValue(op->getOperand(1 - i));
          c && op->getOperand(i).getType() == mul.getType()) {
        st.scale *= *c;
        return peelScores(op->getOperand(i), st);
      }
    return false;
  }
  if (auto div = dyn_cast<onnx::DivOp>(op)) {
    std::optional<double> c = splatValue(div.getB());
    if (!c || *c == 0 || div.getA().getType() != div.getType())
      return false;
    st.scale /= *c;
    return peelScores(div.getA(), st);
  }
  if (auto add = dyn_cast<onnx::AddOp>(op)) {
    for (int i = 0; i < 2; ++i) {
      if (op->getOperand(i).getType() != add.getType())
        continue;
      Scores attempt = st;
      attempt.floatMasks.push_back(op->getOperand(1 - i));
      if (peelScores(op->getOperand(i), attempt)) {
        st = attempt;
        return true;
      }
    }
    return false;
  }
  if (auto where = dyn_cast<onnx::WhereOp>(op)) {
    std::optional<double> fill = splatValue(where.getY());
    if (st.boolMask || !fill || *fill > kMaskedBelow ||
        where.getX().getType() != where.getType())
      return false;
    st.boolMask = where.getCondition();
    return peelScores(where.getX(), st);
  }
  return false;
}

/// Peels Mul/Div by constants off one side of Q K^T into `scale`.
static Value peelScale(Value v, double &scale) {
  while (v.hasOneUse()) {
    Operation *op = v.getDefiningOp();
    if (auto mul = dyn_cast_or_null<onnx::MulOp>(op)) {
      std::optional<double> a = splatValue(mul.getA()), b = splatValue(mul.getB());
      Value x = b ? mul.getA() : a ? mul.getB() : Value();
      if (!x || x.getType() != mul.getType())
        return v;
      scale *= b ? *b : *a;
      v = x;
    } else if (auto div = dyn_cast_or_null<onnx::DivOp>(op)) {
      std::optional<double> c = splatValue(div.getB());
      if (!c || *c == 0 || div.getA().getType() != div.getType())
        return v;
      scale /= *c;
      v = div.getA();
    } else {
      return v;
    }
  }
  return v;
}

/// GQA's repeat_kv: Reshape [B,G,L,D] -> [B,G,1,L,D], Expand to [B,G,n,L,D],
/// Reshape to [B,G*n,L,D]. Returns the [B,G,L,D] value and n.
static std::optional<std::pair<Value, int64_t>> matchRepeatKV(Value v) {
  auto merge = singleUseDef<onnx::ReshapeOp>(v);
  auto expand = merge ? singleUseDef<onnx::ExpandOp>(merge.getData()) : nullptr;
  auto insert =
      expand ? singleUseDef<onnx::ReshapeOp>(expand.getInput()) : nullptr;
  if (!insert)
    return std::nullopt;
  ArrayRef<int64_t> k = insert.getData().getType().getShape();
  ArrayRef<int64_t> u = insert.getType().getShape();
  ArrayRef<int64_t> e = expand.getType().getShape();
  ArrayRef<int64_t> m = merge.getType().getShape();
  if (k.size() != 4 || u.size() != 5 || e.size() != 5 || m.size() != 4)
    return std::nullopt;
  int64_t n = e[2];
  bool ok = u[0] == k[0] && u[1] == k[1] && u[2] == 1 && u[3] == k[2] &&
            u[4] == k[3] && e[0] == k[0] && e[1] == k[1] && e[3] == k[2] &&
            e[4] == k[3] && m[0] == k[0] && m[1] == k[1] * n && m[2] == k[2] &&
            m[3] == k[3] && n > 0;
  if (!ok)
    return std::nullopt;
  return std::make_pair(insert.getData(), n);
}

/// A K or V operand of the fused op: kv heads [start, end) of `base`
/// ([B, G, L, D]); a range narrower than G becomes a Slice.
struct KVSource {
  Value base;
  int64_t start = 0, end = 0;
};

static KVSource whole(Value v) {
  return {v, 0, cast<RankedTensorType>(v.getType()).getShape()[1]};
}

/// The q heads [start, end) of a single-use Slice on axis 1 with step 1.
static std::optional<std::pair<int64_t, int64_t>> headSlice(Value v) {
  auto slice = singleUseDef<onnx::SliceOp>(v);
  if (!slice || slice.getAxes().size() != 1 || slice.getType().getRank() != 4)
    return std::nullopt;
  int64_t axis = slice.getAxes()[0];
  if ((axis != 1 && axis != -3) || slice.getSteps()[0] != 1)
    return std::nullopt;
  int64_t start = slice.getStarts()[0];
  int64_t size = slice.getType().getShape()[1];
  if (start < 0 || size <= 0 ||
      start + size > slice.getData().getType().getShape()[1])
    return std::nullopt;
  return std::make_pair(start, start + size);
}

/// `repeated` = repeat_kv(k, n) narrowed to q heads [s, e) (the partitioner's
/// slice when kv heads are fewer than ranks), as kv heads of k: one kv head
/// when the range falls in one group, whole groups otherwise.
static std::optional<KVSource> peelSlicedRepeat(Value repeated, int64_t s,
                                                int64_t e) {
  auto rep = matchRepeatKV(repeated);
  if (!rep)
    return std::nullopt;
  auto [k, n] = *rep;
  if (s / n == (e - 1) / n)
    return KVSource{k, s / n, s / n + 1};
  if (s % n == 0 && (e - s) % n == 0)
    return KVSource{k, s / n, e / n};
  return std::nullopt;
}

/// A V operand: repeat_kv looked through, also under the partitioner's
/// head slice.
static KVSource peelValue(Value v) {
  if (auto hs = headSlice(v))
    if (auto src = peelSlicedRepeat(v.getDefiningOp()->getOperand(0),
                                    hs->first, hs->second))
      return *src;
  if (auto rep = matchRepeatKV(v))
    return whole(rep->first);
  return whole(v);
}

/// True when the constant `mask` is exactly the causal mask of [S, L]
/// scores (query i sees keys j <= i) in every [S, L] slice: broadcast over
/// its leading dims, or repeated along them (an exporter's mask expanded to
/// the batch, folded at a static batch size).
static bool isCausalMask(Value mask, int64_t S, int64_t L) {
  DenseElementsAttr attr;
  if (!mask || !matchPattern(mask, m_Constant(&attr)))
    return false;
  ArrayRef<int64_t> s = cast<RankedTensorType>(mask.getType()).getShape();
  if (s.size() < 2 || s[s.size() - 2] != S || s.back() != L || S > L)
    return false;
  // Whether element `idx` (row-major) is a key its query sees.
  auto kept = [&](int64_t idx) {
    int64_t inSlice = idx % (S * L);
    return inSlice % L <= inSlice / L;
  };
  int64_t idx = 0;
  if (attr.getElementType().isInteger(1)) {
    for (bool keep : attr.getValues<bool>()) {
      if (keep != kept(idx))
        return false;
      ++idx;
    }
    return true;
  }
  if (!isa<FloatType>(attr.getElementType()))
    return false;
  for (APFloat f : attr.getValues<APFloat>()) {
    double x = f.convertToDouble();
    bool keep = kept(idx);
    if (keep ? x != 0 : !(x <= kMaskedBelow))
      return false;
    ++idx;
  }
  return true;
}

struct AttentionPattern : OpRewritePattern<onnx::MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::MatMulOp pv,
                                PatternRewriter &rewriter) const override {
    auto softmax = singleUseDef<onnx::SoftmaxOp>(pv.getA());
    // Where(IsNaN(p), 0, p) over the probabilities (the guard PyTorch's
    // SDPA export adds): a row whose softmax is NaN, every key masked,
    // gives zeros instead.
    bool nanToZero = false;
    if (auto guard = singleUseDef<onnx::WhereOp>(pv.getA()); !softmax && guard) {
      auto isNaN = guard.getCondition().getDefiningOp<onnx::IsNaNOp>();
      auto probs = guard.getY().getDefiningOp<onnx::SoftmaxOp>();
      std::optional<double> zero = splatValue(guard.getX());
      if (isNaN && probs && isNaN.getX() == probs.getResult() &&
          isNaN->hasOneUse() && zero && *zero == 0 &&
          llvm::all_of(probs->getUsers(), [&](Operation *u) {
            return u == isNaN.getOperation() || u == guard.getOperation();
          }) &&
          guard.getType() == probs.getType()) {
        softmax = probs;
        nanToZero = true;
      }
    }
    RankedTensorType yType = pv.getType();
    if (!softmax || yType.getRank() != 4 ||
        (softmax.getAxis() != -1 && softmax.getAxis() != 3))
      return failure();
    Scores st;
    if (!peelScores(softmax.getInput(), st))
      return failure();
    Value q = peelScale(st.qk.getA(), st.scale);
    Value kt = peelScale(st.qk.getB(), st.scale);
    // K^T = Transpose(src, perm): K = Transpose(src, perm o [0, 1, 3, 2]).
    // Under the partitioner's head slice of Transpose(repeat_kv(k)), K is
    // the matching kv heads of k.
    Value kSrc = kt;
    SmallVector<int64_t> kPerm = {0, 1, 3, 2};
    std::optional<KVSource> kSliced;
    if (auto hs = headSlice(kt)) {
      // A scaling of K^T may sit between the slice and the transpose
      // (Gemma scales q and k^T apart).
      double kScale = 1;
      Value under = peelScale(kt.getDefiningOp()->getOperand(0), kScale);
      auto t = singleUseDef<onnx::TransposeOp>(under);
      if (t && t.getPerm() == ArrayRef<int64_t>{0, 1, 3, 2})
        kSliced = peelSlicedRepeat(t.getData(), hs->first, hs->second);
      if (kSliced)
        st.scale *= kScale;
    }
    if (kSliced) {
      kPerm = {0, 1, 2, 3};
    } else if (auto t = singleUseDef<onnx::TransposeOp>(kt)) {
      ArrayRef<int64_t> perm = t.getPerm();
      if (perm.size() != 4)
        return failure();
      kSrc = peelScale(t.getData(), st.scale);
      kPerm = {perm[0], perm[1], perm[3], perm[2]};
    }
    bool kIdentity = kPerm == SmallVector<int64_t>{0, 1, 2, 3};
    KVSource kv = kSliced ? *kSliced
                  : kIdentity
                      ? (matchRepeatKV(kSrc) ? whole(matchRepeatKV(kSrc)->first)
                                             : whole(kSrc))
                      : KVSource{kSrc, 0, 0};
    KVSource vv = peelValue(pv.getB());
    if (!kIdentity)
      kv.end = cast<RankedTensorType>(kSrc.getType()).getShape()[kPerm[1]];

    // Shapes: Q [B,H,S,D], K [B,G,L,D], V [B,G,L,Dv], Y [B,H,S,Dv].
    auto qType = cast<RankedTensorType>(q.getType());
    auto srcType = cast<RankedTensorType>(kv.base.getType());
    auto vBase = cast<RankedTensorType>(vv.base.getType());
    if (qType.getRank() != 4 || srcType.getRank() != 4 || vBase.getRank() != 4)
      return failure();
    SmallVector<int64_t> ks;
    for (int64_t p : kPerm)
      ks.push_back(srcType.getShape()[p]);
    ks[1] = kv.end - kv.start;
    SmallVector<int64_t> vs(vBase.getShape());
    vs[1] = vv.end - vv.start;
    RankedTensorType vType = RankedTensorType::get(vs, vBase.getElementType());
    ArrayRef<int64_t> qs = qType.getShape(), ys = yType.getShape();
    Type elem = qType.getElementType();
    if (srcType.getElementType() != elem || vType.getElementType() != elem ||
        yType.getElementType() != elem || ks[0] != qs[0] || ks[3] != qs[3] ||
        vs[0] != qs[0] || vs[1] != ks[1] || vs[2] != ks[2] || ks[1] <= 0 ||
        qs[1] % ks[1] != 0 || ys[0] != qs[0] || ys[1] != qs[1] ||
        ys[2] != qs[2] || ys[3] != vs[3])
      return failure();
    // The softmax must be over the same [B, H, S, L] scores.
    SmallVector<int64_t> scores = {qs[0], qs[1], qs[2], ks[2]};
    if (softmax.getType().getShape() != ArrayRef<int64_t>(scores))
      return failure();
    for (Value m : st.floatMasks)
      if (cast<RankedTensorType>(m.getType()).getElementType() != elem)
        return failure();

    // Every check before the first new op: a pattern that fails must leave
    // the IR as it was.
    SmallVector<Value, 3> maskParts(st.floatMasks.begin(), st.floatMasks.end());
    if (st.boolMask)
      maskParts.push_back(st.boolMask);
    SmallVector<ArrayRef<int64_t>> maskShapes = {scores};
    for (Value m : maskParts) {
      auto mt = cast<RankedTensorType>(m.getType());
      if (mt.getRank() > 4)
        return failure();
      maskShapes.push_back(mt.getShape());
    }
    FailureOr<SmallVector<int64_t>> full = onnx::broadcastShapes(maskShapes);
    if (failed(full) || *full != scores)
      return failure();
    bool causal = maskParts.size() == 1 &&
                  isCausalMask(maskParts.front(), qs[2], ks[2]);

    Location loc = pv.getLoc();
    rewriter.setInsertionPoint(pv);
    Value mask;
    if (!causal) {
      for (Value m : st.floatMasks)
        mask = mask ? rewriter.create<onnx::AddOp>(loc, mask, m).getResult()
                    : m;
      if (st.boolMask && mask) {
        auto scalar = RankedTensorType::get({}, elem);
        Value ninf = rewriter.create<onnx::ConstantOp>(
            loc, DenseElementsAttr::get(
                     scalar,
                     rewriter.getFloatAttr(
                         elem, -std::numeric_limits<double>::infinity())));
        mask = rewriter.create<onnx::WhereOp>(loc, st.boolMask, mask, ninf);
      } else if (st.boolMask) {
        mask = st.boolMask;
      }
    }
    // A range of kv heads narrower than the base becomes a Slice.
    auto narrow = [&](const KVSource &src) -> Value {
      auto t = cast<RankedTensorType>(src.base.getType());
      if (src.start == 0 && src.end == t.getShape()[1])
        return src.base;
      SmallVector<int64_t> shape(t.getShape());
      shape[1] = src.end - src.start;
      return rewriter.create<onnx::SliceOp>(
          loc, RankedTensorType::get(shape, t.getElementType()), src.base,
          rewriter.getDenseI64ArrayAttr({src.start}),
          rewriter.getDenseI64ArrayAttr({src.end}),
          rewriter.getDenseI64ArrayAttr({1}), rewriter.getDenseI64ArrayAttr({1}));
    };
    Value k = kIdentity ? narrow(kv) : kSrc;
    Value v = narrow(vv);
    if (!kIdentity)
      k = rewriter.create<onnx::TransposeOp>(
          loc, RankedTensorType::get(ks, elem), kSrc,
          rewriter.getDenseI64ArrayAttr(kPerm));
    rewriter.replaceOpWithNewOp<onnx::AttentionOp>(
        pv, yType, q, k, v, mask, /*nonpad_kv_seqlen=*/Value(),
        rewriter.getF32FloatAttr(st.scale),
        rewriter.getI64IntegerAttr(causal ? 1 : 0),
        nanToZero ? rewriter.getI64IntegerAttr(1) : IntegerAttr());
    return success();
  }
};

struct FuseAttentionPass
    : FusionPass<impl::FuseAttentionPassBase<FuseAttentionPass>,
                 AttentionPattern> {};

} // namespace
} // namespace tpc
