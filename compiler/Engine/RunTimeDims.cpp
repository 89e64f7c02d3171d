//===- RunTimeDims.cpp - Plans whose shapes follow run-time symbols -------===//
#include "compiler/Engine/RunTimeDims.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <set>

namespace tpc {

namespace {

bool parseInt(const std::string &s, int64_t &out) {
  if (s.empty() || s.size() > 12 ||
      s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = std::stoll(s);
  return true;
}

} // namespace

bool hasInputShapeRange(const std::string &spec) {
  size_t eq = spec.rfind('=');
  return eq != std::string::npos && spec.find("..", eq) != std::string::npos;
}

bool parseInputShapeRange(const std::string &spec,
                          const std::map<std::string, ModelInputAxes> &axes,
                          RunTimeDims &dims, std::string &error) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = "malformed --input-shape '" + spec + "' (expected NAME=1x1..64)";
    return false;
  }
  const std::string name = spec.substr(0, eq);
  if (dims.inputSymbols.count(name)) {
    error = "--input-shape given twice for '" + name + "'";
    return false;
  }
  std::vector<std::string> parts;
  for (size_t pos = eq + 1;;) {
    size_t x = spec.find_first_of("x,", pos);
    parts.push_back(spec.substr(pos, x == std::string::npos ? x : x - pos));
    if (x == std::string::npos)
      break;
    pos = x + 1;
  }
  auto model = axes.find(name);
  std::vector<int> &symbols = dims.inputSymbols[name];
  std::vector<int64_t> &fixed = dims.staticDims[name];
  for (size_t axis = 0; axis < parts.size(); ++axis) {
    const std::string &d = parts[axis];
    auto bad = [&](const std::string &why) {
      error = "malformed --input-shape '" + spec + "': dimension " +
              std::to_string(axis) + " '" + d + "' " + why;
      return false;
    };
    size_t dots = d.find("..");
    int64_t lo = 0, hi = 0;
    if (dots == std::string::npos) {
      if (!parseInt(d, lo))
        return bad("is not a size, a range LO..HI or SYMBOL:LO..HI");
      symbols.push_back(-1);
      fixed.push_back(lo);
      continue;
    }
    std::string symbol, range = d;
    if (size_t colon = d.find(':'); colon != std::string::npos) {
      symbol = d.substr(0, colon);
      range = d.substr(colon + 1);
      dots = range.find("..");
    } else if (model != axes.end() && axis < model->second.names.size()) {
      symbol = model->second.names[axis];
    }
    if (model != axes.end() && axis < model->second.sizes.size() &&
        model->second.sizes[axis] >= 0)
      return bad("is a range, but the model fixes this axis to " +
                 std::to_string(model->second.sizes[axis]));
    if (dots == std::string::npos || !parseInt(range.substr(0, dots), lo) ||
        !parseInt(range.substr(dots + 2), hi))
      return bad("is not a range LO..HI of sizes");
    if (lo < 1 || lo > hi)
      return bad("needs 1 <= LO <= HI");
    if (symbol.empty())
      return bad("has no name: the model gives this axis none; name it as "
                 "SYMBOL:" +
                 range);
    if (symbol.find_first_of(" +*/()=:") != std::string::npos)
      return bad("names symbol '" + symbol + "'; name it as SYMBOL:" + range);
    if (lo == hi) {
      symbols.push_back(-1);
      fixed.push_back(lo);
      continue;
    }
    int index = -1;
    for (size_t k = 0; k < dims.symbols.size(); ++k)
      if (dims.symbols[k].name == symbol)
        index = int(k);
    if (index < 0) {
      if (dims.symbols.size() >= kMaxPlanSymbols) {
        error = "--input-shape '" + spec + "': more than " +
                std::to_string(kMaxPlanSymbols) +
                " run-time dimensions (each doubles the compiles that "
                "check them)";
        return false;
      }
      index = int(dims.symbols.size());
      dims.symbols.push_back({symbol, lo, hi});
    } else if (dims.symbols[size_t(index)].min != lo ||
               dims.symbols[size_t(index)].max != hi) {
      const PlanSymbol &s = dims.symbols[size_t(index)];
      error = "--input-shape '" + spec + "' gives '" + symbol + "' the range " +
              range + ", another input gave it " + std::to_string(s.min) +
              ".." + std::to_string(s.max);
      return false;
    }
    symbols.push_back(index);
    fixed.push_back(hi);
  }
  return true;
}

std::map<std::string, std::vector<int64_t>>
RunTimeDims::shapesAt(const SymbolValues &values) const {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto &[name, syms] : inputSymbols) {
    std::vector<int64_t> shape = staticDims.at(name);
    for (size_t a = 0; a < syms.size(); ++a)
      if (syms[a] >= 0)
        shape[a] = values[size_t(syms[a])];
    out[name] = shape;
  }
  return out;
}

SymbolValues RunTimeDims::maxima() const {
  SymbolValues v;
  for (const PlanSymbol &s : symbols)
    v.push_back(s.max);
  return v;
}

std::vector<SymbolValues> RunTimeDims::samplePoints() const {
  const size_t n = symbols.size();
  std::vector<SymbolValues> out;
  auto add = [&](const SymbolValues &v) {
    if (v != maxima() && std::find(out.begin(), out.end(), v) == out.end())
      out.push_back(v);
  };
  for (uint32_t bits = 1; bits < (1u << n); ++bits) {
    SymbolValues v = maxima();
    for (size_t k = 0; k < n; ++k)
      if ((bits >> k) & 1)
        v[k] -= 1;
    add(v);
  }
  SymbolValues lo, mid;
  for (const PlanSymbol &s : symbols) {
    lo.push_back(s.min);
    mid.push_back(s.min + (s.max - s.min) / 2);
  }
  add(lo);
  add(mid);
  return out;
}

std::string RunTimeDims::describe(const SymbolValues &values) const {
  return describeSymbolValues(symbols, values);
}

namespace {

int64_t numel(const plan::Buffer &b) {
  int64_t n = 1;
  for (int64_t d : b.shape())
    n *= d;
  return n;
}

/// Compares and fits the plans of one rank across the sample points.
///
/// Buffers are matched through the dataflow, not by number: walking the
/// steps (which must be the same kernels on the same nodes) pairs each
/// operand of the maxima's plan with the sample's. At a point where two
/// values coincide a sample's program may have fewer buffers (two constants
/// equal at length 1 become one tensor; a reshape that is the identity
/// there folds away), so several buffers of the maxima may meet one of a
/// sample: weights are then each checked against it, arena buffers must be
/// views of one another (one offset, one writer at most).
class Generalizer {
public:
  Generalizer(const RunTimeDims &dims, std::vector<SymbolValues> points,
              std::vector<const SerializedRank *> ranks, int rank)
      : dims(dims), points(std::move(points)), ranks(std::move(ranks)),
        rank(rank) {}

  bool run(SerializedRank &out, std::string &error);

private:
  const plan::Plan &planAt(size_t p) const { return ranks[p]->plan; }
  std::string at(size_t p) const { return "at " + dims.describe(points[p]); }
  std::string fail(const std::string &msg) const {
    return "run-time dimensions: rank " + std::to_string(rank) + ": " + msg;
  }
  std::string stepName(int i) const {
    const plan::Step &s = planAt(0).steps(i);
    return "step " + std::to_string(i) + " (" + s.kernel() +
           (s.node().empty() ? "" : ", node '" + s.node() + "'") + ")";
  }
  std::string bufferName(int i) const {
    const plan::Buffer &b = planAt(0).buffers(i);
    return "buffer " + std::to_string(i) +
           (b.name().empty() ? "" : " ('" + b.name() + "')");
  }
  /// The buffer of the plan at point `p` that buffer `id` of the maxima's
  /// plan is there, or null where no step or binding touches it.
  const plan::Buffer *bufferAt(size_t p, int id) const {
    int other = maps[p][size_t(id)];
    return other < 0 ? nullptr : &planAt(p).buffers(other);
  }
  bool matchProgram(size_t p, std::string &why);
  bool sameWeights(size_t p, std::string &why);
  /// Fits each element of `id` (a small integer constant whose values
  /// change with the symbols) as a polynomial of the symbols.
  bool fitValues(plan::Buffer &b, int id, std::string &why) const;
  const WeightSlice *weightAt(size_t p, const std::string &tensor) const;
  /// Fits the integers `observed` holds at every point (absent where a
  /// sample cannot tell, which must not be a corner); `varies` is false
  /// when they are the same everywhere.
  bool fit(const std::vector<std::optional<int64_t>> &observed,
           const std::string &what, SymExpr &expr, bool &varies,
           std::string &why) const;
  bool fitBuffer(plan::Buffer &b, int id, std::string &why) const;
  bool leadingBlock(const WeightSlice &atMax, const WeightSlice &small,
                    std::string &why) const;

  const RunTimeDims &dims;
  std::vector<SymbolValues> points; // [0]: the maxima
  std::vector<const SerializedRank *> ranks;
  int rank;
  /// Per point, per buffer of the maxima's plan: its buffer there, or -1.
  std::vector<std::vector<int>> maps;
  /// Integer constants of a static shape whose values change with the
  /// symbols (fitted element by element).
  std::set<int> varyingValues;
};

bool Generalizer::matchProgram(size_t p, std::string &why) {
  const plan::Plan &a = planAt(0), &b = planAt(p);
  auto differ = [&](const std::string &what) {
    why = fail("the program " + at(p) +
               " differs from the one at the "
               "maxima (" +
               dims.describe(points[0]) + "): " + what +
               ". Its structure depends on the shapes: narrow the range, or "
               "compile static shapes");
    return false;
  };
  if (a.steps_size() != b.steps_size())
    return differ(std::to_string(b.steps_size()) + " steps, not " +
                  std::to_string(a.steps_size()));
  std::vector<int> &map = maps[p];
  map.assign(size_t(a.buffers_size()), -1);
  // Pairs buffer `x` of the maxima with `y` of the sample; false when `x`
  // already met another buffer there.
  auto pair = [&](uint32_t x, uint32_t y) {
    if (x == kAbsentBuffer || y == kAbsentBuffer)
      return x == y;
    if (x >= uint32_t(a.buffers_size()) || y >= uint32_t(b.buffers_size()))
      return false;
    int &slot = map[x];
    if (slot >= 0 && slot != int(y))
      return false;
    slot = int(y);
    return true;
  };
  auto pairAll = [&](const auto &xs, const auto &ys) {
    if (xs.size() != ys.size())
      return false;
    for (int k = 0; k < xs.size(); ++k)
      if (!pair(xs.Get(k), ys.Get(k)))
        return false;
    return true;
  };
  for (int i = 0; i < a.steps_size(); ++i) {
    const plan::Step &x = a.steps(i), &y = b.steps(i);
    if (x.kernel() != y.kernel() || x.node() != y.node() ||
        x.attrs_size() != y.attrs_size() || !pairAll(x.inputs(), y.inputs()) ||
        !pairAll(x.outputs(), y.outputs()))
      return differ(stepName(i) + " is '" + y.kernel() + "' (node '" +
                    y.node() + "') on other operands there");
    for (int k = 0; k < x.attrs_size(); ++k) {
      const plan::Attr &u = x.attrs(k), &v = y.attrs(k);
      if (u.name() != v.name() || u.kind() != v.kind() ||
          u.ints_size() != v.ints_size() || u.str() != v.str() ||
          !std::equal(u.floats().begin(), u.floats().end(), v.floats().begin(),
                      v.floats().end()))
        return differ(stepName(i) + " has another attribute '" + u.name() +
                      "'");
    }
  }
  auto pairBindings = [&](const auto &xs, const auto &ys) {
    if (xs.size() != ys.size())
      return false;
    for (int k = 0; k < xs.size(); ++k)
      if (xs.Get(k).name() != ys.Get(k).name() ||
          !pair(xs.Get(k).buffer(), ys.Get(k).buffer()))
        return false;
    return true;
  };
  if (!pairBindings(a.inputs(), b.inputs()) ||
      !pairBindings(a.outputs(), b.outputs()))
    return differ("the graph inputs or outputs are other buffers");

  // Each paired buffer is the same kind of tensor; buffers of the maxima
  // that meet one buffer there must be able to.
  std::vector<bool> written(size_t(a.buffers_size()), false);
  for (const plan::Step &st : a.steps())
    for (uint32_t o : st.outputs())
      if (o < written.size())
        written[o] = true;
  for (const plan::Binding &bind : a.inputs())
    if (bind.buffer() < written.size())
      written[bind.buffer()] = true;
  std::map<int, std::vector<int>> met; // sample buffer -> maxima's buffers
  for (int i = 0; i < a.buffers_size(); ++i) {
    if (map[size_t(i)] < 0)
      continue;
    const plan::Buffer &x = a.buffers(i), &y = b.buffers(map[size_t(i)]);
    bool constant = false;
    if (x.kind() == plan::Buffer::WEIGHT)
      if (const WeightSlice *w = weightAt(0, x.tensor()))
        constant = w->isConstant;
    if (x.kind() != y.kind() || x.dtype() != y.dtype() ||
        (!constant && x.tensor() != y.tensor()))
      return differ(bufferName(i) + " is another tensor there");
    met[map[size_t(i)]].push_back(i);
  }
  for (const auto &[other, group] : met) {
    if (group.size() < 2)
      continue;
    const plan::Buffer &first = a.buffers(group[0]);
    if (first.kind() == plan::Buffer::WEIGHT)
      continue; // each is compared with the one constant in sameWeights
    int writers = 0;
    for (int i : group) {
      const plan::Buffer &x = a.buffers(i);
      writers += written[size_t(i)] ? 1 : 0;
      if (x.kind() != plan::Buffer::ARENA || x.offset() != first.offset() ||
          numel(x) != numel(first) || writers > 1)
        return differ(bufferName(group[0]) + " and " + bufferName(i) +
                      " are one buffer there but not views of one another "
                      "at the maxima");
    }
  }
  return true;
}

bool Generalizer::fit(const std::vector<std::optional<int64_t>> &observed,
                      const std::string &what, SymExpr &expr, bool &varies,
                      std::string &why) const {
  const size_t n = dims.symbols.size();
  varies = false;
  for (const std::optional<int64_t> &v : observed)
    varies = varies || (v && *v != *observed[0]);
  expr.terms.clear();
  if (!varies) {
    expr.terms.push_back({*observed[0], 0});
    return true;
  }
  // d(T): the value at the corner whose symbols in T are at their maxima
  // and the others one below.
  std::vector<int64_t> corner(size_t(1) << n, 0);
  std::vector<bool> found(corner.size(), false);
  for (size_t p = 0; p < points.size(); ++p) {
    uint32_t t = 0;
    bool isCorner = true;
    for (size_t k = 0; k < n; ++k) {
      if (points[p][k] == dims.symbols[k].max)
        t |= 1u << k;
      else if (points[p][k] != dims.symbols[k].max - 1)
        isCorner = false;
    }
    if (isCorner && !found[t]) {
      if (!observed[p]) {
        why = fail(what + " has no counterpart " + at(p) +
                   ", a corner of the symbols' ranges: narrow the range, or "
                   "compile static shapes");
        return false;
      }
      corner[t] = *observed[p];
      found[t] = true;
    }
  }
  auto overflow = [&] {
    why = fail(what + " is too large to fit");
    return false;
  };
  // In t_k = s_k - (max_k - 1), which is 0 or 1 at the corners:
  // c'(S) = sum over T in S of (-1)^|S\T| d(T) (Moebius inversion).
  std::vector<int64_t> inT(corner.size(), 0);
  for (uint32_t s = 0; s < corner.size(); ++s) {
    if (!found[s]) {
      why = fail("no sample at a corner of the symbols' ranges");
      return false;
    }
    int64_t c = 0;
    for (uint32_t t = s;; t = (t - 1) & s) {
      int64_t term = corner[t];
      if (__builtin_popcount(s & ~t) & 1)
        term = -term;
      if (__builtin_add_overflow(c, term, &c))
        return overflow();
      if (t == 0)
        break;
    }
    inT[s] = c;
  }
  // Back to monomials of the symbols: prod over k in S of
  // (s_k - (max_k - 1)) expands to sum over U in S of prod_{U} s_k *
  // prod_{S\U} -(max_k - 1).
  std::vector<int64_t> coeff(corner.size(), 0);
  for (uint32_t s = 0; s < corner.size(); ++s) {
    if (!inT[s])
      continue;
    for (uint32_t u = s;; u = (u - 1) & s) {
      int64_t term = inT[s];
      for (size_t k = 0; k < n; ++k)
        if (((s & ~u) >> k) & 1 &&
            __builtin_mul_overflow(term, -(dims.symbols[k].max - 1), &term))
          return overflow();
      if (__builtin_add_overflow(coeff[u], term, &coeff[u]))
        return overflow();
      if (u == 0)
        break;
    }
  }
  for (uint32_t u = 0; u < coeff.size(); ++u)
    if (coeff[u])
      expr.terms.push_back({coeff[u], u});
  if (expr.terms.empty())
    expr.terms.push_back({0, 0});
  // The other samples check it.
  for (size_t p = 0; p < points.size(); ++p) {
    int64_t v = 0;
    if (!observed[p])
      continue;
    if (!expr.eval(points[p], v) || v != *observed[p]) {
      why = fail(what + " is " + std::to_string(*observed[p]) + " " + at(p) +
                 ", but " + expr.str(dims.symbols) +
                 " (fitted at the corners of the ranges) gives " +
                 std::to_string(v) +
                 ": it is not a sum of products of the symbols. Narrow the "
                 "range, or compile static shapes");
      return false;
    }
  }
  return true;
}

bool Generalizer::leadingBlock(const WeightSlice &big, const WeightSlice &small,
                               std::string &why) const {
  const Shape &full = big.desc.shape, &block = small.desc.shape;
  size_t elem = dtypeSize(big.desc.dtype);
  bool ok = full.size() == block.size() &&
            big.data.size() == big.desc.bytes() &&
            small.data.size() == small.desc.bytes();
  for (size_t d = 0; ok && d < full.size(); ++d)
    ok = block[d] <= full[d];
  // Walk the block's elements in order, comparing with the full tensor.
  std::vector<int64_t> index(block.size(), 0);
  for (size_t i = 0; ok && i < small.desc.numel(); ++i) {
    size_t offset = 0;
    for (size_t d = 0; d < full.size(); ++d)
      offset = offset * size_t(full[d]) + size_t(index[d]);
    ok = std::memcmp(small.data.data() + i * elem,
                     big.data.data() + offset * elem, elem) == 0;
    for (size_t d = block.size(); d-- > 0;) {
      if (++index[d] < block[d])
        break;
      index[d] = 0;
    }
  }
  if (!ok)
    why = "it is not the leading block of its value at the maxima";
  return ok;
}

const WeightSlice *Generalizer::weightAt(size_t p,
                                         const std::string &tensor) const {
  for (const WeightSlice &w : ranks[p]->weights)
    if (w.tensor == tensor)
      return &w;
  return nullptr;
}

/// Integer constants of at most this many elements may follow the symbols
/// element by element (a past length, a count); larger ones are tables.
constexpr int64_t kMaxValueExprs = 64;

bool Generalizer::sameWeights(size_t p, std::string &why) {
  const plan::Plan &a = planAt(0);
  for (int i = 0; i < a.buffers_size(); ++i) {
    const plan::Buffer *other = bufferAt(p, i);
    if (a.buffers(i).kind() != plan::Buffer::WEIGHT || !other)
      continue;
    const WeightSlice *px = weightAt(0, a.buffers(i).tensor());
    const WeightSlice *py = weightAt(p, other->tensor());
    if (!px || !py) {
      why = fail(bufferName(i) + " names no weight tensor " + at(p));
      return false;
    }
    const WeightSlice &x = *px, &y = *py;
    auto differ = [&](const std::string &how) {
      why = fail("weight '" + x.tensor + "' " + how + " " + at(p));
      return false;
    };
    if (x.isConstant != y.isConstant || x.desc.dtype != y.desc.dtype)
      return differ("is another tensor");
    if (!x.isConstant) {
      if (x.tensor != y.tensor || x.file != y.file || x.offset != y.offset ||
          x.sourceShape != y.sourceShape || x.axis != y.axis ||
          x.ranges != y.ranges || x.desc.shape != y.desc.shape)
        return differ("is another slice of the model's weights");
      continue;
    }
    if (x.desc.shape == y.desc.shape) {
      bool integer = x.desc.dtype == DType::I64 || x.desc.dtype == DType::I32;
      if (x.data != y.data && integer && x.desc.numel() <= kMaxValueExprs) {
        varyingValues.insert(i);
        continue;
      }
      if (x.data != y.data)
        return differ("(a constant computed from the input shapes) holds "
                      "other values; such a constant cannot follow run-time "
                      "dimensions unless it is a leading block, such as "
                      "positions 0..n-1");
      continue;
    }
    std::string how;
    if (!leadingBlock(x, y, how))
      return differ("(a constant computed from the input shapes) has shape " +
                    shapeToString(y.desc.shape) + " and " + how);
  }
  return true;
}

bool Generalizer::fitValues(plan::Buffer &b, int id, std::string &why) const {
  const WeightSlice *atMax = weightAt(0, b.tensor());
  const int64_t n = atMax ? atMax->desc.numel() : 0;
  auto element = [](const WeightSlice &w, int64_t e) -> int64_t {
    if (w.desc.dtype == DType::I64) {
      int64_t v;
      std::memcpy(&v, w.data.data() + e * 8, 8);
      return v;
    }
    int32_t v;
    std::memcpy(&v, w.data.data() + e * 4, 4);
    return v;
  };
  for (int64_t e = 0; e < n; ++e) {
    std::vector<std::optional<int64_t>> observed;
    for (size_t p = 0; p < points.size(); ++p) {
      const plan::Buffer *o = bufferAt(p, id);
      const WeightSlice *w = o ? weightAt(p, o->tensor()) : nullptr;
      observed.push_back(w ? std::optional<int64_t>(element(*w, e))
                           : std::nullopt);
    }
    SymExpr expr;
    bool varies = false;
    if (!fit(observed,
             "weight '" + b.tensor() +
                 "' (a constant computed from the "
                 "input shapes) element " +
                 std::to_string(e),
             expr, varies, why))
      return false;
    writeExpr(expr, *b.add_values());
  }
  return true;
}

bool Generalizer::fitBuffer(plan::Buffer &b, int id, std::string &why) const {
  // Each dimension as the samples give it; a buffer that is a view of
  // another rank where it folded away tells only its element count.
  std::vector<SymExpr> exprs(size_t(b.shape_size()));
  bool any = false;
  for (int d = 0; d < b.shape_size(); ++d) {
    std::vector<std::optional<int64_t>> observed;
    observed.push_back(b.shape(d));
    for (size_t p = 1; p < points.size(); ++p) {
      const plan::Buffer *o = bufferAt(p, id);
      if (o && o->shape_size() == b.shape_size())
        observed.push_back(o->shape(d));
      else
        observed.push_back(std::nullopt);
    }
    bool varies = false;
    if (!fit(observed, bufferName(id) + " dimension " + std::to_string(d),
             exprs[size_t(d)], varies, why))
      return false;
    any = any || varies;
  }
  for (size_t p = 1; p < points.size(); ++p) {
    const plan::Buffer *o = bufferAt(p, id);
    if (!o || o->shape_size() == b.shape_size())
      continue;
    int64_t n = 1;
    for (const SymExpr &e : exprs) {
      int64_t v = 0;
      if (!e.eval(points[p], v) || __builtin_mul_overflow(n, v, &n))
        n = -1;
    }
    if (n != numel(*o)) {
      why = fail(bufferName(id) + " has " + std::to_string(numel(*o)) +
                 " elements " + at(p) + ", but its fitted shape gives " +
                 std::to_string(n) +
                 ". Narrow the range, or compile static shapes");
      return false;
    }
  }
  if (!any)
    return true;
  for (const SymExpr &e : exprs)
    writeExpr(e, *b.add_dims());
  return true;
}

bool Generalizer::run(SerializedRank &out, std::string &error) {
  maps.assign(points.size(), {});
  maps[0].resize(size_t(planAt(0).buffers_size()));
  for (size_t i = 0; i < maps[0].size(); ++i)
    maps[0][i] = int(i);
  for (size_t p = 1; p < points.size(); ++p)
    if (!matchProgram(p, error) || !sameWeights(p, error))
      return false;
  plan::Plan &plan = out.plan;
  for (int i = 0; i < plan.buffers_size(); ++i) {
    plan::Buffer *b = plan.mutable_buffers(i);
    if (!fitBuffer(*b, i, error))
      return false;
    if (varyingValues.count(i) && b->dims_size() > 0) {
      error = fail(bufferName(i) + " is a constant whose shape and values "
                                   "both follow the input shapes");
      return false;
    }
    if (varyingValues.count(i) && !fitValues(*b, i, error))
      return false;
    if (b->dims_size() == 0)
      continue;
    if (b->kind() == plan::Buffer::WEIGHT) {
      bool constant = false;
      for (const WeightSlice &w : out.weights)
        constant = constant || (w.tensor == b->tensor() && w.isConstant);
      if (!constant) {
        error = fail(bufferName(i) + " is a model weight whose shape "
                                     "follows the input shapes");
        return false;
      }
      b->set_leading_block(true);
    }
    if (b->kind() == plan::Buffer::STATE) {
      error = fail(bufferName(i) + " is engine state (a KV cache) whose "
                                   "shape follows the input shapes");
      return false;
    }
  }
  for (int i = 0; i < plan.steps_size(); ++i)
    for (int k = 0; k < plan.steps(i).attrs_size(); ++k) {
      const plan::Attr &attr = plan.steps(i).attrs(k);
      if (attr.kind() != plan::Attr::INTS)
        continue;
      std::vector<SymExpr> exprs(size_t(attr.ints_size()));
      bool any = false;
      for (int e = 0; e < attr.ints_size(); ++e) {
        bool varies = false;
        std::vector<std::optional<int64_t>> observed;
        for (size_t p = 0; p < points.size(); ++p)
          observed.push_back(planAt(p).steps(i).attrs(k).ints(e));
        if (!fit(observed, stepName(i) + " attribute '" + attr.name() + "'",
                 exprs[size_t(e)], varies, error))
          return false;
        any = any || varies;
      }
      if (!any)
        continue;
      plan::Attr *a = plan.mutable_steps(i)->mutable_attrs(k);
      for (const SymExpr &ex : exprs)
        writeExpr(ex, *a->add_int_exprs());
    }
  // Every symbol must be readable from a graph input at run time.
  std::vector<bool> given(dims.symbols.size(), false);
  for (const plan::Binding &bind : plan.inputs())
    for (const plan::Expr &e : plan.buffers(int(bind.buffer())).dims()) {
      int k = exprOf(e).plainSymbol();
      if (k >= 0)
        given[size_t(k)] = true;
    }
  for (size_t k = 0; k < given.size(); ++k)
    if (!given[k]) {
      error = fail("no input of the engine has the run-time dimension '" +
                   dims.symbols[k].name +
                   "' as one of its dimensions, so a run could not tell "
                   "its value");
      return false;
    }
  for (const PlanSymbol &s : dims.symbols) {
    plan::Symbol *sym = plan.add_symbols();
    sym->set_name(s.name);
    sym->set_min(s.min);
    sym->set_max(s.max);
  }
  plan.set_format_version(kPlanFormatVersion);
  return true;
}

} // namespace

bool generalizePlans(std::vector<SerializedRank> &atMax,
                     const RunTimeDims &dims,
                     const std::vector<PlanSample> &samples,
                     std::string &error) {
  std::vector<SymbolValues> points = {dims.maxima()};
  for (const PlanSample &s : samples)
    points.push_back(s.values);
  for (size_t r = 0; r < atMax.size(); ++r) {
    std::vector<const SerializedRank *> ranks = {&atMax[r]};
    for (const PlanSample &s : samples) {
      if (s.ranks.size() != atMax.size()) {
        error = "run-time dimensions: " + std::to_string(s.ranks.size()) +
                " ranks at " + dims.describe(s.values) + ", not " +
                std::to_string(atMax.size());
        return false;
      }
      ranks.push_back(&s.ranks[r]);
    }
    // The maxima's plan is both a sample and the output: fit from a copy.
    SerializedRank copy = atMax[r];
    ranks[0] = &copy;
    if (!Generalizer(dims, points, ranks, int(r)).run(atMax[r], error))
      return false;
  }
  return true;
}

} // namespace tpc
