//===- InspectCommand.cpp - tpc inspect -----------------------------------===//
#include "runtime/engine/Tools.h"
#include "tools/tpc/Commands.h"

#include <iostream>

namespace tpc::cli {

const Command kInspectCommand = {
    "inspect",
    "ENGINE_DIR [--json] [--no-verify]",
    "Summarise an engine: per rank its steps, weight and arena bytes, "
    "collectives, kernels, and the tp_role of each weight MatMul/Gemm. Every "
    "rank file is checked against the size and SHA-256 engine.json records.",
    {
        {"--json", nullptr, "print the summary as one JSON object"},
        {"--no-verify", nullptr,
         "skip the weight files' SHA-256 (sizes and plans are still checked)"},
    },
    1,
    1,
};

int runInspect(const ParsedArgs &args) {
  return runtime::inspectTool(args.positional[0], args.has("--json"),
                              !args.has("--no-verify"), std::cout, std::cerr);
}

} // namespace tpc::cli
