//===- ShardingAnalysis.h - Sharding propagation rules ----------*- C++ -*-===//
//
// The rules of tensor-parallel sharding, one per kind of op: given the
// shardings of an op's operands, the sharding of its results and the
// sharding it needs of each operand. The sharding pass runs them to choose
// shardings; the partitioning pass runs them to check that a program's
// shardings (perhaps left by a custom pass) are consistent.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_PASSES_SHARDINGANALYSIS_H
#define TPC_PASSES_SHARDINGANALYSIS_H

#include "passes/Sharding.h"

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <optional>

namespace tpc {

using OpSet = llvm::SmallSetVector<mlir::Operation *, 4>;

/// Whether `op` is a MatMul or Gemm whose B operand is a weight: an
/// onnx.Weight (through a transpose of its last two axes at most), a value
/// computed from weights and constants only by weight-expression ops (a
/// dequantized weight), or a 2-D float constant the importer folded.
bool isWeightMatMul(mlir::Operation *op);
/// Whether `pred` holds for an op that reads a value derived from `from`,
/// or nullopt when more than `limit` ops (`from` counted) are reached
/// before it does.
std::optional<bool> anyUserOf(mlir::Operation *from, size_t limit,
                              llvm::function_ref<bool(mlir::Operation *)> pred);
/// The weight behind a MatMul's B operand when it is one: onnx.Weight,
/// possibly through a transpose of its last two axes (`transposed` tells).
onnx::WeightOp directWeight(mlir::Value b, bool &transposed);
/// The weight a MatMul's B operand is, or is computed from (the leaf with
/// B's element count, else the largest); null when B reads an activation.
onnx::WeightOp weightOf(mlir::Value b);
/// Ops that may compute a weight from weights and constants: Cast, the
/// arithmetic of dequantization (Sub, Mul, Add, Div), Reshape, Transpose,
/// and Gather of constant indices (block scales spread over their blocks).
bool isWeightExpressionOp(mlir::Operation *op);

/// The [start, end) range of `axis` that a Slice with step 1 or a Gather of
/// constant, contiguous indices (rank 0 or 1) takes; nullopt when the op
/// does not cut `axis`, {-1, -1} when it cuts it some other way.
std::optional<std::pair<int64_t, int64_t>> cutRange(mlir::Operation *op,
                                                    int64_t axis);

/// The error for a reshape that splits `heads` heads over `tp` ranks
/// unevenly: it names the node, the dimension and the tp values that work.
/// With `groups` > 1 the heads are a group's, in a grouped fused projection:
/// the tp values at which its projection is split per cut
/// (groupedSplitApplies) work too.
mlir::LogicalResult emitHeadError(mlir::Operation *op, int64_t tp, int64_t dim,
                                  int64_t heads, int64_t groups = 1);

/// How an output projection is sharded: a column-parallel MatMul whose split
/// reaches a graph output unchanged (an LM head, a classifier). Split, each
/// rank computes its columns and the output is all-gathered (what Megatron-LM
/// and vLLM do with the LM head); replicated, every rank computes the whole
/// projection and reads its whole weight.
enum class OutputHeadPolicy {
  /// Column-parallel when every rank gets at least kMinOutputHeadColumns
  /// columns; narrower projections (a classifier's few labels) stay
  /// replicated, where the gather would cost about what the split saves.
  Auto,
  /// Always column-parallel.
  Column,
  /// Always replicated.
  Replicated,
};

/// The fewest columns per rank for which OutputHeadPolicy::Auto splits an
/// output projection.
constexpr int64_t kMinOutputHeadColumns = 64;

/// The policy named `name` ("auto", "column" or "replicated"); none for
/// another name.
std::optional<OutputHeadPolicy> parseOutputHeadPolicy(llvm::StringRef name);
/// The accepted names, for messages: "auto, column or replicated".
const char *outputHeadPolicyNames();

/// Why a weight MatMul that could have been column-parallel is replicated.
struct ReplicationReason {
  enum Kind {
    /// Its split reaches a graph output unchanged (an LM head or another
    /// output projection) and the output-head policy is Replicated.
    OutputHead,
    /// The same, under the Auto policy, for a projection narrower than
    /// kMinOutputHeadColumns columns per rank.
    NarrowOutputHead,
    /// Its heads are fewer than the ranks (GQA/MQA kv heads): replicated,
    /// and each rank's q heads read them.
    KvHeads,
    /// An op that cannot take the split needs the value whole.
    Blocked,
    /// The user's sharding plan asks for it.
    Requested,
    /// The model's ONNX sharding annotation keeps its weight whole.
    Annotated,
    /// It scores experts for a TopK (a mixture-of-experts router): every
    /// rank routes every token, so the scores are needed whole, and the
    /// projection is small (hidden x experts).
    Router,
    /// Its split is blocked, but it reads the sharded trunk's reduced
    /// output and feeds only output projections (split or replicated),
    /// other head transforms and graph outputs: the transform of a model's
    /// head (BERT's and RoBERTa's masked-LM dense and norm before the
    /// vocabulary projection), which Megatron-LM keeps replicated too.
    HeadTransform,
  };
  Kind kind = Blocked;
  /// The op that needed the whole value (Blocked) or the reshape to heads
  /// (KvHeads).
  mlir::Operation *at = nullptr;

  /// Whether `k` keeps an output projection whole (under either policy).
  static bool isOutputHead(Kind k) {
    return k == OutputHead || k == NarrowOutputHead;
  }
};

/// What runs of the analysis learned for the next: choices that depend on
/// later uses of a value, which one walk in program order cannot see yet.
/// The sharding pass reruns the analysis until they stop growing.
struct ShardingHints {
  /// Weight MatMuls kept replicated.
  OpSet forced;
  /// Partial values that some use needs whole: every use reads the one
  /// all-reduced value.
  llvm::DenseSet<mlir::Value> reduced;
  /// Adds of a partial and a replicated value that stay partial (the
  /// replicated operand added once, by rank 0) because the sum meets another
  /// partial sum before anything needs it whole: parallel residual blocks
  /// then need one all-reduce instead of two.
  OpSet deferred;
  /// Output projections the user asked to keep column-parallel (their
  /// logits are gathered), as OutputHeadPolicy::Column does for all.
  OpSet keepColumn;
};

class ShardingAnalysis {
public:
  ShardingAnalysis(mlir::func::FuncOp func, int64_t tp,
                   OutputHeadPolicy outputHeads, const ShardingHints &hints)
      : func(func), tp(tp), outputHeads(outputHeads), hints(hints),
        reduced(hints.reduced) {}

  /// Visits every op of the function in order. failure() after an error.
  mlir::LogicalResult run();
  /// Megatron's vocab-parallel embedding: a Gather of rows of a 2-D weight
  /// splits the table by rows (each rank looks up the ids it holds, zeros
  /// for the others) and gives a partial sum.
  bool vocabParallelEmbedding = false;

  /// Applies the rule of one op to the current state.
  mlir::LogicalResult visit(mlir::Operation *op);
  /// Whether this run learned something `hints` did not hold; `hints` then
  /// gets it.
  bool learn(ShardingHints &hints) const;

  /// The sharding each op needs of each operand, where it differs from the
  /// operand's.
  std::map<std::pair<mlir::Operation *, unsigned>, Sharding> want;
  /// The sharding each value is produced with.
  llvm::DenseMap<mlir::Value, Sharding> state;
  /// The role the dataflow gives each weight MatMul.
  llvm::DenseMap<mlir::Operation *, tp::Role> role;
  /// Column-parallel MatMuls whose split was gathered again, with why: they
  /// should be forced replicated and the analysis rerun.
  OpSet retry;
  llvm::DenseMap<mlir::Operation *, ReplicationReason> retryReasons;
  /// Reshapes whose heads could not be split (fewer heads than ranks), with
  /// the dimension and head count: their projections were forced replicated.
  llvm::SmallVector<std::tuple<mlir::Operation *, int64_t, int64_t>>
      headFallbacks;
  /// Column MatMuls whose split reaches a graph output and is gathered
  /// there: the output projections the policy split.
  OpSet splitOutputHeads;

  /// The sharding a use of `v` reads: a value all-reduced for one use is
  /// read whole by all. A copy: references into `state` would dangle.
  Sharding of(mlir::Value v) const {
    if (reduced.contains(v) && produced(v).isPartial())
      return Sharding::replicated();
    return produced(v);
  }
  /// The sharding `v` is produced with.
  Sharding produced(mlir::Value v) const {
    auto it = state.find(v);
    return it == state.end() ? Sharding::replicated() : it->second;
  }

  // The rule API: what a ShardingRuleOpInterface model calls to state how
  // shardings flow through its op (passes/ShardingRules.cpp holds tpc's own
  // rules, and a plugin's ops bring theirs).

  /// The tensor-parallel degree.
  int64_t size() const { return tp; }
  /// Records that `v` is produced as `s`; `from` are the column MatMuls
  /// whose split it carries (the ones to replicate if it is gathered).
  void set(mlir::Value v, const Sharding &s, const OpSet &from = {}) {
    state[v] = s;
    if (s.isSplit() && !from.empty())
      origins[v] = from;
  }
  /// The column MatMuls whose split `v` carries.
  OpSet originsOf(mlir::Value v) {
    auto it = origins.find(v);
    return it == origins.end() ? OpSet() : it->second;
  }
  /// Records that `op` needs operand `i` as `s`.
  void require(mlir::Operation *op, unsigned i, const Sharding &s);
  void requireAll(mlir::Operation *op, const Sharding &s) {
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      require(op, i, s);
  }
  /// The rule of an op that runs on whole tensors: every operand is
  /// gathered or reduced first, every result is replicated.
  void replicate(mlir::Operation *op) {
    requireAll(op, Sharding::replicated());
    for (mlir::Value r : op->getResults())
      set(r, Sharding::replicated());
  }

  /// The shared rules of op families, for models to call.
  mlir::LogicalResult visitWeightMatMul(mlir::Operation *op);
  void visitActivationMatMul(mlir::Operation *op);
  /// Elementwise ops (with broadcasting): a split passes through, a
  /// partial one through ops linear in it.
  void visitElementwise(mlir::Operation *op);
  mlir::LogicalResult visitReshape(mlir::Operation *op);
  /// Ops along `reducedAxes` (softmax, norms, reductions): a split on
  /// another axis passes through.
  void visitAxisOp(mlir::Operation *op, llvm::ArrayRef<int64_t> reducedAxes,
                   bool keepDims, bool linearOverReduced);
  void visitSplit(mlir::Operation *op);
  void visitSlice(mlir::Operation *op);
  void visitTransposeLike(mlir::Operation *op, llvm::ArrayRef<int64_t> perm);

private:
  /// Marks the column MatMuls behind split `v` for replication.
  void forceOrigins(mlir::Value v, ReplicationReason why);
  /// Whether the split `s` of a graph output is the unchanged output split
  /// of one of its column MatMuls (an output projection such as an LM head)
  /// rather than a split that reshapes made (heads of a KV cache output).
  bool isOutputProjection(mlir::Value v, const Sharding &s);
  /// Why the output projection behind split `s` stays replicated under the
  /// policy; none when it is split.
  std::optional<ReplicationReason::Kind>
  outputHeadReplication(const Sharding &s) const;
  /// Whether `op` (or what it feeds through softmax, sigmoid and casts) is
  /// a TopK: the op then scores experts for routing.
  static bool feedsTopK(mlir::Operation *op);
  /// Add/Sub of a partial value: stays partial, reduces, or (for a later
  /// run) defers the reductions of sums that meet here. Returns false when
  /// `op` is not such an add.
  bool visitPartialAdd(mlir::Operation *op);

  mlir::func::FuncOp func;
  int64_t tp;
  OutputHeadPolicy outputHeads;
  const ShardingHints &hints;
  /// hints.reduced and what this run added.
  llvm::DenseSet<mlir::Value> reduced;
  OpSet newDeferred;
  llvm::DenseMap<mlir::Value, OpSet> origins;
  /// Replicated values made by Adds that reduced a partial operand eagerly,
  /// with those Adds: deferring them would keep the value partial.
  llvm::DenseMap<mlir::Value, OpSet> eagerSources;
};

} // namespace tpc

#endif
