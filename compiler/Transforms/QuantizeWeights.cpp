//===- QuantizeWeights.cpp - Weight-only quantization at compile time ----===//
//
// `tpc compile --quantize int4|int8`: each rank's weight MatMuls (and plain
// Gemms) whose weight is a float initializer, [K, N] or transposed ([N, K],
// a tied LM head), become tpc.MatMulNBits over three weights the engine
// writer computes from the rank's slice of the float initializer: codes,
// scales and (asymmetric) zero points, round to nearest per block of K.
// The quantization is recorded on the new onnx.Weight ops (`onnx.quantize`)
// and happens as the shard is written, so the compile never holds the
// weights in memory. A row-parallel slice must start on a block boundary
// of K; one that does not is an error naming the node and the block sizes
// and tp values that work.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/ONNX/IR/ValueUtils.h"
#include "compiler/Dialect/TP/IR/TPOps.h"
#include "compiler/Dialect/TPC/IR/TPCOps.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/GlobPattern.h"

namespace tpc {
#define GEN_PASS_DEF_QUANTIZEWEIGHTSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace tpc

using namespace mlir;

namespace tpc {
namespace {

/// A float initializer used as a MatMul's weight, and which of its two
/// axes is K.
struct WeightUse {
  onnx::WeightOp weight;
  int64_t kAxis = 0;
};

std::optional<WeightUse> weightOperand(Value b, bool transposed) {
  if (!transposed)
    if (auto t = b.getDefiningOp<onnx::TransposeOp>()) {
      if (t.getPerm() != ArrayRef<int64_t>{1, 0})
        return std::nullopt;
      b = t.getData();
      transposed = true;
    }
  auto w = b.getDefiningOp<onnx::WeightOp>();
  if (!w || w->hasAttr("onnx.quantize") || w.getType().getRank() != 2 ||
      !isa<FloatType>(w.getType().getElementType()) ||
      w.getType().getElementType().isF64())
    return std::nullopt;
  return WeightUse{w, transposed ? 1 : 0};
}

struct QuantizeWeightsPass
    : impl::QuantizeWeightsPassBase<QuantizeWeightsPass> {
  using QuantizeWeightsPassBase::QuantizeWeightsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (bits != 4 && bits != 8) {
      module.emitError() << "--quantize: bits must be 4 or 8, not "
                         << int64_t(bits);
      return signalPassFailure();
    }
    if (blockSize < 16 || blockSize > 256 || (blockSize & (blockSize - 1))) {
      module.emitError() << "--block-size must be 16, 32, 64, 128 or 256, "
                            "not "
                         << int64_t(blockSize);
      return signalPassFailure();
    }
    for (const std::string &g : skip) {
      auto pattern = llvm::GlobPattern::create(g);
      if (!pattern) {
        module.emitError() << "--quantize-skip '" << g
                           << "' is not a glob pattern: "
                           << llvm::toString(pattern.takeError());
        return signalPassFailure();
      }
      globs.push_back(std::move(*pattern));
    }
    tp = 1;
    if (auto size = module->getAttrOfType<IntegerAttr>(tp::kSizeAttr))
      tp = size.getInt();
    SmallVector<Operation *> products;
    module.walk([&](Operation *op) {
      if (isa<onnx::MatMulOp, onnx::GemmOp>(op))
        products.push_back(op);
    });
    for (Operation *op : products)
      if (failed(rewrite(op)))
        return signalPassFailure();
  }

  bool skipped(Operation *op, onnx::WeightOp w) const {
    std::string node = nodeNameOf(op->getLoc());
    for (const llvm::GlobPattern &g : globs)
      if (g.match(node) || g.match(w.getName()))
        return true;
    return false;
  }

  /// The float weight's slice along K on this rank, checked to start on a
  /// block boundary (and to end on one, unless it ends at K).
  LogicalResult checkBlocks(Operation *op, const WeightUse &u,
                            int64_t kSource) {
    auto axis = u.weight->getAttrOfType<IntegerAttr>(tp::kAxisAttr);
    auto ranges = u.weight->getAttrOfType<DenseI64ArrayAttr>(tp::kRangesAttr);
    if (!axis || !ranges || axis.getInt() != u.kAxis)
      return success();
    ArrayRef<int64_t> r = ranges.asArrayRef();
    for (size_t i = 0; i + 1 < r.size(); i += 2) {
      bool startOk = r[i] % blockSize == 0;
      bool endOk = (r[i] + r[i + 1]) % blockSize == 0 ||
                   r[i] + r[i + 1] == kSource;
      if (startOk && endOk)
        continue;
      std::string blocks, tps;
      for (int64_t b : {16, 32, 64, 128, 256})
        if (kSource % tp == 0 && (kSource / tp) % b == 0)
          blocks += (blocks.empty() ? "" : ", ") + std::to_string(b);
      for (int64_t t = 1; t <= 16; ++t)
        if (t == 1 || (kSource % t == 0 && (kSource / t) % blockSize == 0))
          tps += (tps.empty() ? "" : ", ") + std::to_string(t);
      return op->emitError()
             << "node '" << nodeNameOf(op->getLoc())
             << "': its weight is split along K = " << kSource << " over "
             << tp << " ranks, and this rank's rows [" << r[i] << ", "
             << r[i] + r[i + 1] << ") do not fall on blocks of "
             << int64_t(blockSize) << " (--block-size); "
             << (blocks.empty() ? std::string("no block size divides a "
                                              "rank's share at this tp")
                                : "block sizes that do at tp " +
                                      std::to_string(tp) + ": " + blocks)
             << "; tp values that work with blocks of " << int64_t(blockSize)
             << ": "
             << tps << "; or keep it in full precision with --quantize-skip";
    }
    return success();
  }

  LogicalResult rewrite(Operation *op) {
    Value a = op->getOperand(0), b = op->getOperand(1), c;
    bool transB = false;
    if (auto gemm = dyn_cast<onnx::GemmOp>(op)) {
      if (gemm.getTransA() != 0 || gemm.getAlpha().convertToFloat() != 1.0f ||
          (gemm.getC() && gemm.getBeta().convertToFloat() != 1.0f))
        return success();
      transB = gemm.getTransB() != 0;
      c = gemm.getC();
    }
    auto at = dyn_cast<RankedTensorType>(a.getType());
    auto yt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!at || !yt || at.getRank() < 1 || !isa<FloatType>(at.getElementType()))
      return success();
    std::optional<WeightUse> u = weightOperand(b, transB);
    if (!u || skipped(op, u->weight))
      return success();
    RankedTensorType wt = u->weight.getType();
    const int64_t k = wt.getShape()[u->kAxis], n = wt.getShape()[1 - u->kAxis];
    if (at.getShape().back() != k)
      return success();
    SmallVector<int64_t> source(wt.getShape());
    if (auto s =
            u->weight->getAttrOfType<DenseI64ArrayAttr>(tp::kSourceShapeAttr))
      source.assign(s.asArrayRef().begin(), s.asArrayRef().end());
    if (failed(checkBlocks(op, *u, source[u->kAxis])))
      return failure();

    OpBuilder builder(op);
    MLIRContext *ctx = op->getContext();
    const int64_t blocks = (k + blockSize - 1) / blockSize;
    Type u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
    Type f32 = builder.getF32Type();
    auto part = [&](StringRef name, ArrayRef<int64_t> shape,
                    Type elem) -> Value {
      onnx::WeightOp w = u->weight;
      auto q = builder.create<onnx::WeightOp>(
          w.getLoc(), RankedTensorType::get(shape, elem),
          builder.getStringAttr(w.getName().str() + ".q" +
                                std::to_string(bits) + "." + name.str()),
          w.getFileAttr(), w.getOffsetAttr(), w.getLengthAttr());
      for (NamedAttribute attr : w->getDiscardableAttrs())
        q->setAttr(attr.getName(), attr.getValue());
      q->setAttr(tp::kSourceShapeAttr, builder.getDenseI64ArrayAttr(source));
      q->setAttr(
          "onnx.quantize",
          builder.getDictionaryAttr(
              {builder.getNamedAttr("part", builder.getStringAttr(name)),
               builder.getNamedAttr("bits", builder.getI64IntegerAttr(bits)),
               builder.getNamedAttr("block_size",
                                    builder.getI64IntegerAttr(blockSize)),
               builder.getNamedAttr("symmetric",
                                    builder.getBoolAttr(symmetric)),
               builder.getNamedAttr("k_axis",
                                    builder.getI64IntegerAttr(u->kAxis)),
               builder.getNamedAttr(
                   "source_type", TypeAttr::get(wt.getElementType()))}));
      return q;
    };
    Value codes = part("codes", {n, blocks, blockSize * bits / 8}, u8);
    Value scales = part("scales", {n, blocks}, f32);
    Value zeros;
    if (!symmetric)
      zeros = part("zeros", {n, (blocks * bits + 7) / 8}, u8);
    auto q = builder.create<ext::MatMulNBitsOp>(
        op->getLoc(), yt, a, codes, scales, zeros,
        builder.getI64IntegerAttr(bits), builder.getI64IntegerAttr(blockSize));
    for (StringRef name : {tp::kRoleAttr, tp::kReasonAttr})
      if (Attribute attr = op->getAttr(name))
        q->setAttr(name, attr);
    Value y = q.getResult();
    if (c)
      y = builder.create<onnx::AddOp>(op->getLoc(), yt, y, c);
    op->getResult(0).replaceAllUsesWith(y);
    Operation *def = b.getDefiningOp();
    op->erase();
    // The float weight (and its transpose) go when nothing else reads them.
    if (def && def->use_empty()) {
      Operation *under = def->getNumOperands() ? def->getOperand(0).getDefiningOp()
                                               : nullptr;
      def->erase();
      if (under && under->use_empty())
        under->erase();
    }
    ++quantized;
    return success();
  }

  SmallVector<llvm::GlobPattern> globs;
  int64_t tp = 1;
};

} // namespace
} // namespace tpc
