//===- ConvertFloatType.cpp - Compute in fp16 or bf16 ---------------------===//
//
// Rewrites every f32 tensor of a function to f16 or bf16, keeping the
// function's signature through Casts at its boundary. Weights only change
// type (the engine writer converts their bytes); constants are converted
// here with the same rounding.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/ONNX/IR/ShapeUtils.h"
#include "compiler/Transforms/Passes.h"
#include "kernels/Half.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace tpc {
#define GEN_PASS_DEF_CONVERTFLOATTYPEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace tpc

using namespace mlir;

namespace tpc {
namespace {

/// The f32 -> target rounding shared with the engine writer's weights.
uint16_t narrow(float v, bool bf16) {
  return bf16 ? floatToBf16Saturating(v) : floatToHalfSaturating(v);
}

/// `attr` (f32 elements) as an attribute of `type` (f16 or bf16 elements).
FailureOr<DenseElementsAttr> convertElements(Attribute attr,
                                             RankedTensorType type) {
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense || !dense.getElementType().isF32())
    return failure();
  bool bf16 = type.getElementType().isBF16();
  SmallVector<uint16_t> bits;
  if (dense.isSplat()) {
    bits.push_back(narrow(dense.getSplatValue<float>(), bf16));
  } else {
    bits.reserve(dense.getNumElements());
    for (float v : dense.getValues<float>())
      bits.push_back(narrow(v, bf16));
  }
  // One element of raw data is read as a splat.
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(reinterpret_cast<const char *>(bits.data()),
                           bits.size() * sizeof(uint16_t)));
}

struct ConvertFloatTypePass
    : impl::ConvertFloatTypePassBase<ConvertFloatTypePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    if (dtype == "fp32")
      return;
    if (dtype == "fp16")
      target = Float16Type::get(ctx);
    else if (dtype == "bf16")
      target = BFloat16Type::get(ctx);
    else {
      getOperation().emitError("tpc-convert-float-type: dtype must be fp32, "
                               "fp16 or bf16, not '")
          << StringRef(dtype) << "'";
      return signalPassFailure();
    }
    targetNumber = *onnx::onnxTypeNumber(target);
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(convertFunction(func)))
        return signalPassFailure();
  }

private:
  Type convertType(Type t) const {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || !rt.getElementType().isF32())
      return t;
    return rt.clone(target);
  }

  LogicalResult convertFunction(func::FuncOp func) {
    Block &body = func.getBody().front();
    OpBuilder b(func.getContext());

    // f32 arguments keep their type; the body sees a cast copy.
    b.setInsertionPointToStart(&body);
    for (BlockArgument arg : body.getArguments()) {
      Type t = convertType(arg.getType());
      if (t == arg.getType())
        continue;
      auto cast = b.create<onnx::CastOp>(arg.getLoc(), t, arg,
                                         b.getI64IntegerAttr(targetNumber));
      arg.replaceAllUsesExcept(cast.getResult(), cast.getOperation());
    }

    for (Operation &op : body.without_terminator())
      if (failed(convertOp(&op)))
        return failure();

    // Results the model declares f32 are cast back.
    Operation *ret = body.getTerminator();
    b.setInsertionPoint(ret);
    for (auto [operand, want] :
         llvm::zip(ret->getOpOperands(), func.getResultTypes())) {
      if (operand.get().getType() == want)
        continue;
      auto wantT = cast<RankedTensorType>(want);
      auto cast = b.create<onnx::CastOp>(
          operand.get().getLoc(), wantT, operand.get(),
          b.getI64IntegerAttr(*onnx::onnxTypeNumber(wantT.getElementType())));
      operand.set(cast.getResult());
    }
    return success();
  }

  LogicalResult convertOp(Operation *op) {
    if (auto c = dyn_cast<onnx::ConstantOp>(op)) {
      auto t = cast<RankedTensorType>(convertType(c.getType()));
      if (t == c.getType())
        return success();
      FailureOr<DenseElementsAttr> v = convertElements(c.getValue(), t);
      if (failed(v))
        return c.emitOpError("has f32 data that cannot be read for "
                             "conversion to ")
               << target;
      c.setValueAttr(*v);
    } else if (auto w = dyn_cast<onnx::WeightOp>(op)) {
      if (w.getType().getElementType().isF32())
        w->setAttr("onnx.source_type",
                   TypeAttr::get(w.getType().getElementType()));
    } else if (auto c = dyn_cast<onnx::CastOp>(op)) {
      if (onnx::onnxElementType(op->getContext(), c.getTo()).isF32())
        c.setTo(targetNumber);
    } else if (auto c = dyn_cast<onnx::ConstantOfShapeOp>(op)) {
      auto t = cast<RankedTensorType>(convertType(c.getType()));
      // The fill value saturates like a constant.
      auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
      if (t != c.getType() && dense && dense.getElementType().isF32()) {
        auto valueT = RankedTensorType::get(dense.getType().getShape(), target);
        c.setValueAttr(*convertElements(dense, valueT));
      }
    }
    for (OpResult r : op->getResults())
      r.setType(convertType(r.getType()));
    return success();
  }

  Type target;
  int64_t targetNumber = 0;
};

} // namespace
} // namespace tpc
