//===- RankPlan.cpp - Parsing and checking rankN.plan ---------------------===//
#include "runtime/engine/RankPlan.h"

#include "runtime/format/plan.pb.h"

#include <google/protobuf/stubs/logging.h>

#include <climits>
#include <set>

namespace tpc::runtime {

namespace {

std::string quoted(const std::string &s) { return "'" + s + "'"; }

Status convertExpr(const plan::Expr &e, size_t symbols, SymExpr &out) {
  if (e.coeffs_size() != e.masks_size() || e.coeffs_size() == 0)
    return Status::error("an expression has " +
                         std::to_string(e.coeffs_size()) +
                         " coefficients and " + std::to_string(e.masks_size()) +
                         " symbol masks");
  out.terms.clear();
  for (int i = 0; i < e.coeffs_size(); ++i) {
    if (e.masks(i) >> symbols)
      return Status::error("an expression names symbol bits " +
                           std::to_string(e.masks(i)) + ", but the plan has " +
                           std::to_string(symbols) + " symbols");
    out.terms.push_back({e.coeffs(i), e.masks(i)});
  }
  return Status::ok();
}

/// Every corner of the symbols' box: a multilinear expression takes its
/// least and greatest values over the box at corners.
std::vector<SymbolValues> corners(const std::vector<PlanSymbol> &symbols) {
  std::vector<SymbolValues> out;
  for (uint32_t bits = 0; bits < (1u << symbols.size()); ++bits) {
    SymbolValues v;
    for (size_t k = 0; k < symbols.size(); ++k)
      v.push_back((bits >> k) & 1 ? symbols[k].max : symbols[k].min);
    out.push_back(std::move(v));
  }
  return out;
}

/// Checks that `exprs` give `atMax` at the maxima and stay within
/// [0, atMax] over the whole box (a larger value would overrun the memory
/// planned for the maxima).
Status checkExprs(const std::vector<SymExpr> &exprs,
                  const std::vector<int64_t> &atMax,
                  const std::vector<PlanSymbol> &symbols, bool bounded) {
  if (exprs.size() != atMax.size())
    return Status::error("has " + std::to_string(exprs.size()) +
                         " expressions for " + std::to_string(atMax.size()) +
                         " values");
  for (size_t i = 0; i < exprs.size(); ++i) {
    for (const SymbolValues &c : corners(symbols)) {
      int64_t v = 0;
      if (!exprs[i].eval(c, v))
        return Status::error("expression " + exprs[i].str(symbols) +
                             " overflows");
      bool atMaxCorner = true;
      for (size_t k = 0; k < symbols.size(); ++k)
        atMaxCorner = atMaxCorner && c[k] == symbols[k].max;
      if (atMaxCorner && v != atMax[i])
        return Status::error("expression " + exprs[i].str(symbols) + " is " +
                             std::to_string(v) + " at the maxima, not " +
                             std::to_string(atMax[i]));
      if (bounded && (v < 0 || v > atMax[i]))
        return Status::error("dimension " + exprs[i].str(symbols) +
                             " leaves [0, " + std::to_string(atMax[i]) +
                             "] within the symbols' ranges");
    }
  }
  return Status::ok();
}

Status convertBuffer(const plan::Buffer &b, uint64_t arenaBytes,
                     const std::vector<PlanSymbol> &symbols, PlanBuffer &out) {
  std::string what = "buffer " + std::to_string(b.id()) +
                     (b.name().empty() ? "" : " (" + quoted(b.name()) + ")");
  out.id = b.id();
  out.name = b.name();
  if (!isValidDType(b.dtype()))
    return Status::error(what + " has invalid dtype " +
                         std::to_string(b.dtype()));
  out.desc.dtype = DType(b.dtype());
  for (int64_t d : b.shape()) {
    if (d < 0)
      return Status::error(what + " has negative dimension " +
                           std::to_string(d));
    out.desc.shape.push_back(d);
  }
  std::optional<uint64_t> bytes =
      checkedByteSize(out.desc.shape, dtypeSize(out.desc.dtype));
  if (!bytes)
    return Status::error(what + " of shape " + shapeToString(out.desc.shape) +
                         " is too large");
  out.bytes = *bytes;
  for (const plan::Expr &e : b.dims()) {
    out.dims.emplace_back();
    TPC_RETURN_IF_ERROR(convertExpr(e, symbols.size(), out.dims.back())
                            .withContext(what + ": "));
  }
  if (!out.dims.empty())
    TPC_RETURN_IF_ERROR(checkExprs(out.dims, out.desc.shape, symbols, true)
                            .withContext(what + ": shape: "));
  out.leadingBlock = b.leading_block();
  if (out.leadingBlock &&
      (b.kind() != plan::Buffer::WEIGHT || out.dims.empty()))
    return Status::error(what + " is a leading block, but only a weight "
                                "with a symbolic shape can be one");
  if (!out.dims.empty() && b.kind() == plan::Buffer::STATE)
    return Status::error(what + " is state with a symbolic shape; state "
                                "keeps one shape across forwards");
  for (const plan::Expr &e : b.values()) {
    out.values.emplace_back();
    TPC_RETURN_IF_ERROR(convertExpr(e, symbols.size(), out.values.back())
                            .withContext(what + ": values: "));
  }
  if (!out.values.empty() &&
      (b.kind() != plan::Buffer::WEIGHT || !out.dims.empty() ||
       out.leadingBlock ||
       (out.desc.dtype != DType::I64 && out.desc.dtype != DType::I32) ||
       int64_t(out.values.size()) != out.desc.numel()))
    return Status::error(what + " has " + std::to_string(out.values.size()) +
                         " value expressions, but only an i64 or i32 weight "
                         "of a static shape can have them, one per element "
                         "(it has " +
                         std::to_string(out.desc.numel()) + ")");
  if (!out.dims.empty() && b.kind() == plan::Buffer::WEIGHT &&
      !out.leadingBlock)
    return Status::error(what + " is a weight with a symbolic shape that is "
                                "not a leading block");
  switch (b.kind()) {
  case plan::Buffer::ARENA: {
    out.kind = BufferKind::Arena;
    out.offset = b.offset();
    uint64_t end = 0;
    if (__builtin_add_overflow(out.offset, out.bytes, &end) || end > arenaBytes)
      return Status::error(what + " at arena offset " +
                           std::to_string(out.offset) + " with " +
                           std::to_string(out.bytes) +
                           " bytes lies outside the arena of " +
                           std::to_string(arenaBytes) + " bytes");
    // Kernels access elements through typed pointers.
    if (out.offset % dtypeSize(out.desc.dtype) != 0)
      return Status::error(what + " at arena offset " +
                           std::to_string(out.offset) +
                           " is not aligned to its element size");
    break;
  }
  case plan::Buffer::STATE:
    out.kind = BufferKind::State;
    break;
  case plan::Buffer::WEIGHT:
    out.kind = BufferKind::Weight;
    out.tensor = b.tensor();
    if (out.tensor.empty())
      return Status::error(what + " is a weight buffer without a tensor name");
    break;
  default:
    return Status::error(what + " has unknown kind " +
                         std::to_string(int(b.kind())));
  }
  return Status::ok();
}

Status convertAttrs(const plan::Step &s, const std::vector<PlanSymbol> &symbols,
                    PlanStep &step) {
  Attrs &out = step.attrs;
  std::set<std::string> seen;
  for (const plan::Attr &a : s.attrs()) {
    if (a.name().empty())
      return Status::error("an attribute has no name");
    if (!seen.insert(a.name()).second)
      return Status::error("attribute " + quoted(a.name()) + " given twice");
    switch (a.kind()) {
    case plan::Attr::INTS:
      out.setInts(a.name(), {a.ints().begin(), a.ints().end()});
      if (a.int_exprs_size()) {
        std::vector<SymExpr> &exprs = step.intExprs[a.name()];
        for (const plan::Expr &e : a.int_exprs()) {
          exprs.emplace_back();
          TPC_RETURN_IF_ERROR(convertExpr(e, symbols.size(), exprs.back()));
        }
        TPC_RETURN_IF_ERROR(
            checkExprs(exprs, *out.getInts(a.name()), symbols, false)
                .withContext("attribute " + quoted(a.name()) + ": "));
        step.symbolic = true;
      }
      break;
    case plan::Attr::FLOATS:
      out.setFloats(a.name(), {a.floats().begin(), a.floats().end()});
      break;
    case plan::Attr::STRING:
      out.setString(a.name(), a.str());
      break;
    default:
      return Status::error("attribute " + quoted(a.name()) +
                           " has unknown kind " + std::to_string(int(a.kind())));
    }
  }
  return Status::ok();
}

Status convertBindings(
    const google::protobuf::RepeatedPtrField<plan::Binding> &in,
    const char *what, const std::vector<PlanBuffer> &buffers,
    std::vector<PlanBinding> &out) {
  std::set<std::string> seen;
  for (const plan::Binding &b : in) {
    std::string where = std::string(what) + " " + quoted(b.name());
    if (b.name().empty())
      return Status::error(std::string(what) + " binding without a name");
    if (!seen.insert(b.name()).second)
      return Status::error(where + " is bound twice");
    if (b.buffer() >= buffers.size())
      return Status::error(where + " is bound to buffer " +
                           std::to_string(b.buffer()) + ", but the plan has " +
                           std::to_string(buffers.size()) + " buffers");
    if (buffers[b.buffer()].kind != BufferKind::Arena)
      return Status::error(where + " is bound to buffer " +
                           std::to_string(b.buffer()) +
                           ", which is not an arena buffer");
    out.push_back({b.name(), b.buffer()});
  }
  return Status::ok();
}

Status convertStep(const RankPlan &p, const plan::Step &s, PlanStep &out) {
  out.kernel = s.kernel();
  out.node = s.node();
  out.kind = stepKindOf(out.kernel);
  if (out.kernel.empty())
    return Status::error("has no kernel name");
  const uint32_t n = uint32_t(p.buffers.size());
  for (int i = 0; i < s.inputs_size(); ++i) {
    uint32_t id = s.inputs(i);
    if (id != kAbsentBuffer && id >= n)
      return Status::error("input " + std::to_string(i) + " refers to buffer " +
                           std::to_string(id) + ", but the plan has " +
                           std::to_string(n) + " buffers");
    out.inputs.push_back(id);
  }
  for (int i = 0; i < s.outputs_size(); ++i) {
    uint32_t id = s.outputs(i);
    if (id >= n)
      return Status::error(
          "output " + std::to_string(i) + " refers to buffer " +
          std::to_string(id) + ", but the plan has " + std::to_string(n) +
          " buffers" + (id == kAbsentBuffer ? " (outputs cannot be absent)" : ""));
    if (p.buffers[id].kind == BufferKind::Weight)
      return Status::error("output " + std::to_string(i) + " is " +
                           p.describeBuffer(id) +
                           ", a read-only weight buffer");
    // State is written in place, by the kernels that write state.
    if (p.buffers[id].kind == BufferKind::State &&
        (out.kernel != "CacheWrite" || i != 0 || s.inputs_size() == 0 ||
         s.inputs(0) != id))
      return Status::error("output " + std::to_string(i) + " is state " +
                           p.describeBuffer(id) +
                           ", which only CacheWrite writes, in place");
    out.outputs.push_back(id);
  }
  // A kernel writes an output over an operand only exactly (in place, as the
  // memory planner places elementwise results and reshapes); a partial
  // overlap would have it read what it has already written (and memcpy
  // undefined). Collectives handle their own in-place case.
  if (out.kind == StepKind::Kernel)
    for (size_t o = 0; o < out.outputs.size(); ++o) {
      const PlanBuffer &ob = p.buffers[out.outputs[o]];
      auto check = [&](uint32_t id, const std::string &what) -> Status {
        const PlanBuffer &b = p.buffers[id];
        if (!arenaOverlap(b, ob) ||
            (b.offset == ob.offset && b.bytes == ob.bytes))
          return Status::ok();
        return Status::error("output " + std::to_string(o) + " (" +
                             p.describeBuffer(out.outputs[o]) +
                             ") partly overlaps " + what + " (" +
                             p.describeBuffer(id) + ") in the arena");
      };
      for (size_t i = 0; i < out.inputs.size(); ++i)
        if (out.inputs[i] != kAbsentBuffer)
          TPC_RETURN_IF_ERROR(
              check(out.inputs[i], "input " + std::to_string(i)));
      for (size_t k = 0; k < o; ++k)
        TPC_RETURN_IF_ERROR(
            check(out.outputs[k], "output " + std::to_string(k)));
    }
  for (uint32_t id : out.inputs)
    out.symbolic =
        out.symbolic || (id != kAbsentBuffer && p.buffers[id].symbolic());
  for (uint32_t id : out.outputs)
    out.symbolic = out.symbolic || p.buffers[id].symbolic();
  return convertAttrs(s, p.symbols, out);
}

} // namespace

bool arenaOverlap(const PlanBuffer &a, const PlanBuffer &b) {
  return a.kind == BufferKind::Arena && b.kind == BufferKind::Arena &&
         a.bytes && b.bytes && a.offset < b.offset + b.bytes &&
         b.offset < a.offset + a.bytes;
}

StepKind stepKindOf(const std::string &kernel) {
  if (kernel == kAllReduceKernel)
    return StepKind::AllReduce;
  if (kernel == kAllGatherKernel)
    return StepKind::AllGather;
  if (kernel == kReduceScatterKernel)
    return StepKind::ReduceScatter;
  return StepKind::Kernel;
}

SymbolValues RankPlan::maxValues() const {
  SymbolValues v;
  for (const PlanSymbol &s : symbols)
    v.push_back(s.max);
  return v;
}

TensorDesc RankPlan::descAt(uint32_t id, const SymbolValues &values) const {
  const PlanBuffer &b = buffers[id];
  TensorDesc d = b.desc;
  for (size_t i = 0; i < b.dims.size(); ++i)
    (void)b.dims[i].eval(values, d.shape[i]); // bounded at load
  return d;
}

Attrs RankPlan::attrsAt(size_t index, const SymbolValues &values) const {
  const PlanStep &st = steps[index];
  Attrs a = st.attrs;
  for (const auto &[name, exprs] : st.intExprs) {
    std::vector<int64_t> v(exprs.size());
    for (size_t i = 0; i < exprs.size(); ++i)
      (void)exprs[i].eval(values, v[i]); // checked at load
    a.setInts(name, std::move(v));
  }
  return a;
}

std::string RankPlan::describeValues(const SymbolValues &values) const {
  return describeSymbolValues(symbols, values);
}

std::string RankPlan::describeStep(size_t index) const {
  std::string s = "step " + std::to_string(index);
  if (index >= steps.size())
    return s;
  const PlanStep &st = steps[index];
  s += " (" + st.kernel;
  if (!st.node.empty())
    s += ", node " + quoted(st.node);
  return s + ")";
}

std::string RankPlan::describeBuffer(uint32_t id) const {
  std::string s = "buffer " + std::to_string(id);
  if (id >= buffers.size())
    return s;
  const PlanBuffer &b = buffers[id];
  s += " (";
  if (!b.name.empty())
    s += quoted(b.name) + ", ";
  return s + b.desc.str() + ")";
}

Status parseRankPlan(const void *data, size_t size, const std::string &fileName,
                     RankPlan &out) {
  out = RankPlan();
  auto fail = [&](const std::string &msg) {
    return Status::error(fileName + ": " + msg);
  };
  if (size > size_t(INT_MAX))
    return fail("plan of " + std::to_string(size) + " bytes is too large");
  plan::Plan p;
  // A malformed plan is reported by the Status below; protobuf's own log
  // lines about it (invalid UTF-8 in a string field) would only add noise.
  google::protobuf::LogSilencer quiet;
  if (!p.ParseFromArray(data, int(size)))
    return fail("not a valid tpc.plan.Plan message (corrupt file?)");

  if (p.format_version() == 0)
    return fail("plan format_version is missing");
  if (p.format_version() > kPlanFormatVersion)
    return fail("plan format version " + std::to_string(p.format_version()) +
                " is newer than this runtime supports (version " +
                std::to_string(kPlanFormatVersion) + ")");
  out.formatVersion = p.format_version();
  if (p.world_size() < 1 || p.rank() < 0 || p.rank() >= p.world_size())
    return fail("invalid rank " + std::to_string(p.rank()) +
                " of world size " + std::to_string(p.world_size()));
  out.rank = p.rank();
  out.worldSize = p.world_size();
  out.arena.bytes = p.arena_bytes();
  out.arena.unplannedBytes = p.unplanned_bytes();
  out.arena.lowerBoundBytes = p.lower_bound_bytes();
  out.producer = p.producer();
  if (p.symbols_size() && p.format_version() < 2)
    return fail("a plan of format version " +
                std::to_string(p.format_version()) +
                " cannot have run-time dimensions");
  if (uint32_t(p.symbols_size()) > kMaxPlanSymbols)
    return fail(std::to_string(p.symbols_size()) +
                " run-time dimensions; at most " +
                std::to_string(kMaxPlanSymbols) + " are supported");
  for (const plan::Symbol &sym : p.symbols()) {
    if (sym.name().empty() || sym.min() < 0 || sym.min() > sym.max())
      return fail("run-time dimension " + quoted(sym.name()) + " has range " +
                  std::to_string(sym.min()) + ".." + std::to_string(sym.max()));
    for (const PlanSymbol &other : out.symbols)
      if (other.name == sym.name())
        return fail("run-time dimension " + quoted(sym.name()) +
                    " is declared twice");
    out.symbols.push_back({sym.name(), sym.min(), sym.max()});
  }

  const size_t n = size_t(p.buffers_size());
  out.buffers.resize(n);
  std::vector<bool> seen(n, false);
  for (const plan::Buffer &b : p.buffers()) {
    if (b.id() >= n)
      return fail("buffer id " + std::to_string(b.id()) +
                  " is out of range: ids must be dense, 0 to " +
                  std::to_string(n - 1));
    if (seen[b.id()])
      return fail("buffer id " + std::to_string(b.id()) + " is used twice");
    seen[b.id()] = true;
    TPC_RETURN_IF_ERROR(
        convertBuffer(b, out.arena.bytes, out.symbols, out.buffers[b.id()])
            .withContext(fileName + ": "));
  }
  // tpc's planner sizes the arena to the end of its last buffer, rounded
  // up to its alignment (64 bytes unless set otherwise; up to 64 KiB is
  // taken). A larger arena is a damaged plan, which would make every load
  // allocate and touch memory that nothing uses.
  constexpr uint64_t kArenaSlack = 64 * 1024;
  uint64_t arenaEnd = 0;
  for (const PlanBuffer &b : out.buffers)
    if (b.kind == BufferKind::Arena)
      arenaEnd = std::max(arenaEnd, b.offset + b.bytes);
  if (out.arena.bytes - arenaEnd > kArenaSlack)
    return fail("arena_bytes " + std::to_string(out.arena.bytes) +
                " is more than the " + std::to_string(arenaEnd) +
                " bytes its buffers use");

  TPC_RETURN_IF_ERROR(convertBindings(p.inputs(), "input", out.buffers,
                                      out.inputs)
                          .withContext(fileName + ": "));
  TPC_RETURN_IF_ERROR(convertBindings(p.outputs(), "output", out.buffers,
                                      out.outputs)
                          .withContext(fileName + ": "));

  out.steps.resize(size_t(p.steps_size()));
  for (int i = 0; i < p.steps_size(); ++i) {
    // Fill the name first so that describeStep() names it in errors.
    out.steps[size_t(i)].kernel = p.steps(i).kernel();
    out.steps[size_t(i)].node = p.steps(i).node();
    TPC_RETURN_IF_ERROR(
        convertStep(out, p.steps(i), out.steps[size_t(i)])
            .withContext(fileName + ": " + out.describeStep(size_t(i)) + ": "));
  }
  return Status::ok();
}

} // namespace tpc::runtime
