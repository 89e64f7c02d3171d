//===- RunTimeDims.h - Plans whose shapes follow run-time symbols -*- C++
//-*-===//
//
// `tpc compile --input-shape input_ids=1x1..2048` makes one engine for every
// sequence length in the range. The compiler works on static shapes, so the
// driver compiles the program at a few sample values of the symbols, and
// generalizePlans() turns the plans at the maxima into one plan whose
// dimensions and integer attributes are expressions of the symbols:
//
// - every sample must give the same program (steps, kernels, buffers,
//   weights), only with other integers; a program whose structure depends
//   on the shapes is refused, naming the first difference;
// - each integer is fitted as a multilinear polynomial (products of
//   distinct symbols, such as batch*sequence) from the corners of the box
//   {max-1, max}^n, and must then give the values of the samples at the
//   minima and at the middle of every range, or the compile fails naming it;
// - a constant computed from the shapes (positions 0..sequence-1, a causal
//   mask) must be, at every sample, the leading block of its value at the
//   maxima; the runtime then cuts that block for each binding. Any other
//   constant that changes with the shapes is refused.
//
// Memory is planned at the maxima: every dimension is at most its value
// there over the whole box (checked), so the arena holds every binding.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_COMPILER_ENGINE_RUNTIMEDIMS_H
#define TPC_COMPILER_ENGINE_RUNTIMEDIMS_H

#include "compiler/Engine/PlanSerializer.h"

#include <map>
#include <string>
#include <vector>

namespace tpc {

/// The run-time dimensions of a compile and where they come from.
struct RunTimeDims {
  std::vector<PlanSymbol> symbols;
  /// Per graph input given with ranges: per dimension the symbol's index,
  /// or -1 for a static dimension (whose size is in `staticDims`).
  std::map<std::string, std::vector<int>> inputSymbols;
  std::map<std::string, std::vector<int64_t>> staticDims;

  bool empty() const { return symbols.empty(); }
  /// The input shapes of a compile at `values`.
  std::map<std::string, std::vector<int64_t>>
  shapesAt(const SymbolValues &values) const;
  /// Every symbol at its maximum.
  SymbolValues maxima() const;
  /// The points to compile at besides the maxima: the other corners of
  /// {max-1, max}^n (which fix the polynomials), then the minima and the
  /// middles (which check them), without repeats.
  std::vector<SymbolValues> samplePoints() const;
  /// "sequence=12, batch=1".
  std::string describe(const SymbolValues &values) const;
};

/// What the model says of a graph input's axes: the name of each (""
/// where it has none) and its fixed size (-1 where it has none).
struct ModelInputAxes {
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
};

/// Parses one `--input-shape` value with ranges: "NAME=1x1..2048" (the
/// symbol is then the model's name for that axis, from `axes`) or
/// "NAME=1xseq:1..2048". Adds the input to `dims`; a symbol named twice
/// must have the same range, and an axis the model fixes cannot have one.
/// Returns false with `error` set when malformed.
bool parseInputShapeRange(const std::string &spec,
                          const std::map<std::string, ModelInputAxes> &axes,
                          RunTimeDims &dims, std::string &error);

/// Whether `spec` (an --input-shape value) has a range in it.
bool hasInputShapeRange(const std::string &spec);

/// The plans of every rank compiled at one sample point.
struct PlanSample {
  SymbolValues values;
  std::vector<SerializedRank> ranks;
};

/// Generalises `atMax` (the ranks compiled at the maxima) with `samples`
/// (the same compile at samplePoints()). On failure returns false with
/// `error` naming the rank, step or buffer that does not generalise.
bool generalizePlans(std::vector<SerializedRank> &atMax,
                     const RunTimeDims &dims,
                     const std::vector<PlanSample> &samples,
                     std::string &error);

} // namespace tpc

#endif
