//===- Profile.cpp - Per-step profiles of engine runs ---------------------===//
#include "runtime/engine/Profile.h"

#include "runtime/support/AtomicFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>

namespace tpc::runtime {

std::string traceEventsJson(const RankPlan &plan, int rank,
                            const RankRuns &runs) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t run = 0; run < runs.size(); ++run) {
    for (size_t i = 0; i < runs[run].size() && i < plan.steps.size(); ++i) {
      const PlanStep &s = plan.steps[i];
      uint64_t bytes = 0;
      for (uint32_t id : s.outputs)
        if (id < plan.buffers.size())
          bytes += plan.buffers[id].bytes;
      const bool collective = s.kind != StepKind::Kernel;
      nlohmann::json args = {
          {"node", s.node}, {"step", i}, {"run", run}, {"bytes", bytes}};
      if (collective)
        args["wait_us"] = runs[run][i].waitMicros;
      events.push_back({{"name", s.kernel},
                        {"cat", collective ? "collective" : "kernel"},
                        {"ph", "X"},
                        {"ts", runs[run][i].startMicros},
                        {"dur", runs[run][i].micros},
                        {"pid", 0},
                        {"tid", rank},
                        {"args", std::move(args)}});
    }
  }
  return events.dump();
}

Status writeChromeTrace(const std::string &path,
                        const std::vector<std::string> &rankEvents) {
  nlohmann::json events = nlohmann::json::array();
  double origin = std::numeric_limits<double>::infinity();
  for (size_t r = 0; r < rankEvents.size(); ++r) {
    nlohmann::json e = nlohmann::json::parse(rankEvents[r], nullptr, false);
    if (!e.is_array())
      return Status::error("--profile: rank " + std::to_string(r) +
                           " sent a malformed trace");
    for (auto &ev : e) {
      origin = std::min(origin, ev["ts"].get<double>());
      events.push_back(std::move(ev));
    }
  }
  for (auto &ev : events)
    ev["ts"] = ev["ts"].get<double>() - origin;
  // Name the tracks after the ranks.
  for (size_t r = 0; r < rankEvents.size(); ++r)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", r},
                      {"args", {{"name", "rank " + std::to_string(r)}}}});
  nlohmann::json trace = {{"traceEvents", std::move(events)},
                          {"displayTimeUnit", "ms"}};
  return AtomicFile::writeWhole(path, trace.dump());
}

std::string formatTopSteps(const RankPlan &plan, const RankRuns &runs,
                           size_t count) {
  const size_t steps = plan.steps.size();
  std::vector<double> mean(steps, 0.0), wait(steps, 0.0);
  for (const auto &run : runs)
    for (size_t i = 0; i < run.size() && i < steps; ++i) {
      mean[i] += run[i].micros / double(runs.size());
      wait[i] += run[i].waitMicros / double(runs.size());
    }
  const double total = std::accumulate(mean.begin(), mean.end(), 0.0);
  std::vector<size_t> order(steps);
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return mean[a] > mean[b]; });
  std::string out;
  char line[64];
  for (size_t k = 0; k < std::min(count, steps); ++k) {
    const size_t i = order[k];
    const PlanStep &s = plan.steps[i];
    std::snprintf(line, sizeof(line), "  %2zu %9.3f ms %5.1f%%  ", k + 1,
                  mean[i] / 1000.0, total > 0 ? 100.0 * mean[i] / total : 0.0);
    out += line + s.kernel + "  " + (s.node.empty() ? "-" : s.node) +
           " (step " + std::to_string(i) + ")";
    if (s.kind != StepKind::Kernel) {
      std::snprintf(line, sizeof(line), ", %.3f ms of it waiting for peers",
                    wait[i] / 1000.0);
      out += line;
    }
    out += "\n";
  }
  return out;
}

} // namespace tpc::runtime
