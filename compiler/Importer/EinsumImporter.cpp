//===- EinsumImporter.cpp - Einsum as MatMuls, transposes and sums --------===//
//
// Einsum is imported as the ops that compute it, so that sharding sees
// ordinary MatMuls (a weight contracted with an activation becomes a weight
// MatMul) and both backends run it:
//   * a label repeated within one operand takes the diagonal (the other
//     entries selected to zero by Where, then summed away);
//   * a label that no other operand and not the output has is summed away;
//   * operands are combined left to right: each pair becomes one MatMul of
//     [batch..., kept labels of the left, contracted] by [batch...,
//     contracted, kept labels of the right], batch labels staying separate
//     dims (MatMul broadcasts them), the others merged by Reshape;
//   * the result is transposed to the output's order.
// The ellipsis stands for the same trailing broadcast dims in every operand,
// as numpy defines it; without "->" the output is the ellipsis dims then the
// labels seen once, in alphabetical order.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "compiler/Importer/Emitter.h"
#include "compiler/Importer/NodeImporter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;

namespace tpc {
using namespace onnx;

namespace {

using Results = SmallVectorImpl<Value>;
/// A label: a letter's code, or kEllipsis + i for the i-th broadcast dim
/// (counted from the last).
using Label = int;
constexpr Label kEllipsis = 1000;

/// One operand or the result: its value and the label of each dim.
struct Term {
  Value value;
  SmallVector<Label> labels;
};

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Parses one side of the equation into per-dim labels, expanding "..." to
/// `rank` minus the letters; returns an error text on failure.
std::string parseTerm(StringRef text, int64_t rank, SmallVector<Label> &out,
                      int64_t &ellipsisDims) {
  std::string t;
  for (char ch : text)
    if (ch != ' ')
      t.push_back(ch);
  size_t dots = t.find("...");
  if (dots != std::string::npos && t.find("...", dots + 3) != std::string::npos)
    return "more than one ellipsis in '" + t + "'";
  std::string letters = t;
  if (dots != std::string::npos)
    letters.erase(dots, 3);
  for (char ch : letters)
    if (!llvm::isAlpha(ch))
      return std::string("'") + ch + "' is not a label";
  int64_t extra = rank - int64_t(letters.size());
  if (extra < 0 || (dots == std::string::npos && extra != 0))
    return "'" + t + "' has " + std::to_string(letters.size()) +
           " labels for an operand of rank " + std::to_string(rank);
  ellipsisDims = dots == std::string::npos ? 0 : extra;
  out.clear();
  for (size_t i = 0; i < t.size(); ++i) {
    if (dots != std::string::npos && i == dots) {
      for (int64_t k = extra - 1; k >= 0; --k)
        out.push_back(kEllipsis + int(k));
      i += 2;
      continue;
    }
    out.push_back(Label(t[i]));
  }
  return "";
}

class EinsumBuilder {
public:
  EinsumBuilder(NodeContext &c) : c(c), e(c) {}

  LogicalResult run(Results &results);

private:
  NodeContext &c;
  Emitter e;
  /// Labels of the output, in order.
  SmallVector<Label> output;
  std::map<Label, int64_t> sizes;

  Value permute(Value v, ArrayRef<int64_t> perm);
  Term diagonal(Term t, size_t first, size_t second);
  Term sumOut(Term t, ArrayRef<Label> keep);
  Term contract(Term a, Term b, ArrayRef<Label> needed);
};

Value EinsumBuilder::permute(Value v, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == int64_t(i);
  return identity ? v : e.transpose(v, perm);
}

/// The diagonal of dims `first` and `second` (same label) of `t`, kept at
/// `first`.
Term EinsumBuilder::diagonal(Term t, size_t first, size_t second) {
  ArrayRef<int64_t> shape = shapeOf(t.value);
  int64_t n = shape[first];
  SmallVector<int64_t> maskShape(shape.size(), 1);
  maskShape[first] = n;
  maskShape[second] = n;
  auto maskType = RankedTensorType::get(maskShape, c.b.getI1Type());
  SmallVector<bool> eye(n * n, false);
  for (int64_t i = 0; i < n; ++i)
    eye[i * n + i] = true;
  Value mask = e.constant(DenseElementsAttr::get(maskType, ArrayRef(eye)));
  Type elem = cast<RankedTensorType>(t.value.getType()).getElementType();
  Value kept = e.where(mask, t.value, e.scalar(elem, 0));
  Term out;
  out.value = e.inferred<ReduceSumOp>(
      kept, {c.named("axes", c.b.getDenseI64ArrayAttr({int64_t(second)})),
             c.named("keepdims", c.b.getI64IntegerAttr(0))});
  out.labels = t.labels;
  out.labels.erase(out.labels.begin() + second);
  return out;
}

/// `t` with every dim whose label is not in `keep` summed away.
Term EinsumBuilder::sumOut(Term t, ArrayRef<Label> keep) {
  SmallVector<int64_t> axes;
  Term out;
  for (size_t i = 0; i < t.labels.size(); ++i) {
    if (llvm::is_contained(keep, t.labels[i]))
      out.labels.push_back(t.labels[i]);
    else
      axes.push_back(int64_t(i));
  }
  if (axes.empty())
    return t;
  out.value = e.inferred<ReduceSumOp>(
      t.value, {c.named("axes", c.b.getDenseI64ArrayAttr(axes)),
                c.named("keepdims", c.b.getI64IntegerAttr(0))});
  return out;
}

/// One MatMul of a and b; the result keeps the labels in `needed` (those of
/// later operands and the output) and sums the shared others.
Term EinsumBuilder::contract(Term a, Term b, ArrayRef<Label> needed) {
  SmallVector<Label> batch, left, right, inner;
  for (Label l : a.labels) {
    bool inB = llvm::is_contained(b.labels, l);
    if (!inB)
      left.push_back(l);
    else if (llvm::is_contained(needed, l))
      batch.push_back(l);
    else
      inner.push_back(l);
  }
  for (Label l : b.labels)
    if (!llvm::is_contained(a.labels, l))
      right.push_back(l);

  auto indexIn = [](const Term &t, Label l) {
    return int64_t(llvm::find(t.labels, l) - t.labels.begin());
  };
  auto product = [&](ArrayRef<Label> ls) {
    int64_t p = 1;
    for (Label l : ls)
      p *= sizes[l];
    return p;
  };
  // Each operand's own size of a batch label (1 where it broadcasts).
  auto batchShape = [&](const Term &t) {
    SmallVector<int64_t> s;
    for (Label l : batch)
      s.push_back(shapeOf(t.value)[indexIn(t, l)]);
    return s;
  };
  // t's value with its labels in the order of `groups`, one after another.
  auto permuted = [&](const Term &t,
                      std::initializer_list<ArrayRef<Label>> groups) {
    SmallVector<int64_t> perm;
    for (ArrayRef<Label> group : groups)
      for (Label l : group)
        perm.push_back(indexIn(t, l));
    return permute(t.value, perm);
  };

  // a: [batch..., left..., inner...] -> [batch..., prod(left), prod(inner)];
  // without batch labels the left dims stay apart, as a weight MatMul's
  // activation keeps its leading dims.
  Value av = permuted(a, {batch, left, inner});
  if (!e.ok({av, b.value}))
    return Term();
  SmallVector<int64_t> aShape = batchShape(a);
  if (batch.empty() && !left.empty()) {
    for (Label l : left)
      aShape.push_back(sizes[l]);
  } else {
    aShape.push_back(product(left));
  }
  aShape.push_back(product(inner));
  if (ArrayRef<int64_t>(aShape) != shapeOf(av))
    av = e.reshape(av, aShape);

  // b: [batch..., inner..., right...] -> [batch..., prod(inner), prod(right)].
  Value bv = permuted(b, {batch, inner, right});
  if (!e.ok({av, bv}))
    return Term();
  SmallVector<int64_t> bShape = batchShape(b);
  bShape.push_back(product(inner));
  bShape.push_back(product(right));
  if (ArrayRef<int64_t>(bShape) != shapeOf(bv))
    bv = e.reshape(bv, bShape);

  Value mm = e.inferred<MatMulOp>({av, bv});
  Term out;
  out.labels.append(batch.begin(), batch.end());
  out.labels.append(left.begin(), left.end());
  out.labels.append(right.begin(), right.end());
  SmallVector<int64_t> full;
  if (e.ok({mm})) {
    ArrayRef<int64_t> mmShape = shapeOf(mm);
    full.assign(mmShape.begin(), mmShape.begin() + batch.size());
  }
  for (Label l : left)
    full.push_back(sizes[l]);
  for (Label l : right)
    full.push_back(sizes[l]);
  out.value = e.ok({mm}) && ArrayRef<int64_t>(full) != shapeOf(mm)
                  ? e.reshape(mm, full)
                  : mm;
  return out;
}

LogicalResult EinsumBuilder::run(Results &results) {
  std::string eq = c.attrString("equation", "");
  size_t arrow = eq.find("->");
  StringRef lhs = StringRef(eq).substr(0, arrow);
  SmallVector<StringRef> parts;
  lhs.split(parts, ',');
  if (parts.size() != c.inputs.size())
    return c.error() << "equation '" << eq << "' names " << parts.size()
                     << " operands, the node has " << c.inputs.size();
  std::vector<Term> terms;
  int64_t ellipsisRank = 0;
  std::map<Label, int> count;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!c.input(i))
      return c.error() << "operand " << i << " is missing";
    Term t;
    t.value = c.input(i);
    int64_t dots;
    std::string why = parseTerm(parts[i], c.inputType(i).getRank(), t.labels,
                                dots);
    if (!why.empty())
      return c.error() << "equation '" << eq << "': " << why;
    ellipsisRank = std::max(ellipsisRank, dots);
    ArrayRef<int64_t> shape = c.inputType(i).getShape();
    for (size_t d = 0; d < t.labels.size(); ++d) {
      Label l = t.labels[d];
      ++count[l];
      int64_t &s = sizes[l];
      // Ellipsis dims broadcast; letters must agree.
      if (s == 0 || (l >= kEllipsis && s == 1))
        s = shape[d];
      else if (shape[d] != s && !(l >= kEllipsis && shape[d] == 1))
        return c.error() << "equation '" << eq << "': label of dim " << d
                         << " of operand " << i << " has size " << shape[d]
                         << ", elsewhere " << s;
    }
    terms.push_back(t);
  }
  if (arrow != std::string::npos) {
    // The output's rank: its letters and the operands' ellipsis dims.
    std::string text = StringRef(eq).substr(arrow + 2).str();
    int64_t letters = 0, dots;
    for (char ch : text)
      letters += llvm::isAlpha(ch);
    std::string why = parseTerm(text,
                    letters + (text.find("...") != std::string::npos
                                   ? ellipsisRank
                                   : 0),
                    output, dots);
    if (!why.empty())
      return c.error() << "equation '" << eq << "': " << why;
    for (Label l : output)
      if (!sizes.count(l))
        return c.error() << "equation '" << eq << "': output label '"
                         << char(l) << "' is on no operand";
  } else {
    for (int64_t k = ellipsisRank - 1; k >= 0; --k)
      output.push_back(kEllipsis + int(k));
    for (auto [l, n] : count)
      if (l < kEllipsis && n == 1)
        output.push_back(l);
  }

  // Diagonals, then labels that only this operand has.
  for (size_t i = 0; i < terms.size(); ++i) {
    Term &t = terms[i];
    for (size_t d = 0; d < t.labels.size(); ++d)
      for (size_t d2 = d + 1; d2 < t.labels.size(); ++d2)
        if (t.labels[d2] == t.labels[d]) {
          if (!e.ok({t.value}))
            return failure();
          if (shapeOf(t.value)[d] != shapeOf(t.value)[d2])
            return c.error() << "equation '" << eq << "': a repeated label "
                             << "of operand " << i << " spans dims of "
                             << "different sizes";
          t = diagonal(t, d, d2);
          --d2;
        }
    SmallVector<Label> keep(output);
    for (size_t j = 0; j < terms.size(); ++j)
      if (j != i)
        keep.append(terms[j].labels.begin(), terms[j].labels.end());
    t = sumOut(t, keep);
    if (!e.ok({t.value}))
      return failure();
  }

  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    SmallVector<Label> needed(output);
    for (size_t j = i + 1; j < terms.size(); ++j)
      needed.append(terms[j].labels.begin(), terms[j].labels.end());
    acc = contract(acc, terms[i], needed);
    if (!e.ok({acc.value}))
      return failure();
  }
  acc = sumOut(acc, output);
  SmallVector<int64_t> perm;
  for (Label l : output)
    perm.push_back(int64_t(llvm::find(acc.labels, l) - acc.labels.begin()));
  return e.finish({permute(acc.value, perm)}, results);
}

LogicalResult importEinsum(NodeContext &c, Results &results) {
  if (c.inputs.empty())
    return c.error() << "takes at least one operand";
  return EinsumBuilder(c).run(results);
}

} // namespace

void addEinsumImporter(std::vector<OpTableEntry> &t) {
  const char *as = "onnx.MatMul, onnx.Transpose, onnx.Reshape, onnx.ReduceSum";
  for (int v : {12, 28})
    t.push_back({"Einsum", v, importEinsum, as});
}

} // namespace tpc
