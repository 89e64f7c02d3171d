//===- Pictures.h - Drawings of an engine -----------------------*- C++ -*-===//
//
// `tpc inspect ENGINE --graph FILE.svg|.dot [--rank N]`: a rank's program as
// a Graphviz graph (one node per step, edges through the buffers; weight
// MatMuls coloured by their tensor-parallel role, collectives marked, graph
// inputs and outputs as ellipses). `--memory FILE.svg`: per rank, bars of
// weight, arena, unplanned and lower-bound bytes.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_PICTURES_H
#define TPC_RUNTIME_ENGINE_PICTURES_H

#include "runtime/engine/Inspect.h"
#include "runtime/engine/RankPlan.h"

#include <string>

namespace tpc::runtime {

/// The Graphviz (dot) text of `plan`. Colours: column-parallel MatMuls
/// blue, row-parallel green, replicated grey; collectives red octagons.
std::string planToDot(const RankPlan &plan, const std::string &title);

/// An SVG bar chart of every rank's weight, arena, unplanned and
/// lower-bound bytes.
std::string memoryChartSvg(const EngineSummary &summary);

/// Draws rank `rank` of the engine in `dir` into `path`: `.dot` as text,
/// `.svg` through Graphviz's `dot` (an error naming the package when it is
/// missing). Anything else is refused.
Status writeGraph(const std::string &dir, int rank, const std::string &path);

/// Writes memoryChartSvg() of the engine in `dir` to `path` (`.svg`).
Status writeMemoryChart(const std::string &dir, const std::string &path);

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_PICTURES_H
