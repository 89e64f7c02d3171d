//===- SymExpr.h - Integers of a plan that follow its symbols ---*- C++ -*-===//
//
// A plan with run-time dimensions (format version 2) gives some buffer
// dimensions and integer attributes as expressions of its symbols: sums of
// an integer coefficient times a product of distinct symbols. The compiler
// writes them (plan.proto's Expr), the runtime evaluates them; both print
// them the same way. Header-only, like PlanFormat.h.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_FORMAT_SYMEXPR_H
#define TPC_RUNTIME_FORMAT_SYMEXPR_H

#include <cstdint>
#include <string>
#include <vector>

namespace tpc {

/// A run-time dimension of a plan: its value is read from the graph inputs
/// before each forward, within [min, max].
struct PlanSymbol {
  std::string name;
  int64_t min = 1;
  int64_t max = 1;
};

/// The values of a plan's symbols, in the plan's order.
using SymbolValues = std::vector<int64_t>;

/// "sequence=12, batch=1".
inline std::string describeSymbolValues(const std::vector<PlanSymbol> &symbols,
                                        const SymbolValues &values) {
  std::string s;
  for (size_t k = 0; k < symbols.size() && k < values.size(); ++k)
    s += (s.empty() ? "" : ", ") + symbols[k].name + "=" +
         std::to_string(values[k]);
  return s;
}

/// The sum of `coeff` times the product of the symbols in `mask` (bit k:
/// symbol k) over the terms.
struct SymExpr {
  struct Term {
    int64_t coeff = 0;
    uint32_t mask = 0;
  };
  std::vector<Term> terms;

  /// The value at `values`; false on overflow.
  bool eval(const SymbolValues &values, int64_t &out) const {
    int64_t total = 0;
    for (const Term &t : terms) {
      int64_t v = t.coeff;
      for (size_t k = 0; k < values.size() && k < 32; ++k)
        if (((t.mask >> k) & 1) && __builtin_mul_overflow(v, values[k], &v))
          return false;
      if (__builtin_add_overflow(total, v, &total))
        return false;
    }
    out = total;
    return true;
  }

  /// The symbol this is (one term, coefficient 1, one symbol), or -1.
  int plainSymbol() const {
    if (terms.size() != 1 || terms[0].coeff != 1 || terms[0].mask == 0 ||
        (terms[0].mask & (terms[0].mask - 1)))
      return -1;
    return __builtin_ctz(terms[0].mask);
  }

  /// Whether no term names a symbol.
  bool isConstant() const {
    for (const Term &t : terms)
      if (t.mask && t.coeff)
        return false;
    return true;
  }

  /// "2*sequence + 1".
  std::string str(const std::vector<std::string> &names) const {
    std::string s;
    for (const Term &t : terms) {
      std::string factors;
      for (size_t k = 0; k < 32; ++k)
        if ((t.mask >> k) & 1)
          factors += (factors.empty() ? "" : "*") +
                     (k < names.size() ? names[k] : "s" + std::to_string(k));
      int64_t c = t.coeff;
      if (!s.empty())
        s += c < 0 ? " - " : " + ";
      else if (c < 0)
        s += "-";
      uint64_t mag = c < 0 ? 0 - uint64_t(c) : uint64_t(c);
      if (factors.empty())
        s += std::to_string(mag);
      else
        s += (mag == 1 ? "" : std::to_string(mag) + "*") + factors;
    }
    return s.empty() ? "0" : s;
  }
  std::string str(const std::vector<PlanSymbol> &symbols) const {
    std::vector<std::string> names;
    for (const PlanSymbol &s : symbols)
      names.push_back(s.name);
    return str(names);
  }
};

} // namespace tpc

#endif // TPC_RUNTIME_FORMAT_SYMEXPR_H
