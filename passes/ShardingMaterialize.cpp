//===- ShardingMaterialize.cpp - Writing shardings into the IR ------------===//
#include "passes/ShardingMaterialize.h"

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/IR/Builders.h"

#include <map>

using namespace mlir;

namespace tpc {

void splitGemmBias(func::FuncOp func) {
  SmallVector<onnx::GemmOp> gemms;
  func.walk([&](onnx::GemmOp g) {
    if (g.getC() && isWeightMatMul(g))
      gemms.push_back(g);
  });
  for (onnx::GemmOp g : gemms) {
    OpBuilder b(g);
    Value c = g.getC();
    if (g.getBeta().convertToFloat() != 1.0f) {
      auto beta = b.create<onnx::ConstantOp>(
          g.getLoc(), RankedTensorType::get({}, g.getType().getElementType()),
          DenseElementsAttr::get(
              RankedTensorType::get({}, g.getType().getElementType()),
              g.getBeta()));
      c = b.create<onnx::MulOp>(g.getLoc(), c, beta.getResult()).getResult();
    }
    auto gemm = b.create<onnx::GemmOp>(
        g.getLoc(), g.getType(), g.getA(), g.getB(), Value(),
        g.getAlphaAttr(), b.getF32FloatAttr(1.0f), g.getTransAAttr(),
        g.getTransBAttr());
    auto add = b.create<onnx::AddOp>(g.getLoc(), gemm.getResult(), c);
    g.getResult().replaceAllUsesWith(add.getResult());
    g.erase();
  }
}

void annotateShardings(Operation *op, ArrayRef<Sharding> shardings) {
  SmallVector<Attribute> attrs;
  for (const Sharding &s : shardings)
    attrs.push_back(s.toAttr(op->getContext()));
  op->setAttr(tp::kShardingAttr, ArrayAttr::get(op->getContext(), attrs));
}

void annotateReplicated(func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    SmallVector<Sharding> s(op.getNumResults(), Sharding::replicated());
    if (op.getNumResults())
      annotateShardings(&op, s);
    if (isWeightMatMul(&op))
      op.setAttr(tp::kRoleAttr, StringAttr::get(op.getContext(), "replicated"));
  }
}

void materializeShardings(func::FuncOp func, const ShardingAnalysis &a) {
  MLIRContext *ctx = func.getContext();
  auto get = [&](Value v) {
    auto it = a.state.find(v);
    return it == a.state.end() ? Sharding::replicated() : it->second;
  };
  std::map<std::pair<void *, std::string>, Value> cache;
  auto convert = [&](OpBuilder &b, Value v, const Sharding &to) -> Value {
    Sharding from = get(v);
    std::string key = to.str();
    auto hit = cache.find({v.getAsOpaquePointer(), key});
    if (hit != cache.end())
      return hit->second;
    Location loc = v.getLoc();
    Value cur = v;
    Sharding curS = from;
    auto place = [&](Value x) {
      if (Operation *def = x.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(&func.getBody().front());
    };
    if (curS.isPartial()) {
      auto key2 = std::make_pair(v.getAsOpaquePointer(),
                                 Sharding::replicated().str());
      auto c2 = cache.find(key2);
      if (c2 != cache.end()) {
        cur = c2->second;
      } else {
        place(cur);
        auto ar = b.create<tp::AllReduceOp>(loc, cur);
        annotateShardings(ar, {Sharding::replicated()});
        cache[key2] = ar.getResult();
        cur = ar.getResult();
      }
      curS = Sharding::replicated();
    }
    if (curS.isSplit() && curS != to) {
      auto key2 = std::make_pair(v.getAsOpaquePointer(),
                                 Sharding::replicated().str());
      auto c2 = cache.find(key2);
      if (c2 != cache.end()) {
        cur = c2->second;
      } else {
        place(cur);
        auto ag = b.create<tp::AllGatherOp>(
            loc, cur.getType(), cur, b.getI64IntegerAttr(curS.axis),
            b.getDenseI64ArrayAttr(curS.sizes),
            b.getDenseI64ArrayAttr(curS.parts));
        annotateShardings(ag, {Sharding::replicated()});
        cache[key2] = ag.getResult();
        cur = ag.getResult();
      }
      curS = Sharding::replicated();
    }
    if (to.isPartial() && curS.isReplicated()) {
      // Added once: rank 0 keeps it, the others add nothing.
      place(cur);
      auto tpOp = b.create<tp::ToPartialOp>(loc, cur);
      annotateShardings(tpOp, {to});
      cur = tpOp.getResult();
      curS = to;
    }
    if (to.isSplit() && curS.isReplicated()) {
      place(cur);
      auto sh = b.create<tp::ShardOp>(loc, cur.getType(), cur,
                                      b.getI64IntegerAttr(to.axis),
                                      b.getDenseI64ArrayAttr(to.sizes),
                                      b.getDenseI64ArrayAttr(to.parts));
      annotateShardings(sh, {to});
      cur = sh.getResult();
    }
    cache[{v.getAsOpaquePointer(), key}] = cur;
    return cur;
  };
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    if (isa<tp::TPDialect>(op.getDialect()))
      continue;
    for (unsigned i = 0; i < op.getNumOperands(); ++i) {
      auto it = a.want.find({&op, i});
      if (it == a.want.end())
        continue;
      OpBuilder b(ctx);
      Value nv = convert(b, op.getOperand(i), it->second);
      op.setOperand(i, nv);
    }
    SmallVector<Sharding> rs;
    for (Value r : op.getResults())
      rs.push_back(get(r));
    if (!rs.empty())
      annotateShardings(&op, rs);
    auto role = a.role.find(&op);
    if (role != a.role.end())
      op.setAttr(tp::kRoleAttr, StringAttr::get(ctx, role->second));
  }
}

} // namespace tpc
