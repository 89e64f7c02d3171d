//===- InspectCommand.cpp - tpc inspect -----------------------------------===//
#include "runtime/engine/Pictures.h"
#include "tools/run/Tools.h"
#include "tools/tpc/Commands.h"

#include <iostream>

namespace tpc::cli {

const Command kInspectCommand = {
    "inspect",
    "ENGINE_DIR [--json] [--no-verify] [--graph FILE.svg|.dot [--rank N]] "
    "[--memory FILE.svg]",
    "Summarise an engine: per rank its steps, weight and arena bytes, "
    "collectives, kernels, and the tp_role of each weight MatMul/Gemm. Every "
    "rank file is checked against the size and SHA-256 engine.json records.",
    {
        {"--json", nullptr, "print the summary as one JSON object"},
        {"--no-verify", nullptr,
         "skip the weight files' SHA-256 (sizes and plans are still checked)"},
        {"--graph", "FILE.svg|.dot",
         "draw a rank's program: a node per step, weight MatMuls coloured by "
         "role (column blue, row green, replicated grey), collectives as red "
         "octagons (.svg needs Graphviz)"},
        {"--rank", "N", "the rank --graph draws (default 0)"},
        {"--memory", "FILE.svg",
         "a chart of every rank's weight, arena, unplanned and lower-bound "
         "bytes"},
    },
    1,
    1,
};

int runInspect(const ParsedArgs &args) {
  const std::string &dir = args.positional[0];
  int rank = 0;
  if (args.has("--rank")) {
    if (!args.has("--graph"))
      return fail(kInspectCommand, "--rank applies to --graph");
    if (Status st = runtime::parseIntFlag("--rank", args.get("--rank"), 0,
                                          65535, rank);
        !st)
      return fail(kInspectCommand, st.message());
  }
  if (args.has("--graph"))
    if (Status st = runtime::writeGraph(dir, rank, args.get("--graph")); !st)
      return fail(kInspectCommand, st.message());
  if (args.has("--memory"))
    if (Status st = runtime::writeMemoryChart(dir, args.get("--memory")); !st)
      return fail(kInspectCommand, st.message());
  return runtime::inspectTool(dir, args.has("--json"), !args.has("--no-verify"),
                              std::cout, std::cerr);
}

} // namespace tpc::cli
