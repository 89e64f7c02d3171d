//===- BoundCacheAttention.cpp - Attention reads the filled cache only ----===//
#include "compiler/Transforms/Passes.h"

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/ONNX/IR/ValueUtils.h"
#include "compiler/Dialect/TPC/IR/TPCOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace tpc {
#define GEN_PASS_DEF_BOUNDCACHEATTENTIONPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace tpc

using namespace mlir;

namespace tpc {
namespace {

/// The CacheWrite along the key axis (2 of [batch, kv_heads, positions,
/// dim]) that `v` reads, directly or through Slices of the kv-head axis
/// (a rank's kv heads of a replicated cache), or null.
ext::CacheWriteOp cacheRead(Value v, SmallVectorImpl<Operation *> &through) {
  while (auto slice = v.getDefiningOp<onnx::SliceOp>()) {
    if (slice.getAxes().size() != 1 || slice.getAxes()[0] != 1 ||
        slice.getSteps()[0] != 1)
      return nullptr;
    through.push_back(slice);
    v = slice.getData();
  }
  auto write = v.getDefiningOp<ext::CacheWriteOp>();
  if (!write || cast<RankedTensorType>(write.getType()).getRank() != 4 ||
      write.getAxis() != 2)
    return nullptr;
  return write;
}

/// The function argument named `name` (the `onnx.name` argument
/// attribute), or null.
Value namedArgument(func::FuncOp func, StringRef name) {
  for (BlockArgument arg : func.getArguments())
    if (auto n = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                   "onnx.name"))
      if (n.getValue() == name)
        return arg;
  return nullptr;
}

struct BoundCacheAttentionPass
    : impl::BoundCacheAttentionPassBase<BoundCacheAttentionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kv = module->getAttrOfType<DictionaryAttr>("onnx.kv_cache");
    if (!kv)
      return;
    auto positionName = kv.getAs<StringAttr>("position");
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Value position =
          positionName ? namedArgument(func, positionName.getValue()) : Value();
      // The reads each bounded attention accounts for.
      llvm::SmallPtrSet<Operation *, 16> bounded;
      func.walk([&](onnx::AttentionOp att) {
        SmallVector<Operation *> through;
        ext::CacheWriteOp k = cacheRead(att.getK(), through);
        ext::CacheWriteOp v = cacheRead(att.getV(), through);
        if (!position || !k || !v || att.getNonpadKvSeqlen())
          return;
        OpBuilder b(att);
        Location loc = att.getLoc();
        RankedTensorType q = att.getQ().getType();
        // The forward writes T = q_len new positions at cache_position.
        auto i64 = RankedTensorType::get({1}, b.getI64Type());
        Value t = b.create<onnx::ConstantOp>(
            loc, i64, DenseElementsAttr::get(i64, q.getDimSize(2)));
        Value filled = b.create<onnx::AddOp>(loc, i64, position, t);
        if (q.getDimSize(0) != 1)
          filled = b.create<onnx::ExpandOp>(
              loc, RankedTensorType::get({q.getDimSize(0)}, b.getI64Type()),
              filled);
        att.getNonpadKvSeqlenMutable().assign(filled);
        bounded.insert(att);
        bounded.insert(through.begin(), through.end());
      });
      // Anything else reading a state whole costs the cache's capacity.
      func.walk([&](ext::CacheWriteOp write) {
        SmallVector<Operation *> users(write->getUsers().begin(),
                                       write->getUsers().end());
        while (!users.empty()) {
          Operation *user = users.pop_back_val();
          if (!bounded.contains(user)) {
            user->emitWarning()
                << "node '" << nodeNameOf(user->getLoc()) << "' ("
                << user->getName()
                << ") reads the whole KV cache, not only its filled "
                   "positions: its cost follows the cache's capacity";
            continue;
          }
          if (!isa<onnx::AttentionOp>(user))
            users.append(user->getUsers().begin(), user->getUsers().end());
        }
      });
    }
  }
};

} // namespace
} // namespace tpc
