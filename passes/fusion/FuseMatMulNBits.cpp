//===- FuseMatMulNBits.cpp - block-quantized weights into one op ----------===//
//
// A weight quantized per block of K reaches a rank's program as its
// definition: uint8 codes (unpacked from nibbles by uint8 arithmetic when
// they are 4-bit), cast to float, minus a zero point, times a scale per
// block, reshaped to [N, K] (a Gather of the first K columns where the
// last block is padded) and transposed into a MatMul. This pass finds that
// dataflow by its shapes and constants and rewrites the MatMul into
// tpc.MatMulNBits over the packed codes, the scales and the zero points,
// so the kernel reads the packed bytes instead of a float weight
// recomputed every forward. Anything else about the chain (another
// zero-point form, a weight whose codes were folded into a constant) keeps
// the meaning: the zero point is passed as the values it has.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/ValueUtils.h"
#include "compiler/Dialect/TP/IR/TPOps.h"
#include "compiler/Dialect/TPC/IR/TPCOps.h"
#include "passes/fusion/Match.h"
#include "passes/fusion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

namespace tpc {
#define GEN_PASS_DEF_FUSEMATMULNBITSPASS
#include "passes/fusion/Passes.h.inc"
} // namespace tpc

using namespace mlir;
using namespace tpc::fusion;

namespace tpc {
namespace {

RankedTensorType rankedOf(Value v) {
  return v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

/// The integer values of constant `v`, or nullopt.
std::optional<SmallVector<int64_t>> constInts(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) ||
      !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> out;
  for (const APInt &x : attr.getValues<APInt>())
    out.push_back(int64_t(x.getZExtValue()));
  return out;
}

/// Whether constant `v` is an integer splat of `want`.
bool isIntSplat(Value v, int64_t want) {
  std::optional<SmallVector<int64_t>> x = constInts(v);
  if (!x || x->empty())
    return false;
  return llvm::all_of(*x, [&](int64_t e) { return e == want; });
}

bool isUint8(Value v) {
  RankedTensorType t = rankedOf(v);
  return t && t.getElementType().isUnsignedInteger(8);
}

/// The packed bytes P when `v` is the importer's unpacking of 4-bit codes
/// along P's last axis: t = Div(Gather(P, [0, 0, 1, 1, ...]), [1, 16, 1,
/// 16, ...]); v = t - t / 16 * 16.
Value unpackedNibbles(Value v) {
  auto sub = v.getDefiningOp<onnx::SubOp>();
  if (!sub || !isUint8(v))
    return Value();
  Value t = sub.getA();
  auto mul = sub.getB().getDefiningOp<onnx::MulOp>();
  if (!mul)
    return Value();
  Value sixteen = mul.getB();
  auto div = mul.getA().getDefiningOp<onnx::DivOp>();
  if (!div) {
    sixteen = mul.getA();
    div = mul.getB().getDefiningOp<onnx::DivOp>();
  }
  if (!div || div.getA() != t || !isIntSplat(div.getB(), 16) ||
      !isIntSplat(sixteen, 16))
    return Value();
  auto spread = t.getDefiningOp<onnx::DivOp>();
  if (!spread)
    return Value();
  auto gather = spread.getA().getDefiningOp<onnx::GatherOp>();
  RankedTensorType tt = rankedOf(t);
  if (!gather || !tt)
    return Value();
  int64_t axis = gather.getAxis(), rank = tt.getRank();
  if (axis < 0)
    axis += rank;
  std::optional<SmallVector<int64_t>> idx = constInts(gather.getIndices());
  std::optional<SmallVector<int64_t>> shift = constInts(spread.getB());
  int64_t count = tt.getShape().back();
  if (axis != rank - 1 || !idx || !shift || int64_t(idx->size()) != count ||
      int64_t(shift->size()) != count)
    return Value();
  for (int64_t i = 0; i < count; ++i)
    if ((*idx)[i] != i / 2 || (*shift)[i] != (i % 2 ? 16 : 1))
      return Value();
  return gather.getData();
}

/// `v` without the Reshapes and float Casts in front of it.
Value throughReshapesAndCasts(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (isa<onnx::ReshapeOp>(op) ||
        (isa<onnx::CastOp>(op) &&
         isa<FloatType>(rankedOf(op->getOperand(0)).getElementType()) &&
         isa<FloatType>(rankedOf(v).getElementType())))
      v = op->getOperand(0);
    else
      break;
  }
  return v;
}

/// The parts of a weight W [N, K] given by its block-quantized definition.
struct Blocked {
  Value codes;  ///< ui8 [N, blocks, blockSize * bits / 8]
  Value scales; ///< N x blocks floats
  Value zero;   ///< null (the default), packed ui8 or floats
  double zeroScalar = 0;
  bool zeroIsScalar = false;
  int64_t bits = 8, blockSize = 0;
};

/// Matches W [N, K] = Gather?(Reshape(Mul(Sub(Cast(C), Z), S)), iota(K))
/// (the Mul's operands in either order), with C the uint8 codes [N,
/// blocks, blockSize] (4-bit ones unpacked from the packed bytes), S and Z
/// one value per block or Z a scalar.
std::optional<Blocked> matchBlocked(Value w) {
  RankedTensorType wt = rankedOf(w);
  if (!wt || wt.getRank() != 2 || !wt.hasStaticShape())
    return std::nullopt;
  int64_t n = wt.getShape()[0], k = wt.getShape()[1];
  if (auto gather = w.getDefiningOp<onnx::GatherOp>()) {
    std::optional<SmallVector<int64_t>> idx = constInts(gather.getIndices());
    if (gather.getAxis() != 1 || !idx || int64_t(idx->size()) != k)
      return std::nullopt;
    for (int64_t i = 0; i < k; ++i)
      if ((*idx)[i] != i)
        return std::nullopt;
    w = gather.getData();
  }
  auto reshape = w.getDefiningOp<onnx::ReshapeOp>();
  if (!reshape)
    return std::nullopt;
  Value m = reshape.getData();
  RankedTensorType mt = rankedOf(m);
  if (!mt || mt.getRank() != 3 || mt.getShape()[0] != n ||
      !isa<FloatType>(mt.getElementType()))
    return std::nullopt;
  int64_t blocks = mt.getShape()[1], blockSize = mt.getShape()[2];
  if (blocks * blockSize < k || (blocks - 1) * blockSize >= k ||
      blockSize < 16 || blockSize > 256 || (blockSize & (blockSize - 1)))
    return std::nullopt;
  auto mul = m.getDefiningOp<onnx::MulOp>();
  if (!mul)
    return std::nullopt;
  // One operand is the per-block scale [N, blocks, 1], the other the
  // shifted codes [N, blocks, blockSize].
  auto isPerBlock = [&](Value v) {
    RankedTensorType t = rankedOf(v);
    return t && t.getRank() == 3 && t.getShape()[0] == n &&
           t.getShape()[1] == blocks && t.getShape()[2] == 1 &&
           isa<FloatType>(t.getElementType());
  };
  Value x = mul.getA(), s = mul.getB();
  if (!isPerBlock(s))
    std::swap(x, s);
  if (!isPerBlock(s) || rankedOf(x).getShape() != mt.getShape())
    return std::nullopt;
  Blocked out;
  out.blockSize = blockSize;
  out.scales = throughReshapesAndCasts(s);
  Value z;
  if (auto sub = x.getDefiningOp<onnx::SubOp>()) {
    x = sub.getA();
    z = sub.getB();
  }
  auto cast = x.getDefiningOp<onnx::CastOp>();
  if (!cast || !isUint8(cast.getInput()))
    return std::nullopt;
  Value c = cast.getInput();
  if (Value packed = unpackedNibbles(c);
      packed && rankedOf(packed).getShape()[2] * 2 == blockSize) {
    out.bits = 4;
    out.codes = packed;
  } else {
    out.codes = c;
  }
  if (!z) {
    out.zeroIsScalar = true;
    out.zeroScalar = 0;
  } else if (std::optional<double> v = splatValue(z)) {
    if (*v != double(int64_t(1) << (out.bits - 1))) {
      out.zeroIsScalar = true;
      out.zeroScalar = *v;
    }
  } else if (isPerBlock(z)) {
    // Packed codes of the codes' width where the chain unpacks them,
    // else the float values.
    Value zi = z;
    while (auto r = zi.getDefiningOp<onnx::ReshapeOp>())
      zi = r.getData();
    auto zc = zi.getDefiningOp<onnx::CastOp>();
    Value packed;
    if (zc && isUint8(zc.getInput())) {
      Value u = zc.getInput();
      RankedTensorType ut = rankedOf(u);
      if (out.bits == 4)
        packed = unpackedNibbles(u);
      else if (ut.getRank() == 2 && ut.getShape()[1] == blocks)
        packed = u;
      if (packed && (rankedOf(packed).getRank() != 2 ||
                     rankedOf(packed).getShape()[0] != n ||
                     rankedOf(packed).getShape()[1] !=
                         (blocks * out.bits + 7) / 8))
        packed = Value();
    }
    out.zero = packed ? packed : throughReshapesAndCasts(z);
  } else {
    RankedTensorType zt = rankedOf(z);
    if (!zt || zt.getNumElements() != 1)
      return std::nullopt;
    out.zero = z;
  }
  return out;
}

/// Root: MatMul(a, Transpose(W)) with W block-quantized (matchBlocked),
/// perm [1, 0], a [..., K] a float activation.
struct MatMulNBitsPattern : OpRewritePattern<onnx::MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::MatMulOp mm,
                                PatternRewriter &rewriter) const override {
    Value a = mm.getA();
    RankedTensorType at = rankedOf(a), yt = rankedOf(mm.getY());
    if (!at || at.getRank() < 1 || !isa<FloatType>(at.getElementType()) ||
        !yt || yt.getElementType() != at.getElementType())
      return failure();
    auto transpose = mm.getB().getDefiningOp<onnx::TransposeOp>();
    if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{1, 0})
      return failure();
    Value w = transpose.getData();
    // The importer casts the float weight to A's type before the Transpose.
    if (auto c = w.getDefiningOp<onnx::CastOp>())
      if (isa<FloatType>(rankedOf(c.getInput()).getElementType()))
        w = c.getInput();
    std::optional<Blocked> q = matchBlocked(w);
    if (!q || rankedOf(w).getShape()[1] != at.getShape().back())
      return failure();
    Value zero = q->zero;
    if (q->zeroIsScalar) {
      auto t = RankedTensorType::get({1}, rewriter.getF32Type());
      zero = rewriter.create<onnx::ConstantOp>(
          mm.getLoc(), t,
          DenseElementsAttr::get(t, rewriter.getF32FloatAttr(
                                        float(q->zeroScalar))));
    }
    rewriter.setInsertionPoint(mm);
    auto op = rewriter.create<ext::MatMulNBitsOp>(
        fusedLoc({mm}), mm.getY().getType(), a, q->codes, q->scales, zero,
        rewriter.getI64IntegerAttr(q->bits),
        rewriter.getI64IntegerAttr(q->blockSize));
    for (StringRef name : {tp::kRoleAttr, tp::kReasonAttr})
      if (Attribute attr = mm->getAttr(name))
        op->setAttr(name, attr);
    rewriter.replaceOp(mm, op.getResult());
    return success();
  }
};

/// A MatMul that reads a row slice of a block-quantized weight
/// dequantized whole: the rank's split of K does not fall on the blocks,
/// so each rank keeps every packed code and dequantizes them each forward.
/// Stated as a warning naming the node (the compile goes on, correct).
void warnUnfusedSlices(ModuleOp module) {
  module.walk([](onnx::MatMulOp mm) {
    // Every rank has the same MatMuls: rank 0 speaks for them.
    auto func = mm->getParentOfType<func::FuncOp>();
    auto rank = func ? func->getAttrOfType<IntegerAttr>("tp.rank") : nullptr;
    if (rank && rank.getInt() != 0)
      return;
    auto slice = mm.getB().getDefiningOp<onnx::SliceOp>();
    auto transpose =
        slice ? slice.getData().getDefiningOp<onnx::TransposeOp>() : nullptr;
    if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{1, 0})
      return;
    Value w = transpose.getData();
    if (auto c = w.getDefiningOp<onnx::CastOp>())
      w = c.getInput();
    std::optional<Blocked> q = matchBlocked(w);
    if (!q)
      return;
    const int64_t k = rankedOf(w).getShape()[1];
    std::string tps;
    for (int64_t t = 1; t <= 16; ++t)
      if (t == 1 || (k % t == 0 && (k / t) % q->blockSize == 0))
        tps += (tps.empty() ? "" : ", ") + std::to_string(t);
    mm->emitWarning() << "node '" << nodeNameOf(mm->getLoc())
                      << "': its quantized weight's K (" << k
                      << ") is not split on its blocks of " << q->blockSize
                      << ", so every rank keeps the whole packed weight and "
                         "dequantizes its rows each forward (slower, and "
                         "more memory per rank); tp values that split it on "
                         "blocks: "
                      << tps;
  });
}

struct FuseMatMulNBitsPass
    : impl::FuseMatMulNBitsPassBase<FuseMatMulNBitsPass> {
  void runOnOperation() override {
    if (failed(applyFusionPatterns<MatMulNBitsPattern>(getOperation())))
      return signalPassFailure();
    warnUnfusedSlices(getOperation());
  }
};

} // namespace
} // namespace tpc
