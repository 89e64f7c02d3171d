//===- KVCache.cpp - Past/present pairs as engine state -------------------===//
#include "compiler/Transforms/Passes.h"

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/TPC/IR/TPCOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"

namespace tpc {
#define GEN_PASS_DEF_KVCACHEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace tpc

using namespace mlir;

namespace tpc {
namespace {

struct Pair {
  BlockArgument past;
  onnx::ConcatOp concat;
  unsigned result;
};

struct KVCachePass : impl::KVCachePassBase<KVCachePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func = module.lookupSymbol<func::FuncOp>("main");
    if (!func || func.isExternal()) {
      module.emitError("tpc-kv-cache expects a function @main");
      return signalPassFailure();
    }
    Block &entry = func.getBody().front();
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    auto outNames = func->getAttrOfType<ArrayAttr>("onnx.output_names");
    SmallVector<Pair> pairs;
    for (BlockArgument arg : entry.getArguments()) {
      if (!arg.hasOneUse())
        continue;
      auto concat = dyn_cast<onnx::ConcatOp>(*arg.getUsers().begin());
      if (!concat || concat.getInputs().size() != 2 ||
          concat.getInputs()[0] != arg)
        continue;
      for (OpOperand &use : concat.getResult().getUses())
        if (use.getOwner() == ret) {
          pairs.push_back({arg, concat, use.getOperandNumber()});
          break;
        }
    }
    if (pairs.empty()) {
      func.emitError("--kv-cache: the model has no past/present pairs (a "
                     "graph input that a Concat extends with new keys or "
                     "values into a graph output); export it with past "
                     "inputs (optimum's text-generation-with-past)");
      return signalPassFailure();
    }
    OpBuilder b(func.getContext());
    int64_t length = -1;
    for (Pair &p : pairs) {
      RankedTensorType t = p.concat.getType();
      int64_t axis = int64_t(p.concat.getAxis());
      if (axis < 0)
        axis += t.getRank();
      if (length >= 0 && t.getDimSize(axis) != length) {
        p.concat.emitError("--kv-cache: the caches differ in length (")
            << length << " and " << t.getDimSize(axis) << ")";
        return signalPassFailure();
      }
      length = t.getDimSize(axis);
    }

    // The input that says where this forward's entries go: the importer's
    // (which positions computed from the past length read too), else new.
    auto posType = RankedTensorType::get({1}, b.getI64Type());
    Value position;
    for (BlockArgument arg : entry.getArguments()) {
      auto name =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "onnx.name");
      if (!name || name.getValue() != "cache_position")
        continue;
      if (arg.getType() != posType) {
        func.emitError("--kv-cache: input 'cache_position' is ")
            << arg.getType() << ", not " << posType;
        return signalPassFailure();
      }
      position = arg;
    }
    if (!position) {
      unsigned posIndex = entry.getNumArguments();
      func.insertArgument(posIndex, posType,
                          b.getDictionaryAttr(b.getNamedAttr(
                              "onnx.name", b.getStringAttr("cache_position"))),
                          func.getLoc());
      position = entry.getArgument(posIndex);
    }

    SmallVector<Attribute> pairNames;
    llvm::BitVector deadArgs(entry.getNumArguments());
    llvm::BitVector deadResults(ret.getNumOperands());
    for (Pair &p : pairs) {
      std::string past =
          func.getArgAttrOfType<StringAttr>(p.past.getArgNumber(), "onnx.name")
              .str();
      std::string present =
          outNames && p.result < outNames.size()
              ? cast<StringAttr>(outNames[p.result]).str()
              : std::string();
      pairNames.push_back(b.getArrayAttr(
          {b.getStringAttr(past), b.getStringAttr(present)}));
      RankedTensorType t = p.concat.getType();
      int64_t axis = int64_t(p.concat.getAxis());
      if (axis < 0)
        axis += t.getRank();
      b.setInsertionPoint(p.concat);
      auto state =
          b.create<ext::KVStateOp>(p.concat.getLoc(), t, b.getStringAttr(past));
      auto write = b.create<ext::CacheWriteOp>(
          p.concat.getLoc(), t, state.getResult(), p.concat.getInputs()[1],
          position, b.getI64IntegerAttr(axis));
      p.concat.getResult().replaceAllUsesWith(write.getResult());
      p.concat.erase();
      deadArgs.set(p.past.getArgNumber());
      deadResults.set(p.result);
    }
    SmallVector<Value> results;
    SmallVector<Attribute> names;
    for (OpOperand &o : ret->getOpOperands()) {
      if (deadResults.test(o.getOperandNumber()))
        continue;
      results.push_back(o.get());
      if (outNames)
        names.push_back(outNames[o.getOperandNumber()]);
    }
    b.setInsertionPoint(ret);
    b.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    func.eraseArguments(deadArgs);
    func.setFunctionType(b.getFunctionType(
        entry.getArgumentTypes(), ValueRange(results).getTypes()));
    if (outNames)
      func->setAttr("onnx.output_names", b.getArrayAttr(names));
    module->setAttr(
        "onnx.kv_cache",
        b.getDictionaryAttr(
            {b.getNamedAttr("length", b.getI64IntegerAttr(length)),
             b.getNamedAttr("position", b.getStringAttr("cache_position")),
             b.getNamedAttr("pairs", b.getArrayAttr(pairNames))}));
  }
};

} // namespace
} // namespace tpc
