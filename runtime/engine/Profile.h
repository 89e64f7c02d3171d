//===- Profile.h - Per-step profiles of engine runs -------------*- C++ -*-===//
//
// `tpc run --profile trace.json`: every step of every rank over the timed
// runs, as a Chrome trace (the JSON Perfetto and chrome://tracing open: one
// track per rank, one complete event per step named by its kernel, with the
// ONNX node, the step index and the bytes it writes; collectives in their
// own category, their time including the wait for the slowest peer, which
// `wait_us` gives apart: a profiled run times a barrier before each
// collective), and a table of the steps that took longest.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_PROFILE_H
#define TPC_RUNTIME_ENGINE_PROFILE_H

#include "runtime/engine/RankPlan.h"
#include "runtime/engine/Session.h"

#include <string>
#include <vector>

namespace tpc::runtime {

/// One rank's step times, one vector per profiled run, indexed by step.
using RankRuns = std::vector<std::vector<StepTime>>;

/// The trace events of one rank's runs as a JSON array (text), so that
/// ranks in other processes can send theirs to rank 0.
std::string traceEventsJson(const RankPlan &plan, int rank,
                            const RankRuns &runs);

/// Writes the events of every rank (traceEventsJson texts) as one Chrome
/// trace at `path`, timestamps relative to the earliest event.
Status writeChromeTrace(const std::string &path,
                        const std::vector<std::string> &rankEvents);

/// The `count` steps of `plan` with the most time per run (the mean over
/// `runs`), with their share of the run, as a table:
///   "  1   0.123 ms  12.3%  MatMul  /h.0/mlp/c_fc/MatMul (step 7)".
std::string formatTopSteps(const RankPlan &plan, const RankRuns &runs,
                           size_t count = 10);

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_PROFILE_H
