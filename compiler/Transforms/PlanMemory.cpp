//===- PlanMemory.cpp - Arena offsets by liveness -------------------------===//
#include "compiler/Transforms/Passes.h"

#include "compiler/Dialect/ONNX/IR/KernelBridge.h"
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>

namespace tpc {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace tpc

using namespace mlir;

namespace tpc {
namespace {

int64_t byteSize(Type t) {
  auto rt = cast<RankedTensorType>(t);
  return rt.getNumElements() * onnx::elementBytes(rt.getElementType());
}

/// One arena allocation shared by a value and the views of it.
struct Interval {
  Value root;
  int64_t start, end; // op indices; start -1 for arguments
  int64_t bytes;
  int64_t offset = -1;
};

/// The operand whose buffer an elementwise kernel can write its result
/// over: an arena value of the result's type whose buffer nothing reads
/// after this op (at `at`).
std::optional<unsigned>
inPlaceOperand(plan::KernelOp kernel, int64_t at,
               const llvm::DenseMap<Value, size_t> &rootOf,
               const std::vector<int64_t> &rootEnd) {
  if (kernel.getNumResults() != 1 || !onnx::kernelRunsInPlace(kernel.getKernel()))
    return std::nullopt;
  Type type = kernel.getResult(0).getType();
  for (unsigned i = 0; i < kernel.getNumOperands(); ++i) {
    Value v = kernel.getOperand(i);
    auto it = rootOf.find(v);
    if (it != rootOf.end() && v.getType() == type && rootEnd[it->second] == at)
      return i;
  }
  return std::nullopt;
}

struct PlanMemoryPass : impl::PlanMemoryPassBase<PlanMemoryPass> {
  using PlanMemoryPassBase::PlanMemoryPassBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      planFunction(func);
  }

  int64_t align(int64_t n) const {
    return (n + alignment - 1) / alignment * alignment;
  }

  void planFunction(func::FuncOp func) {
    if (func.isExternal())
      return;
    Block &block = func.getBody().front();
    llvm::DenseMap<Operation *, int64_t> index;
    int64_t i = 0;
    for (Operation &op : block)
      index[&op] = i++;
    const int64_t kEnd = i + 1;

    // Each arena value maps to the interval of its root allocation.
    llvm::DenseMap<Value, size_t> rootOf;
    std::vector<Interval> intervals;
    auto addRoot = [&](Value v, int64_t start) {
      rootOf[v] = intervals.size();
      intervals.push_back({v, start, start, align(byteSize(v.getType()))});
    };
    for (BlockArgument arg : block.getArguments())
      addRoot(arg, -1);
    // The last op that uses each value (kEnd for values the function
    // returns), and so far the last use of any value sharing each root.
    llvm::DenseMap<Value, int64_t> lastUse;
    auto noteUses = [&](Value v) {
      int64_t last = -1;
      for (Operation *user : v.getUsers())
        last = std::max(last, isa<func::ReturnOp>(user) ? kEnd : index[user]);
      lastUse[v] = last;
    };
    std::vector<int64_t> rootEnd;
    auto share = [&](Value v, size_t root) {
      rootOf[v] = root;
      rootEnd[root] = std::max(rootEnd[root], lastUse[v]);
    };
    for (BlockArgument arg : block.getArguments()) {
      noteUses(arg);
      rootEnd.push_back(lastUse[arg]);
    }
    OpBuilder b(func.getContext());
    for (Operation &op : block) {
      auto kernel = dyn_cast<plan::KernelOp>(op);
      if (!kernel)
        continue;
      for (Value r : kernel.getResults())
        noteUses(r);
      kernel->removeAttr("plan.view");
      kernel->removeAttr("plan.in_place");
      kernel->removeAttr("plan.state_write");
      // A kernel that writes engine state in place: its result is the
      // state's buffer, outside the arena.
      if (kernel.getKernel() == "CacheWrite" && kernel.getNumOperands() &&
          kernel.getNumResults() == 1 &&
          kernel.getOperand(0).getDefiningOp<plan::StateOp>()) {
        kernel->setAttr("plan.state_write", b.getUnitAttr());
        continue;
      }
      bool view = kernel.getKernel() == "Reshape" && kernel.getNumOperands() == 1 &&
                  rootOf.count(kernel.getOperand(0));
      if (view) {
        share(kernel.getResult(0), rootOf[kernel.getOperand(0)]);
        kernel->setAttr("plan.view", b.getUnitAttr());
        continue;
      }
      if (std::optional<unsigned> operand = inPlaceOperand(kernel, index[&op],
                                                          rootOf, rootEnd)) {
        share(kernel.getResult(0), rootOf[kernel.getOperand(*operand)]);
        kernel->setAttr("plan.in_place", b.getI64IntegerAttr(*operand));
        continue;
      }
      for (Value r : kernel.getResults()) {
        addRoot(r, index[&op]);
        rootEnd.push_back(lastUse[r]);
      }
    }
    // Lifetimes end at the last use of any value sharing the root.
    for (auto &[value, root] : rootOf) {
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        int64_t end = isa<func::ReturnOp>(user) ? kEnd : index[user];
        intervals[root].end = std::max(intervals[root].end, end);
      }
    }

    // Greedy by size: largest first, at the lowest offset that does not
    // overlap a placed interval whose lifetime overlaps.
    std::vector<size_t> order(intervals.size());
    for (size_t k = 0; k < order.size(); ++k)
      order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t c) {
      return intervals[a].bytes > intervals[c].bytes;
    });
    std::vector<size_t> placed;
    int64_t arena = 0, unplanned = 0;
    for (size_t k : order) {
      Interval &iv = intervals[k];
      unplanned += iv.bytes;
      std::vector<std::pair<int64_t, int64_t>> busy;
      for (size_t p : placed) {
        const Interval &o = intervals[p];
        if (o.start <= iv.end && iv.start <= o.end)
          busy.push_back({o.offset, o.offset + o.bytes});
      }
      std::sort(busy.begin(), busy.end());
      int64_t offset = 0;
      for (auto [lo, hi] : busy) {
        if (offset + iv.bytes <= lo)
          break;
        offset = std::max(offset, hi);
      }
      iv.offset = offset;
      arena = std::max(arena, offset + iv.bytes);
      placed.push_back(k);
    }
    // The most bytes live at any one time: no arena can be smaller.
    int64_t lowerBound = 0;
    for (int64_t t = -1; t <= kEnd; ++t) {
      int64_t live = 0;
      for (const Interval &iv : intervals)
        if (iv.start <= t && t <= iv.end)
          live += iv.bytes;
      lowerBound = std::max(lowerBound, live);
    }

    for (BlockArgument arg : block.getArguments())
      func.setArgAttr(arg.getArgNumber(), "plan.offset",
                      b.getI64IntegerAttr(intervals[rootOf[arg]].offset));
    for (Operation &op : block) {
      auto kernel = dyn_cast<plan::KernelOp>(op);
      if (!kernel)
        continue;
      SmallVector<int64_t> offs;
      for (Value r : kernel.getResults()) {
        auto it = rootOf.find(r);
        offs.push_back(it == rootOf.end() ? -1 : intervals[it->second].offset);
      }
      kernel.setOffsetsAttr(b.getDenseI64ArrayAttr(offs));
    }
    func->setAttr("plan.arena_bytes", b.getI64IntegerAttr(arena));
    func->setAttr("plan.unplanned_bytes", b.getI64IntegerAttr(unplanned));
    func->setAttr("plan.lower_bound_bytes", b.getI64IntegerAttr(lowerBound));
  }
};

} // namespace
} // namespace tpc
