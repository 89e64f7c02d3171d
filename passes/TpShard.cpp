//===- TpShard.cpp - Megatron sharding by dataflow ------------------------===//
//
// An analysis walks @main in program order and gives each value a sharding
// from its operands' shardings, recording the sharding each op wants of each
// operand. What a walk learns from later uses (a column split that is only
// gathered again, a reduction that can wait for another partial sum, a value
// reduced for one use) goes into ShardingHints and the analysis reruns until
// nothing new is learned. A MatMul left replicated for no stated policy is
// an error (checkReplicated); the user's plan file is honoured or rejected
// (checkPlan). Then the wanted conversions are materialised as tp
// collectives and every op is annotated.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/ShardingMaterialize.h"
#include "passes/ShardingPlan.h"

#include "compiler/Dialect/ONNX/IR/ValueUtils.h"
#include "compiler/Importer/ShardingAnnotations.h"

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/GlobPattern.h"

#include <map>
#include <set>

namespace tpc {
#define GEN_PASS_DEF_TPSHARDPASS
#include "passes/Passes.h.inc"
} // namespace tpc

using namespace mlir;

namespace tpc {
namespace {

/// One ONNX sharding annotation (compiler/Importer/ShardingAnnotations.h)
/// for this tp: the operand or result of `op` it names, and the axis it cuts
/// into tp shards (-1: whole).
struct Annotation {
  Operation *op;
  bool isResult;
  unsigned index;
  int64_t axis;
  std::string tensor;
};

/// The axis of a weight MatMul's B operand that its columns run along.
int64_t weightOutputAxis(Operation *mm) {
  if (auto g = dyn_cast<onnx::GemmOp>(mm))
    return g.getTransB() ? 0 : 1;
  return 1;
}

struct TpShardPass : impl::TpShardPassBase<TpShardPass> {
  using TpShardPassBase::TpShardPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func = beginSharding(module, tp, getArgument());
    if (!func)
      return signalPassFailure();
    SmallVector<Annotation> annotations;
    if (failed(takeAnnotations(module, func, annotations)))
      return signalPassFailure();
    if (tp == 1) {
      annotateReplicated(func);
      return;
    }
    std::optional<OutputHeadPolicy> outputHeads = parseOutputHeadPolicy(lmHead);
    if (!outputHeads) {
      module.emitError("lm-head: '")
          << lmHead << "' is not a policy; use " << outputHeadPolicyNames();
      return signalPassFailure();
    }
    splitGemmBias(func);
    splitGroupedProjections(func, tp);
    SmallVector<llvm::GlobPattern> allowed;
    for (const std::string &glob : allowReplicated) {
      llvm::Expected<llvm::GlobPattern> pat = llvm::GlobPattern::create(glob);
      if (!pat) {
        module.emitError("allow-replicated: bad pattern '")
            << glob << "': " << llvm::toString(pat.takeError());
        return signalPassFailure();
      }
      allowed.push_back(std::move(*pat));
    }
    ShardingHints hints;
    llvm::DenseMap<Operation *, ReplicationReason> reasons;
    // A table split by rows for the embedding should not be needed whole by
    // a tied LM head: that head stays column-parallel (logits gathered).
    if (vocabParallelEmbedding)
      for (Operation &op : func.getBody().front())
        if (isWeightMatMul(&op) && readsEmbeddingTable(&op))
          hints.keepColumn.insert(&op);
    ShardingPlan plan;
    if (!shardingPlan.empty()) {
      std::string error;
      if (!ShardingPlan::read(shardingPlan, plan, error)) {
        module.emitError(error);
        return signalPassFailure();
      }
      // What the plan replicates is replicated from the start.
      for (Operation &op : func.getBody().front())
        if (isWeightMatMul(&op))
          if (ShardingPlanEntry *e = plan.lookup(&op)) {
            if (e->role == tp::Role::Replicated && hints.forced.insert(&op))
              reasons[&op] = {ReplicationReason::Requested, nullptr};
            if (e->role == tp::Role::Column)
              hints.keepColumn.insert(&op);
          }
    }
    // What the model's annotations keep whole or split by columns is so
    // from the start; every annotation is checked after the analysis.
    for (const Annotation &an : annotations)
      if (isWeightMatMul(an.op) && !an.isResult && an.index == 1) {
        if (an.axis < 0 && hints.forced.insert(an.op))
          reasons[an.op] = {ReplicationReason::Annotated, nullptr};
        if (an.axis == weightOutputAxis(an.op))
          hints.keepColumn.insert(an.op);
      }
    SmallVector<std::tuple<Operation *, int64_t, int64_t>> fallbacks;
    std::unique_ptr<ShardingAnalysis> analysis = analyzeUntilStable(
        func, tp, *outputHeads, hints,
        [&](ShardingAnalysis &a) {
          a.vocabParallelEmbedding = vocabParallelEmbedding;
        },
        [&](const ShardingAnalysis &a) {
          fallbacks.append(a.headFallbacks);
          for (Operation *m : a.retry)
            reasons.try_emplace(m, a.retryReasons.lookup(m));
        });
    if (!analysis)
      return signalPassFailure();
    ShardingAnalysis &a = *analysis;
    // Replicated heads are only right where they meet split heads (GQA kv
    // heads broadcast to q heads); otherwise tp does not fit the model.
    for (auto [reshape, dim, heads] : fallbacks)
      if (!meetsSplitHeads(reshape, a)) {
        (void)emitHeadError(reshape, tp, dim, heads);
        return signalPassFailure();
      }
    classifyHeadTransforms(func, hints.forced, a.splitOutputHeads, reasons);
    if (failed(checkReplicated(func, hints.forced, reasons, allowed)) ||
        failed(checkPlan(func, plan, a)) ||
        failed(checkAnnotations(annotations, a)))
      return signalPassFailure();
    materializeShardings(func, a);
    // Say why each replicated MatMul is replicated, for the compile
    // summary and tpc inspect.
    for (Operation *m : hints.forced) {
      auto it = reasons.find(m);
      ReplicationReason::Kind kind = it == reasons.end()
                                         ? ReplicationReason::Blocked
                                         : it->second.kind;
      m->setAttr(tp::kReasonAttr,
                 StringAttr::get(m->getContext(), reasonName(kind)));
    }
  }

  /// Takes the model's sharding annotations off the module: the ones for
  /// this tp's device configuration go to `out`. Annotations only for other
  /// device counts are an error (unless ignored); at tp 1 there is nothing
  /// to distribute and they are dropped.
  LogicalResult takeAnnotations(ModuleOp module, func::FuncOp func,
                                SmallVectorImpl<Annotation> &out) {
    std::map<std::string, int64_t> devices;
    if (auto configs =
            module->getAttrOfType<ArrayAttr>(kDeviceConfigurationsAttr))
      for (auto c : configs.getAsRange<DictionaryAttr>())
        devices[c.getAs<StringAttr>("name").str()] =
            c.getAs<IntegerAttr>("devices").getInt();
    module->removeAttr(kDeviceConfigurationsAttr);
    std::set<std::string> used, matching;
    Operation *first = nullptr;
    func.walk([&](Operation *op) {
      auto specs = op->getAttrOfType<ArrayAttr>(kShardingSpecsAttr);
      if (!specs)
        return;
      op->removeAttr(kShardingSpecsAttr);
      for (auto d : specs.getAsRange<DictionaryAttr>()) {
        std::string config = d.getAs<StringAttr>("configuration").str();
        used.insert(config);
        first = first ? first : op;
        if (devices[config] != tp)
          continue;
        matching.insert(config);
        bool isResult = bool(d.get("result"));
        out.push_back(
            {op, isResult,
             unsigned(d.getAs<IntegerAttr>(isResult ? "result" : "operand")
                          .getInt()),
             d.getAs<IntegerAttr>("axis").getInt(),
             d.getAs<StringAttr>("tensor").str()});
      }
    });
    if (used.empty() || tp == 1 || ignoreShardingAnnotations) {
      out.clear();
      return success();
    }
    if (matching.empty()) {
      std::string counts;
      for (const std::string &c : used)
        counts += (counts.empty() ? "" : ", ") + std::to_string(devices[c]) +
                  " ('" + c + "')";
      return first->emitError("the model's sharding annotations "
                              "(ShardingSpecProto) are for ")
             << counts << " devices, not --tp " << int64_t(tp)
             << ": compile with that tp, or pass "
                "--ignore-sharding-annotations";
    }
    if (matching.size() > 1)
      return first->emitError("the model's sharding annotations name ")
             << matching.size() << " device configurations of "
             << int64_t(tp)
             << " devices ('" << *matching.begin() << "', '"
             << *std::next(matching.begin())
             << "'); tpc cannot tell which to honour";
    return success();
  }

  /// Every annotation holds in the analysis' result: a split one is split on
  /// its axis, a whole one is replicated (or a partial sum, which is
  /// reduced where it is needed whole).
  static LogicalResult checkAnnotations(ArrayRef<Annotation> annotations,
                                        const ShardingAnalysis &a) {
    for (const Annotation &an : annotations) {
      Sharding s;
      if (an.isResult) {
        s = a.produced(an.op->getResult(an.index));
      } else {
        auto it = a.want.find({an.op, an.index});
        s = it != a.want.end() ? it->second
                               : a.of(an.op->getOperand(an.index));
      }
      bool ok = an.axis < 0 ? !s.isSplit()
                            : s.isSplit() && s.axis == an.axis;
      if (ok)
        continue;
      InFlightDiagnostic diag = an.op->emitError("sharding annotation of ")
                                << nameOf(an.op) << " asks for tensor '"
                                << an.tensor << "' ";
      if (an.axis < 0)
        diag << "whole on every device";
      else
        diag << "split on axis " << an.axis;
      diag << ", but tpc's sharding makes it " << s.str();
      auto role = a.role.find(an.op);
      if (role != a.role.end())
        diag << " (the MatMul is " << tp::stringifyRole(role->second)
             << " by its dataflow)";
      diag << "; fix the annotation or pass --ignore-sharding-annotations";
      return failure();
    }
    return success();
  }

  /// A blocked MatMul is a head transform when sharded weight MatMuls run
  /// before it (its activation derives from the trunk's reduced output) and
  /// everything after it is replicated up to the graph outputs: every weight
  /// MatMul it reaches is an output projection or another head transform.
  /// Blocked MatMuls of a trunk (a sharded MatMul after them) or of a model
  /// nothing is sharded in stay errors. Later MatMuls are classified first,
  /// so that a chain of transforms resolves back to front.
  static void
  classifyHeadTransforms(func::FuncOp func, const OpSet &forced,
                         const OpSet &splitHeads,
                         llvm::DenseMap<Operation *, ReplicationReason> &why) {
    constexpr size_t kLimit = 4096;
    auto kindOf = [&](Operation *m) {
      auto it = why.find(m);
      return it == why.end() ? ReplicationReason::Blocked : it->second.kind;
    };
    auto onlyReplicatedAfter = [&](Operation *m) {
      std::optional<bool> unreplicated =
          anyUserOf(m, kLimit, [&](Operation *cur) {
            if (!isWeightMatMul(cur))
              return false;
            if (!forced.contains(cur))
              return !splitHeads.contains(cur);
            ReplicationReason::Kind k = kindOf(cur);
            return !ReplicationReason::isOutputHead(k) &&
                   k != ReplicationReason::HeadTransform;
          });
      return unreplicated && !*unreplicated;
    };
    auto shardedBefore = [&](Operation *m) {
      SmallVector<Value> work{m->getOperand(0)};
      llvm::SmallPtrSet<Operation *, 32> seen;
      while (!work.empty()) {
        Operation *def = work.pop_back_val().getDefiningOp();
        if (!def || !seen.insert(def).second)
          continue;
        if (seen.size() > kLimit)
          return false;
        if (isWeightMatMul(def) && !forced.contains(def))
          return true;
        for (Value v : def->getOperands())
          work.push_back(v);
      }
      return false;
    };
    SmallVector<Operation *> order;
    for (Operation &op : func.getBody().front())
      if (forced.contains(&op) && kindOf(&op) == ReplicationReason::Blocked)
        order.push_back(&op);
    for (Operation *m : llvm::reverse(order))
      if (onlyReplicatedAfter(m) && shardedBefore(m))
        why[m] = {ReplicationReason::HeadTransform, why.lookup(m).at};
  }

  /// Fails closed: a weight MatMul replicated for no stated policy (an op
  /// blocked its split) is an error naming it and the op, unless the user
  /// allowed it. The first such MatMul in program order is usually the
  /// cause of the others, which become notes.
  static LogicalResult
  checkReplicated(func::FuncOp func, const OpSet &forced,
                  const llvm::DenseMap<Operation *, ReplicationReason> &why,
                  ArrayRef<llvm::GlobPattern> allowed) {
    SmallVector<Operation *> blocked;
    for (Operation &op : func.getBody().front()) {
      if (!forced.contains(&op))
        continue;
      auto it = why.find(&op);
      if (it != why.end() && it->second.kind != ReplicationReason::Blocked)
        continue;
      std::string node = nodeNameOf(op.getLoc());
      std::string weight = weightNameOf(&op);
      if (llvm::any_of(allowed, [&](const llvm::GlobPattern &g) {
            return (!node.empty() && g.match(node)) ||
                   (!weight.empty() && g.match(weight));
          }))
        continue;
      blocked.push_back(&op);
    }
    if (blocked.empty())
      return success();
    auto describe = [&](Operation *m) {
      std::string text = "weight MatMul " + nameOf(m);
      auto it = why.find(m);
      if (it != why.end() && it->second.at)
        text += ": its column split reaches " + nameOf(it->second.at) +
                ", which has no sharding rule for that split and needs the "
                "value whole";
      return text;
    };
    // The name the user can pass back: the node's, else the weight's.
    std::string name = nodeNameOf(blocked.front()->getLoc());
    if (name.empty())
      name = weightNameOf(blocked.front());
    InFlightDiagnostic diag = blocked.front()->emitError("cannot shard ")
                              << describe(blocked.front())
                              << "; it would stay replicated on every rank";
    if (!name.empty())
      diag << " (pass --allow-replicated '" << name << "' to accept that)";
    for (Operation *m : ArrayRef(blocked).drop_front().take_front(8))
      diag.attachNote(m->getLoc()) << "also " << describe(m);
    if (blocked.size() > 9)
      diag.attachNote() << blocked.size() - 9 << " more weight MatMuls";
    return failure();
  }

  /// The roles the plan asks for are the roles the dataflow gives, and
  /// every entry names some MatMul.
  LogicalResult checkPlan(func::FuncOp func, ShardingPlan &plan,
                          const ShardingAnalysis &a) {
    for (Operation &op : func.getBody().front()) {
      if (!isWeightMatMul(&op))
        continue;
      ShardingPlanEntry *e = plan.lookup(&op);
      auto role = a.role.find(&op);
      if (!e || role == a.role.end() || role->second == e->role)
        continue;
      StringRef why = role->second == tp::Role::Column
                          ? "its activation is whole there, so only a "
                            "column split needs no collective before it"
                      : role->second == tp::Role::Row
                          ? "its activation is split on the contraction "
                            "axis there, which makes it row-parallel"
                          : "an op blocks the split it needs";
      return op.emitError("sharding plan entry '")
             << e->pattern << "' asks " << e->word << " for weight MatMul "
             << nameOf(&op) << ", but the dataflow makes it "
             << tp::stringifyRole(role->second) << ": " << why;
    }
    for (const ShardingPlanEntry &e : plan.entries)
      if (!e.used)
        return func.emitError("sharding plan entry '")
               << e.pattern << "' names no weight MatMul of the model";
    return success();
  }

  /// Whether a weight MatMul's weight (through a transpose) is also the
  /// table of a row lookup (a tied embedding).
  static bool readsEmbeddingTable(Operation *mm) {
    Value b = mm->getOperand(1);
    if (auto t = b.getDefiningOp<onnx::TransposeOp>())
      b = t.getData();
    return llvm::any_of(b.getUsers(), [&](Operation *user) {
      auto g = dyn_cast<onnx::GatherOp>(user);
      return g && g.getData() == b && g.getAxis() == 0;
    });
  }

  /// What the compile summary and `tpc inspect` say about the reason.
  static StringRef reasonName(ReplicationReason::Kind kind) {
    using R = ReplicationReason;
    static constexpr std::pair<R::Kind, const char *> kNames[] = {
        {R::OutputHead, "output projection"},
        {R::NarrowOutputHead, "narrow output projection"},
        {R::KvHeads, "kv heads fewer than ranks"},
        {R::Blocked, "allowed by --allow-replicated"},
        {R::Requested, "sharding plan"},
        {R::Annotated, "sharding annotation"},
        {R::Router, "expert router"},
        {R::HeadTransform, "head transform"},
    };
    for (auto [k, name] : kNames)
      if (k == kind)
        return name;
    return "";
  }

  static std::string nameOf(Operation *op) {
    std::string node = nodeNameOf(op->getLoc());
    return "'" + (node.empty() ? op->getName().getStringRef().str() : node) +
           "' (" + op->getName().getStringRef().str() + ")";
  }


  /// Whether a value derived from `op` reaches an activation MatMul whose
  /// result is split.
  static bool meetsSplitHeads(Operation *op, ShardingAnalysis &a) {
    return anyUserOf(op, 256, [&](Operation *cur) {
             return isa<onnx::MatMulOp>(cur) && !isWeightMatMul(cur) &&
                    a.of(cur->getResult(0)).isSplit();
           }).value_or(false);
  }
};

} // namespace
} // namespace tpc
