//===- InspectCommand.cpp - tpc inspect -----------------------------------===//
#include "runtime/engine/Tools.h"
#include "tools/tpc/Commands.h"

#include <iostream>

namespace tpc::cli {

const Command kInspectCommand = {
    "inspect",
    "ENGINE_DIR [--json]",
    "Summarise an engine: per rank its steps, weight and arena bytes, "
    "collectives, kernels, and the tp_role of each weight MatMul/Gemm.",
    {
        {"--json", nullptr, "print the summary as one JSON object"},
    },
    1,
    1,
};

int runInspect(const ParsedArgs &args) {
  return runtime::inspectTool(args.positional[0], args.has("--json"),
                              std::cout, std::cerr);
}

} // namespace tpc::cli
