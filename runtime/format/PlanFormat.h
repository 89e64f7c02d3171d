//===- PlanFormat.h - Constants of the plan format --------------*- C++ -*-===//
//
// What the compiler that writes rankN.plan and the runtime that reads it
// must agree on beyond plan.proto's fields: the format version, the id of
// an absent operand and the step kernels that are collectives rather than
// entries of a kernel table. Header-only and without dependencies, so both
// sides (and the plugin SDK) include the one definition.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_FORMAT_PLANFORMAT_H
#define TPC_RUNTIME_FORMAT_PLANFORMAT_H

#include <cstdint>
#include <string_view>

namespace tpc {

/// The plan format version the compiler writes and the runtime reads (a
/// runtime refuses plans of a newer version).
constexpr uint32_t kPlanFormatVersion = 2;
/// The version of plans without run-time dimensions, which runtimes that
/// predate them read too.
constexpr uint32_t kStaticPlanFormatVersion = 1;
/// Most run-time dimensions a plan may have (each sampled at two values
/// per compile, so the compile grows as 2^n).
constexpr uint32_t kMaxPlanSymbols = 3;
/// The buffer id of an absent optional operand.
constexpr uint32_t kAbsentBuffer = 0xFFFFFFFFu;

/// The kernel names of the collective steps.
constexpr std::string_view kAllReduceKernel = "AllReduce";
constexpr std::string_view kAllGatherKernel = "AllGather";
constexpr std::string_view kReduceScatterKernel = "ReduceScatter";

inline bool isCollectiveKernel(std::string_view name) {
  return name == kAllReduceKernel || name == kAllGatherKernel ||
         name == kReduceScatterKernel;
}

} // namespace tpc

#endif // TPC_RUNTIME_FORMAT_PLANFORMAT_H
