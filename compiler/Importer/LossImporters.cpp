//===- LossImporters.cpp - NegativeLogLikelihoodLoss, SoftmaxCrossEntropy -===//
//
// The two loss ops, imported as the ops their definitions use, so a model
// exported with its loss (a language model given labels) runs:
//   loss[n, d...] = -input[n, target[n, d...], d...] * weight[target]
// with positions whose target is `ignore_index` contributing 0 (their
// target replaced by 0 before the gathers), then no reduction, the sum, or
// the sum divided by the sum of the weights taken (the count of positions
// not ignored without weights). SoftmaxCrossEntropyLoss is that loss of
// LogSoftmax(scores) over the class axis, which it can also return.
//
//===----------------------------------------------------------------------===//
#include "compiler/Importer/Emitter.h"
#include "compiler/Importer/NodeImporter.h"

using namespace mlir;

namespace tpc {
using namespace onnx;

namespace {

using Results = SmallVectorImpl<Value>;

/// All of `v` summed to a scalar.
Value sumAll(NodeContext &c, Emitter &e, Value v) {
  if (!e.ok({v}))
    return Value();
  auto t = RankedTensorType::get({}, tensorTypeOf(v).getElementType());
  return c.create(ReduceSumOp::getOperationName(), t, v,
                  {c.named("axes", c.b.getDenseI64ArrayAttr({})),
                   c.named("keepdims", c.b.getI64IntegerAttr(0)),
                   c.named("noop_with_empty_axes", c.b.getI64IntegerAttr(0))})[0];
}

/// The loss of log-probabilities `logp` [N, C, d...] against `target` [N,
/// d...] with optional class `weight` [C].
FailureOr<Value> nllLoss(NodeContext &c, Emitter &e, Value logp, Value target,
                         Value weight) {
  RankedTensorType lt = tensorTypeOf(logp), tt = tensorTypeOf(target);
  if (lt.getRank() < 2 || tt.getRank() != lt.getRank() - 1)
    return c.error() << "input " << lt << " and target " << tt
                     << " must be [N, C, d...] and [N, d...]";
  for (int64_t d = 0; d < tt.getRank(); ++d)
    if (tt.getDimSize(d) != lt.getDimSize(d == 0 ? 0 : d + 1))
      return c.error() << "target " << tt << " does not match input " << lt;
  if (!isa<IntegerType>(tt.getElementType()))
    return c.error() << "target must hold integers, not " << tt;
  if (weight && (tensorTypeOf(weight).getRank() != 1 ||
                 tensorTypeOf(weight).getDimSize(0) != lt.getDimSize(1)))
    return c.error() << "weight " << tensorTypeOf(weight) << " must hold one value "
                     << "per class (" << lt.getDimSize(1) << ")";
  Type elem = lt.getElementType();
  Type idx = tt.getElementType();
  Value kept; // bool: the position counts
  Value safe = target;
  if (c.attr("ignore_index")) {
    Value ignore = e.scalar(idx, double(c.attrInt("ignore_index", 0)));
    kept = e.unary<NotOp>(e.binary<EqualOp>(target, ignore));
    safe = e.where(kept, target, e.scalar(idx, 0));
  }
  // -logp[n, target, d...]: a GatherElements along the class axis.
  SmallVector<int64_t> withClass(tt.getShape());
  withClass.insert(withClass.begin() + 1, 1);
  Value picked = e.inferred<GatherElementsOp>(
      {logp, e.reshape(safe, withClass)},
      {c.named("axis", c.b.getI64IntegerAttr(1))});
  Value loss = e.unary<NegOp>(e.reshape(picked, tt.getShape()));
  // The weight of each position: its class's, 0 where ignored.
  Value w;
  if (weight)
    w = e.gather(weight, safe, 0);
  if (kept)
    w = e.where(kept, w ? w : e.scalar(elem, 1), e.scalar(elem, 0));
  if (w)
    loss = e.binary<MulOp>(loss, w);
  std::string reduction = c.attrString("reduction", "mean");
  if (reduction == "none")
    return loss;
  if (reduction == "sum")
    return sumAll(c, e, loss);
  if (reduction != "mean")
    return c.error() << "unknown reduction '" << reduction
                     << "' (none, sum or mean)";
  Value total = sumAll(c, e, loss);
  if (w)
    return e.binary<DivOp>(total, sumAll(c, e, w));
  return e.binary<DivOp>(total,
                         e.scalar(elem, double(tt.getNumElements())));
}

LogicalResult importNllLoss(NodeContext &c, Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  Emitter e(c);
  FailureOr<Value> loss = nllLoss(c, e, c.input(0), c.input(1), c.input(2));
  if (failed(loss))
    return failure();
  return e.finish({*loss}, results);
}

LogicalResult importSoftmaxCrossEntropyLoss(NodeContext &c,
                                            Results &results) {
  if (failed(c.requireInputs(2)))
    return failure();
  Emitter e(c);
  Value scores = c.input(0);
  if (tensorTypeOf(scores).getRank() < 2)
    return c.error() << "scores " << tensorTypeOf(scores) << " must be [N, C, ...]";
  Value logp = c.create(LogSoftmaxOp::getOperationName(), scores.getType(),
                        scores, {c.named("axis", c.b.getI64IntegerAttr(1))})[0];
  FailureOr<Value> loss = nllLoss(c, e, logp, c.input(1), c.input(2));
  if (failed(loss))
    return failure();
  SmallVector<Value> outs{*loss};
  if (c.wantsOutput(1))
    outs.push_back(logp);
  return e.finish(outs, results);
}

} // namespace

void addLossImporters(std::vector<OpTableEntry> &t) {
  const char *nll = "onnx.GatherElements, onnx.Gather, onnx.Where, "
                    "onnx.ReduceSum, onnx.Div";
  for (int v : {12, 13, 22})
    t.push_back({"NegativeLogLikelihoodLoss", v, importNllLoss, nll});
  for (int v : {12, 13})
    t.push_back({"SoftmaxCrossEntropyLoss", v, importSoftmaxCrossEntropyLoss,
                 "onnx.LogSoftmax and NegativeLogLikelihoodLoss's ops"});
}

} // namespace tpc
