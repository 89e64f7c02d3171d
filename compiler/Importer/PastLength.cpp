//===- PastLength.cpp - The past length of a decode step, at run time ----===//
#include "compiler/Importer/PastLength.h"

#include "compiler/Importer/Emitter.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;

namespace tpc {
namespace {

/// The elements of a constant as doubles (integers are exact below 2^53,
/// which every shape and position is), or nullopt for a non-constant.
std::optional<SmallVector<double>> constantValues(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<double> out;
  if (isa<FloatType>(attr.getElementType())) {
    for (const APFloat &f : attr.getValues<APFloat>())
      out.push_back(f.convertToDouble());
  } else if (attr.getElementType().isInteger(1)) {
    return std::nullopt;
  } else if (isa<IntegerType>(attr.getElementType())) {
    for (const APInt &i : attr.getValues<APInt>())
      out.push_back(double(i.getSExtValue()));
  } else {
    return std::nullopt;
  }
  return out;
}

int64_t numElements(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

bool anyTracked(const PastOffsets &o) {
  return llvm::any_of(o, [](const std::optional<int64_t> &x) {
    return x.has_value();
  });
}

} // namespace

void PastLength::set(Value v, PastOffsets offsets) {
  if (v && anyTracked(offsets))
    tracked[v] = std::move(offsets);
}

FailureOr<bool>
PastLength::importSpecial(NodeContext &c, SmallVectorImpl<Value> &results) {
  if (!position || c.node.op_type() != "Range" || c.inputs.size() != 3)
    return false;
  const PastOffsets *start = lookup(c.input(0));
  if (!start || start->size() != 1 || !(*start)[0])
    return false;
  std::optional<SmallVector<double>> delta = constantValues(c.input(2));
  const PastOffsets *limit = lookup(c.input(1));
  if (!limit || limit->size() != 1 || !(*limit)[0] || !delta ||
      delta->size() != 1)
    return c.error() << "starts at the past length of the decode step "
                        "but its limit does not follow it: its length would "
                        "change from step to step, which a --kv-cache engine "
                        "cannot run",
           failure();
  double d = (*delta)[0];
  if (d == 0)
    return c.error() << "delta is 0", failure();
  double from = double(*(*start)[0]), to = double(*(*limit)[0]);
  int64_t n = std::max<int64_t>(0, int64_t(std::ceil((to - from) / d)));
  // The offsets' range, folded by the Range op itself, plus the position.
  Type elem = c.inputType(0).getElementType();
  Emitter e(c);
  Value base = c.create(onnx::RangeOp::getOperationName(),
                        RankedTensorType::get({n}, elem),
                        {e.scalar(elem, from), e.scalar(elem, to),
                         c.input(2)})[0];
  Value out = e.binary<onnx::AddOp>(base, e.cast(position, elem));
  if (e.failed || !out)
    return failure();
  results.push_back(out);
  return true;
}

void PastLength::propagate(NodeContext &c, ArrayRef<Value> results) {
  if (!position || results.empty() || !results[0] ||
      !constantValues(results[0]))
    return;
  StringRef op = c.node.op_type();
  Value out = results[0];
  int64_t n = numElements(out);
  if (op == "Shape") {
    auto dims = inputDims.find(c.input(0));
    if (dims == inputDims.end())
      return;
    int64_t rank = int64_t(dims->second.size());
    auto clampAxis = [&](int64_t a) {
      return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank);
    };
    int64_t from = clampAxis(c.attrInt("start", 0));
    int64_t to = c.attr("end") ? clampAxis(c.attrInt("end", rank)) : rank;
    if (to - from != n)
      return;
    set(out, PastOffsets(dims->second.begin() + from,
                         dims->second.begin() + to));
    return;
  }
  const PastOffsets *in0 = c.inputs.empty() ? nullptr : lookup(c.input(0));
  if (op == "Cast" || op == "Identity" || op == "Squeeze" ||
      op == "Unsqueeze" || op == "Reshape" || op == "Flatten") {
    if (in0 && int64_t(in0->size()) == n)
      set(out, *in0);
    return;
  }
  if (op == "Gather") {
    std::optional<SmallVector<double>> idx = constantValues(c.input(1));
    if (!in0 || !idx || cast<RankedTensorType>(c.input(0).getType())
                                .getRank() != 1)
      return;
    int64_t size = int64_t(in0->size());
    PastOffsets o;
    for (double i : *idx) {
      int64_t k = int64_t(i) < 0 ? int64_t(i) + size : int64_t(i);
      if (k < 0 || k >= size)
        return;
      o.push_back((*in0)[size_t(k)]);
    }
    if (int64_t(o.size()) == n)
      set(out, std::move(o));
    return;
  }
  if (op == "Concat") {
    if (cast<RankedTensorType>(out.getType()).getRank() != 1)
      return;
    PastOffsets o;
    for (Value v : c.inputs) {
      if (!v)
        continue;
      if (const PastOffsets *t = lookup(v))
        o.append(t->begin(), t->end());
      else
        o.append(size_t(numElements(v)), std::nullopt);
    }
    if (int64_t(o.size()) == n)
      set(out, std::move(o));
    return;
  }
  if (op == "Add" || op == "Sub") {
    if (c.inputs.size() != 2 ||
        !isa<IntegerType>(
            cast<RankedTensorType>(out.getType()).getElementType()))
      return;
    const PastOffsets *in1 = lookup(c.input(1));
    std::optional<SmallVector<double>> v0 = constantValues(c.input(0));
    std::optional<SmallVector<double>> v1 = constantValues(c.input(1));
    if (!v0 || !v1)
      return;
    auto at = [&](const auto &values, int64_t i) {
      return values.size() == 1 ? values[0] : values[size_t(i)];
    };
    for (size_t s : {v0->size(), v1->size()})
      if (s != 1 && int64_t(s) != n)
        return;
    PastOffsets o;
    for (int64_t i = 0; i < n; ++i) {
      std::optional<int64_t> a = in0 ? at(*in0, i) : std::nullopt;
      std::optional<int64_t> b = in1 ? at(*in1, i) : std::nullopt;
      // p + a plus a constant; p + a minus a constant. Two tracked
      // elements make 2p or cancel: neither follows p.
      if (a && !b)
        o.push_back(op == "Add" ? *a + int64_t(at(*v1, i))
                                : *a - int64_t(at(*v1, i)));
      else if (!a && b && op == "Add")
        o.push_back(*b + int64_t(at(*v0, i)));
      else
        o.push_back(std::nullopt);
    }
    set(out, std::move(o));
  }
}

} // namespace tpc
