//===- LowerToPlan.cpp - onnx ops to plan kernels -------------------------===//
#include "compiler/Dialect/ONNX/IR/KernelBridge.h"
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/ONNX/IR/ValueUtils.h"
#include "compiler/Dialect/TP/IR/TPOps.h"
#include "compiler/Dialect/TPC/IR/TPCOps.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace tpc {
#define GEN_PASS_DEF_LOWERTOPLANPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace tpc

using namespace mlir;

namespace tpc {

namespace {

/// Attributes that describe where an op came from, not what it computes.
bool isKernelAttr(StringRef name) {
  // A kernel tells its optional operands apart by their types, not by the
  // op's segment sizes.
  return !name.starts_with("tp.") && !name.starts_with("plan.") &&
         !name.starts_with("onnx.") && name != "operandSegmentSizes";
}

struct LowerToPlanPass : impl::LowerToPlanPassBase<LowerToPlanPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int constants = 0;
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (!isa<ModuleOp, func::FuncOp, func::ReturnOp>(op) &&
          !isa_and_nonnull<plan::PlanDialect>(op->getDialect()))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      if (failed(lower(op, constants)))
        return signalPassFailure();
    module.walk([&](func::ReturnOp ret) { copyUncomputedOutputs(ret); });
  }

  /// A graph output that is a constant, a weight or a graph input has no
  /// kernel writing it into the arena, where outputs are read from: copy it
  /// there.
  void copyUncomputedOutputs(func::ReturnOp ret) {
    auto func = ret->getParentOfType<func::FuncOp>();
    auto names = func->getAttrOfType<ArrayAttr>("onnx.output_names");
    OpBuilder b(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Value v = operand.get();
      if (isa_and_nonnull<plan::KernelOp>(v.getDefiningOp()))
        continue;
      std::string node = "output";
      if (names && operand.getOperandNumber() < names.size())
        node += "." + cast<StringAttr>(names[operand.getOperandNumber()]).str();
      auto copy = b.create<plan::KernelOp>(
          ret.getLoc(), TypeRange{v.getType()}, b.getStringAttr("Copy"),
          ValueRange{v}, b.getDictionaryAttr({}), b.getStringAttr(node),
          DenseI64ArrayAttr());
      operand.set(copy.getResult(0));
    }
  }

  LogicalResult lower(Operation *op, int &constants) {
    {
      OpBuilder b(op);
      Operation *repl = nullptr;
      if (auto c = dyn_cast<onnx::ConstantOp>(op)) {
        repl = b.create<plan::ConstantOp>(
            op->getLoc(), c.getType(),
            b.getStringAttr("const." + std::to_string(constants++)),
            c.getValue());
      } else if (auto w = dyn_cast<onnx::WeightOp>(op)) {
        auto src = w->getAttrOfType<DenseI64ArrayAttr>(tp::kSourceShapeAttr);
        auto nw = b.create<plan::WeightOp>(
            op->getLoc(), w.getType(), w.getNameAttr(), w.getFileAttr(),
            w.getOffsetAttr(), w.getLengthAttr(),
            src ? src : b.getDenseI64ArrayAttr(w.getType().getShape()),
            w->getAttrOfType<IntegerAttr>(tp::kAxisAttr),
            w->getAttrOfType<DenseI64ArrayAttr>(tp::kRangesAttr),
            w->getAttrOfType<TypeAttr>("onnx.source_type"),
            w->getAttrOfType<DictionaryAttr>("onnx.quantize"));
        repl = nw;
      } else if (auto st = dyn_cast<ext::KVStateOp>(op)) {
        repl = b.create<plan::StateOp>(op->getLoc(), st.getType(),
                                       st.getNameAttr());
      } else if (isa_and_nonnull<onnx::ONNXDialect, ext::TPCDialect,
                                 tp::TPDialect>(op->getDialect())) {
        if (op->getNumRegions() != 0)
          return op->emitOpError("has regions; cannot lower to a kernel");
        SmallVector<NamedAttribute> attrs;
        for (NamedAttribute a : op->getAttrs())
          if (isKernelAttr(a.getName().strref()))
            attrs.push_back(a);
        std::string kernelName = onnx::kernelName(op).str();
        // The name is the only link between the plan and the kernel
        // tables: check it here rather than when an engine loads.
        if (!onnx::kernelExists(kernelName))
          return op->emitOpError()
                 << "lowers to kernel '" << kernelName
                 << "', which no kernel table has";
        auto kop = b.create<plan::KernelOp>(
            op->getLoc(), op->getResultTypes(), b.getStringAttr(kernelName),
            op->getOperands(), b.getDictionaryAttr(attrs),
            b.getStringAttr(nodeNameOf(op->getLoc())), DenseI64ArrayAttr());
        for (NamedAttribute a : op->getAttrs())
          if (a.getName().strref().starts_with("tp."))
            kop->setAttr(a.getName(), a.getValue());
        repl = kop;
      } else {
        return op->emitOpError("cannot be lowered to a plan: only onnx and "
                               "tp ops can");
      }
      op->replaceAllUsesWith(repl->getResults());
      op->erase();
      return success();
    }
  }
};

} // namespace
} // namespace tpc
