//===- Match.cpp - Dataflow matchers shared by the fusion passes ----------===//
#include "passes/fusion/Match.h"
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;

namespace tpc::fusion {

std::optional<double> splatValue(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) ||
      !isa<FloatType>(attr.getElementType()) || attr.getNumElements() == 0)
    return std::nullopt;
  if (attr.isSplat())
    return attr.getSplatValue<APFloat>().convertToDouble();
  auto values = attr.getValues<APFloat>();
  double first = (*values.begin()).convertToDouble();
  for (APFloat f : values)
    if (f.convertToDouble() != first)
      return std::nullopt;
  return first;
}

bool isSplat(Value v, double want, double rtol) {
  std::optional<double> got = splatValue(v);
  return got && std::abs(*got - want) <= rtol * std::abs(want);
}

static void flatten(Value v, bool root, Product &p) {
  // Constants are shared by every pattern instance: their uses do not count.
  if (std::optional<double> c = splatValue(v)) {
    p.constant *= *c;
    return;
  }
  Operation *op = v.getDefiningOp();
  if (!op || (!root && !v.hasOneUse())) {
    p.factors.push_back(v);
    return;
  }
  if (auto mul = dyn_cast<onnx::MulOp>(op)) {
    flatten(mul.getA(), false, p);
    flatten(mul.getB(), false, p);
    return;
  }
  if (auto div = dyn_cast<onnx::DivOp>(op)) {
    if (std::optional<double> c = splatValue(div.getB()); c && *c != 0) {
      flatten(div.getA(), false, p);
      p.constant /= *c;
      return;
    }
  }
  if (auto neg = dyn_cast<onnx::NegOp>(op)) {
    flatten(neg.getX(), false, p);
    p.constant = -p.constant;
    return;
  }
  if (auto pow = dyn_cast<onnx::PowOp>(op)) {
    std::optional<double> e = splatValue(pow.getB());
    if (e && (*e == 2.0 || *e == 3.0) &&
        pow.getA().getType() == pow.getType()) {
      for (int i = 0; i < int(*e); ++i)
        p.factors.push_back(pow.getA());
      return;
    }
  }
  p.factors.push_back(v);
}

Product flattenProduct(Value v) {
  Product p;
  flatten(v, /*root=*/true, p);
  return p;
}

Value otherOperand(Operation *op, Value known) {
  if (op->getNumOperands() != 2)
    return nullptr;
  if (op->getOperand(0) == known)
    return op->getOperand(1);
  if (op->getOperand(1) == known)
    return op->getOperand(0);
  return nullptr;
}

FailureOr<SmallVector<int64_t>> reduceAxes(Operation *op) {
  auto axesAttr = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!axesAttr || !type)
    return failure();
  int64_t rank = type.getRank();
  SmallVector<int64_t> axes;
  for (int64_t a : axesAttr.asArrayRef()) {
    if (a < -rank || a >= rank)
      return failure();
    axes.push_back(a < 0 ? a + rank : a);
  }
  llvm::sort(axes);
  return axes;
}

std::optional<int64_t> trailingAxis(ArrayRef<int64_t> axes, int64_t rank) {
  if (axes.empty())
    return std::nullopt;
  for (auto [i, a] : llvm::enumerate(axes))
    if (a != rank - int64_t(axes.size()) + int64_t(i))
      return std::nullopt;
  return axes.front();
}

bool mayDependOnInputs(Value v) {
  SmallVector<Value> work = {v};
  DenseSet<Operation *> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    Operation *def = x.getDefiningOp();
    if (!def)
      return true; // a block argument
    if (!seen.insert(def).second)
      continue;
    if (seen.size() > 64)
      return true;
    for (Value operand : def->getOperands())
      work.push_back(operand);
  }
  return false;
}

bool matchesNormalizedDims(Value w, ArrayRef<int64_t> dims) {
  auto t = dyn_cast<RankedTensorType>(w.getType());
  if (!t ||
      onnx::stripLeadingOnes(t.getShape()) != onnx::stripLeadingOnes(dims))
    return false;
  // Unit dims before `dims` say one value for every row only of a value
  // computed from weights and constants. An activation of one row (a
  // sequence of length 1) has them by coincidence: treating it as a
  // per-column parameter would make the program's structure depend on the
  // input's size.
  size_t lead = t.getShape().size() - onnx::stripLeadingOnes(dims).size();
  return lead == 0 || !mayDependOnInputs(w);
}

Location fusedLoc(ArrayRef<Operation *> ops) {
  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  return FusedLoc::get(ops.front()->getContext(), locs);
}

} // namespace tpc::fusion

namespace tpc::fusion {

bool isSquareOf(Value sq, Value x) {
  Operation *op = sq.getDefiningOp();
  if (auto pow = dyn_cast_or_null<onnx::PowOp>(op))
    return pow.getA() == x && isSplat(pow.getB(), 2.0, 0);
  if (auto mul = dyn_cast_or_null<onnx::MulOp>(op))
    return mul.getA() == x && mul.getB() == x;
  return false;
}

std::optional<NormalizeByStd> matchNormalizeByStd(Operation *op) {
  NormalizeByStd m;
  m.normOp = op;
  Value sqrtValue;
  if (auto div = dyn_cast<onnx::DivOp>(op)) {
    m.numerator = div.getA();
    sqrtValue = div.getB();
  } else if (auto mul = dyn_cast<onnx::MulOp>(op)) {
    for (int i = 0; i < 2 && !sqrtValue; ++i) {
      Value inv = op->getOperand(i);
      if (!inv.hasOneUse())
        continue;
      if (auto rec = inv.getDefiningOp<onnx::ReciprocalOp>()) {
        sqrtValue = rec.getX();
        m.ops.push_back(rec);
      } else if (auto d = inv.getDefiningOp<onnx::DivOp>();
                 d && isSplat(d.getA(), 1.0, 0)) {
        sqrtValue = d.getB();
        m.ops.push_back(d);
      }
      if (sqrtValue)
        m.numerator = op->getOperand(1 - i);
    }
  }
  if (!sqrtValue || m.numerator.getType() != op->getResult(0).getType())
    return std::nullopt;
  auto sqrt = singleUseDef<onnx::SqrtOp>(sqrtValue);
  if (!sqrt)
    return std::nullopt;
  auto add = singleUseDef<onnx::AddOp>(sqrt.getX());
  if (!add)
    return std::nullopt;
  for (int i = 0; i < 2 && !m.variance; ++i) {
    std::optional<double> eps = splatValue(add->getOperand(1 - i));
    auto mean =
        singleUseDef<onnx::ReduceMeanOp>(add->getOperand(i));
    if (!eps || !mean || *eps < 0 || mean.getKeepdims() != 1)
      continue;
    m.variance = mean;
    m.epsilon = *eps;
  }
  if (!m.variance || add.getType() != m.variance->getResult(0).getType())
    return std::nullopt;
  m.ops.append({sqrt, add, m.variance});
  return m;
}

AffineTail matchAffineTail(Operation *normOp, ArrayRef<int64_t> normDims,
                           bool withBias) {
  AffineTail t;
  t.last = normOp;
  Value y = normOp->getResult(0);
  auto affine = [&](Operation *user) -> Value {
    if (!user || user->getResult(0).getType() != y.getType())
      return nullptr;
    Value other = otherOperand(user, y);
    if (!other || other == y || !matchesNormalizedDims(other, normDims) ||
        cast<RankedTensorType>(other.getType()).getElementType() !=
            cast<RankedTensorType>(y.getType()).getElementType())
      return nullptr;
    return other;
  };
  if (!y.hasOneUse())
    return t;
  Operation *user = *y.getUsers().begin();
  if (!isa<onnx::MulOp>(user) || !(t.scale = affine(user)))
    return t;
  t.last = user;
  t.ops.push_back(user);
  y = user->getResult(0);
  if (!withBias || !y.hasOneUse())
    return t;
  user = *y.getUsers().begin();
  if (!isa<onnx::AddOp>(user) || !(t.bias = affine(user)))
    return t;
  t.last = user;
  t.ops.push_back(user);
  return t;
}

Value onesLike(PatternRewriter &rewriter, Location loc, ArrayRef<int64_t> dims,
               Type elementType) {
  auto type = RankedTensorType::get(dims, elementType);
  return rewriter.create<onnx::ConstantOp>(
      loc, DenseElementsAttr::get(type, rewriter.getFloatAttr(elementType, 1.0)));
}

NormReplacement prepareNormReplacement(PatternRewriter &rewriter, Value x,
                                       int64_t axis, const NormalizeByStd &n,
                                       ArrayRef<Operation *> leading,
                                       bool withBias) {
  auto type = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> normDims = type.getShape().drop_front(axis);
  AffineTail tail = matchAffineTail(n.normOp, normDims, withBias);
  SmallVector<Operation *> ops(leading.begin(), leading.end());
  ops.append(n.ops.begin(), n.ops.end());
  ops.push_back(n.normOp);
  ops.append(tail.ops.begin(), tail.ops.end());
  Location loc = fusedLoc(ops);
  rewriter.setInsertionPoint(tail.last);
  Value scale = tail.scale
                    ? tail.scale
                    : onesLike(rewriter, loc, normDims, type.getElementType());
  return {tail, loc, scale};
}

LogicalResult
NormFusionPattern::matchAndRewrite(Operation *op,
                                   PatternRewriter &rewriter) const {
  std::optional<NormalizeByStd> n = matchNormalizeByStd(op);
  if (!n)
    return failure();
  // variance = ReduceMean(numerator^2), the square used only there.
  Value sq = n->variance->getOperand(0);
  FailureOr<SmallVector<int64_t>> axes = reduceAxes(n->variance);
  if (!sq.hasOneUse() || !isSquareOf(sq, n->numerator) || failed(axes))
    return failure();
  SmallVector<Operation *> leading;
  Value x = matchInput(op, *n, *axes, leading);
  Type type = op->getResult(0).getType();
  if (!x || x.getType() != type)
    return failure();
  leading.push_back(sq.getDefiningOp());
  std::optional<int64_t> axis =
      trailingAxis(*axes, cast<RankedTensorType>(x.getType()).getRank());
  if (!axis)
    return failure();
  NormReplacement r =
      prepareNormReplacement(rewriter, x, *axis, *n, leading, withBias());
  Value norm = createNorm(rewriter, r, type, x, *axis, n->epsilon);
  rewriter.replaceOp(r.tail.last, norm);
  return success();
}

} // namespace tpc::fusion
