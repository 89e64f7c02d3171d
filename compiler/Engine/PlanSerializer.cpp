//===- PlanSerializer.cpp - plan-dialect functions to plan messages -------===//
#include "compiler/Engine/PlanSerializer.h"
#include "compiler/Dialect/ONNX/IR/KernelBridge.h"
#include "compiler/Dialect/Plan/IR/PlanOps.h"
#include "compiler/Dialect/TP/IR/TPOps.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;

namespace tpc {
namespace {

/// A new attribute of `step` named `name`, of kind `kind`.
plan::Attr *addAttr(plan::Step &step, const std::string &name,
                    plan::Attr::Kind kind) {
  plan::Attr *a = step.add_attrs();
  a->set_name(name);
  a->set_kind(kind);
  return a;
}

void addAttrs(const Attrs &attrs, plan::Step &step) {
  for (const auto &[k, v] : attrs.ints()) {
    plan::Attr *a = addAttr(step, k, plan::Attr::INTS);
    for (int64_t x : v)
      a->add_ints(x);
  }
  for (const auto &[k, v] : attrs.floats()) {
    plan::Attr *a = addAttr(step, k, plan::Attr::FLOATS);
    for (double x : v)
      a->add_floats(x);
  }
  for (const auto &[k, v] : attrs.strings())
    addAttr(step, k, plan::Attr::STRING)->set_str(v);
}

} // namespace

FailureOr<SerializedRank> serializeRank(func::FuncOp func, int rank,
                                        int worldSize) {
  SerializedRank out;
  plan::Plan &p = out.plan;
  p.set_format_version(kStaticPlanFormatVersion);
  p.set_rank(rank);
  p.set_world_size(worldSize);
  auto arena = func->getAttrOfType<IntegerAttr>("plan.arena_bytes");
  if (!arena)
    return func.emitError("function has no memory plan (run tpc-plan-memory)");
  p.set_arena_bytes(arena.getInt());
  if (auto u = func->getAttrOfType<IntegerAttr>("plan.unplanned_bytes"))
    p.set_unplanned_bytes(u.getInt());
  if (auto l = func->getAttrOfType<IntegerAttr>("plan.lower_bound_bytes"))
    p.set_lower_bound_bytes(l.getInt());

  llvm::DenseMap<Value, uint32_t> ids;
  std::map<std::string, uint32_t> weightIds;
  std::set<std::string> tensorNames;
  auto addBuffer = [&](Value v, plan::Buffer::Kind kind, int64_t offset,
                       const std::string &tensor,
                       const std::string &name) -> FailureOr<uint32_t> {
    std::optional<TensorDesc> desc = onnx::descOf(v.getType());
    if (!desc)
      return emitError(v.getLoc()) << "unsupported type " << v.getType();
    uint32_t id = p.buffers_size();
    plan::Buffer *b = p.add_buffers();
    b->set_id(id);
    b->set_kind(kind);
    b->set_dtype(int32_t(desc->dtype));
    for (int64_t d : desc->shape)
      b->add_shape(d);
    b->set_offset(uint64_t(offset));
    b->set_tensor(tensor);
    b->set_name(name);
    ids[v] = id;
    return id;
  };

  Block &block = func.getBody().front();
  for (BlockArgument arg : block.getArguments()) {
    auto off = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                  "plan.offset");
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  "onnx.name");
    if (!off || !name)
      return func.emitError("argument ")
             << arg.getArgNumber() << " lacks plan.offset or onnx.name";
    FailureOr<uint32_t> id =
        addBuffer(arg, plan::Buffer::ARENA, off.getInt(), "", name.str());
    if (failed(id))
      return failure();
    plan::Binding *bind = p.add_inputs();
    bind->set_name(name.str());
    bind->set_buffer(*id);
  }

  for (Operation &op : block) {
    if (auto w = dyn_cast<plan::WeightOp>(op)) {
      // One tensor per distinct (source, slice): uses of a shared initializer
      // share a buffer; different slices of it get distinct names.
      std::string key = w.getFile().str() + "@" + std::to_string(w.getOffset());
      if (auto r = w.getRanges())
        for (int64_t x : *r)
          key += "," + std::to_string(x);
      if (w.getAxis())
        key += "/" + std::to_string(*w.getAxis());
      std::optional<DictionaryAttr> quant = w.getQuantize();
      if (quant) {
        key += "/q:" + cast<StringAttr>(quant->get("part")).str() + ":" +
               std::to_string(cast<IntegerAttr>(quant->get("bits")).getInt()) +
               ":" +
               std::to_string(
                   cast<IntegerAttr>(quant->get("block_size")).getInt());
        if (auto sym = quant->getAs<BoolAttr>("symmetric"))
          key += ":" + std::to_string(sym.getValue());
      }
      auto known = weightIds.find(key);
      if (known != weightIds.end()) {
        ids[w] = known->second;
        continue;
      }
      WeightSlice s;
      s.tensor = w.getName().str();
      for (int k = 1; !tensorNames.insert(s.tensor).second; ++k)
        s.tensor = w.getName().str() + "#" + std::to_string(k);
      s.desc = *onnx::descOf(w.getType());
      s.sourceDType = s.desc.dtype;
      if (std::optional<Type> from = w.getSourceType())
        s.sourceDType = *onnx::dtypeOf(*from);
      s.file = w.getFile().str();
      s.offset = w.getOffset();
      s.sourceShape.assign(w.getSourceShape().begin(),
                           w.getSourceShape().end());
      if (auto r = w.getRanges()) {
        s.axis = *w.getAxis();
        s.ranges.assign(r->begin(), r->end());
      }
      if (quant) {
        s.quantPart = cast<StringAttr>(quant->get("part")).str();
        s.quantBits = int(cast<IntegerAttr>(quant->get("bits")).getInt());
        s.quantBlock = cast<IntegerAttr>(quant->get("block_size")).getInt();
        s.sourceLength = w.getLength();
        if (StringRef(s.quantPart).starts_with("repack_")) {
          s.repackK = cast<IntegerAttr>(quant->get("k")).getInt();
          s.repackN = cast<IntegerAttr>(quant->get("n")).getInt();
          s.repackSigned = cast<BoolAttr>(quant->get("signed")).getValue();
        } else {
          s.quantSymmetric =
              cast<BoolAttr>(quant->get("symmetric")).getValue();
          s.kAxis = cast<IntegerAttr>(quant->get("k_axis")).getInt();
          s.sourceDType = *onnx::dtypeOf(
              cast<TypeAttr>(quant->get("source_type")).getValue());
        }
      }
      if (failed(addBuffer(w, plan::Buffer::WEIGHT, 0, s.tensor, s.tensor)))
        return failure();
      weightIds[key] = ids[w];
      out.weights.push_back(std::move(s));
      continue;
    }
    if (auto c = dyn_cast<plan::ConstantOp>(op)) {
      WeightSlice s;
      s.tensor = c.getName().str();
      tensorNames.insert(s.tensor);
      s.desc = *onnx::descOf(c.getType());
      s.isConstant = true;
      std::optional<std::vector<uint8_t>> bytes =
          onnx::elementsBytes(c.getValue());
      if (!bytes)
        return c.emitOpError("constant data cannot be read");
      s.data = std::move(*bytes);
      if (failed(addBuffer(c, plan::Buffer::WEIGHT, 0, s.tensor, s.tensor)))
        return failure();
      out.weights.push_back(std::move(s));
      continue;
    }
    if (auto st = dyn_cast<plan::StateOp>(op)) {
      if (failed(addBuffer(st, plan::Buffer::STATE, 0, "", st.getName().str())))
        return failure();
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      auto names = func->getAttrOfType<ArrayAttr>("onnx.output_names");
      if (!names || names.size() != ret.getNumOperands())
        return func.emitError("function lacks onnx.output_names");
      for (auto [v, n] : llvm::zip(ret.getOperands(), names)) {
        auto it = ids.find(v);
        if (it == ids.end() || p.buffers(it->second).kind() != plan::Buffer::ARENA)
          return ret.emitOpError("output '")
                 << cast<StringAttr>(n).str()
                 << "' is not computed by a kernel (a weight or constant "
                    "output is not supported)";
        plan::Binding *bind = p.add_outputs();
        bind->set_name(cast<StringAttr>(n).str());
        bind->set_buffer(it->second);
      }
      continue;
    }
    auto k = dyn_cast<plan::KernelOp>(op);
    if (!k)
      return op.emitOpError("is not a plan op");
    auto offs = k.getOffsets();
    if (!offs)
      return k.emitOpError("has no arena offsets (run tpc-plan-memory)");
    if (k->hasAttr("plan.state_write")) {
      // The result is the state operand itself, written in place.
      ids[k.getResult(0)] = ids.lookup(k.getOperand(0));
    } else {
      for (auto [r, off] : llvm::zip(k.getResults(), *offs))
        if (failed(addBuffer(r, plan::Buffer::ARENA, off, "", "")))
          return failure();
    }
    if (k->hasAttr("plan.view"))
      continue; // a view shares its operand's bytes: nothing to run
    plan::Step *step = p.add_steps();
    step->set_kernel(k.getKernel().str());
    step->set_node(k.getNode().str());
    for (Value v : k.getOperands())
      step->add_inputs(ids.lookup(v));
    for (Value r : k.getResults())
      step->add_outputs(ids.lookup(r));
    addAttrs(onnx::kernelAttrs(k.getAttrs().getValue()), *step);
    auto addString = [&](const char *name, StringRef text) {
      plan::Attr *a = step->add_attrs();
      a->set_name(name);
      a->set_kind(plan::Attr::STRING);
      a->set_str(text.str());
    };
    if (std::optional<tp::Role> role = tp::roleOf(k))
      addString("tp_role", tp::stringifyRole(*role));
    if (auto reason = k->getAttrOfType<StringAttr>(tp::kReasonAttr))
      addString("tp_reason", reason.getValue());
  }
  return out;
}

std::vector<func::FuncOp> rankFunctions(ModuleOp module) {
  std::vector<func::FuncOp> funcs;
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal())
      funcs.push_back(f);
  std::sort(funcs.begin(), funcs.end(), [](func::FuncOp a, func::FuncOp b) {
    auto ra = a->getAttrOfType<IntegerAttr>(tp::kRankAttr);
    auto rb = b->getAttrOfType<IntegerAttr>(tp::kRankAttr);
    return (ra ? ra.getInt() : 0) < (rb ? rb.getInt() : 0);
  });
  return funcs;
}

FailureOr<std::vector<SerializedRank>> serializeModule(ModuleOp module) {
  std::vector<func::FuncOp> funcs = rankFunctions(module);
  if (funcs.empty())
    return module.emitError("nothing to write: the module has no function");
  std::vector<SerializedRank> out;
  for (auto [i, f] : llvm::enumerate(funcs)) {
    FailureOr<SerializedRank> s = serializeRank(f, int(i), int(funcs.size()));
    if (failed(s))
      return failure();
    out.push_back(std::move(*s));
  }
  return out;
}

SymExpr exprOf(const plan::Expr &e) {
  SymExpr out;
  for (int i = 0; i < e.coeffs_size() && i < e.masks_size(); ++i)
    out.terms.push_back({e.coeffs(i), e.masks(i)});
  return out;
}

void writeExpr(const SymExpr &e, plan::Expr &out) {
  for (const SymExpr::Term &t : e.terms) {
    out.add_coeffs(t.coeff);
    out.add_masks(t.mask);
  }
}

std::string exprToString(const plan::Expr &e, const plan::Plan &plan) {
  std::vector<std::string> names;
  for (const plan::Symbol &s : plan.symbols())
    names.push_back(s.name());
  return exprOf(e).str(names);
}

} // namespace tpc
