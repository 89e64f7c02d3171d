//===- Inspect.h - What an engine folder holds ------------------*- C++ -*-===//
//
// `tpc inspect`: a summary of every rank's plan (steps, memory, collectives,
// kernels) without loading weights or preparing kernels, so that it is quick
// even for large engines. The manifest and the plans are validated as the
// loader would; the weights files are checked for presence and size only.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_INSPECT_H
#define TPC_RUNTIME_ENGINE_INSPECT_H

#include "runtime/engine/EngineManifest.h"
#include "runtime/engine/RankPlan.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tpc::runtime {

struct CollectiveSummary {
  std::string kind; // "AllReduce", "AllGather", "ReduceScatter"
  int count = 0;
  /// Bytes of the full (unsharded) tensors exchanged per forward.
  uint64_t bytes = 0;
};

/// A MatMul or Gemm step whose second operand is a weight: the projections
/// that tensor parallelism shards.
struct WeightMatMul {
  size_t step = 0;
  std::string kernel;
  std::string node;
  std::string weightTensor;
  TensorDesc weight;
  /// The step's `tp_role` attribute ("column", "row", "replicated"); empty
  /// when the compiler did not set one.
  std::string tpRole;
  /// Why a replicated MatMul is replicated (`tp_reason`: "output
  /// projection", "kv heads fewer than ranks", "head transform", "expert
  /// router", "sharding plan", "sharding annotation", "allowed by
  /// --allow-replicated"); empty otherwise.
  std::string tpReason;
  /// For a MatMulNBits step: the width of its codes and the block of K
  /// each scale covers; 0 for a float weight.
  int64_t bits = 0;
  int64_t blockSize = 0;
};

struct RankSummary {
  int rank = 0;
  std::string planFile;
  std::string weightsFile;
  size_t steps = 0;
  size_t buffers = 0;
  uint64_t weightBytes = 0;
  /// weightBytes by the stored dtype ("f32", "u8", ...).
  std::map<std::string, uint64_t> weightBytesByDType;
  /// Engine state (KV caches) the rank holds across forwards.
  uint64_t stateBytes = 0;
  /// The plan's figures; unplannedBytes summed here for a plan without it.
  ArenaSizes arena;
  std::vector<CollectiveSummary> collectives;
  /// Kernel name -> number of steps (collectives included).
  std::map<std::string, int> kernelCounts;
  std::vector<WeightMatMul> weightMatMuls;
};

struct EngineSummary {
  EngineManifest manifest;
  std::vector<RankSummary> ranks;
  /// Whether the weight files' SHA-256 digests were checked (the plans'
  /// always are; sizes always are).
  bool weightsVerified = false;
};

/// Reads rank `rank`'s plan from the engine `m` describes, after checking
/// its size and digest.
Status readRankPlan(const EngineManifest &m, int rank, RankPlan &out);

/// Bytes for people: "512 B", "475136 (464.0 KiB)".
std::string humanBytes(uint64_t bytes);

/// Reads and summarises the engine in `dir`, checking every rank file's
/// size and SHA-256 against engine.json (the weights' digests only when
/// `verifyWeights`: hashing reads every weight byte).
Status inspectEngine(const std::string &dir, EngineSummary &out,
                     bool verifyWeights = true);

/// The summary as a human-readable report.
std::string formatSummaryText(const EngineSummary &summary);
/// The summary as one JSON object.
std::string formatSummaryJson(const EngineSummary &summary);

/// What a compile chose, in a few lines: the weight MatMuls by role (with
/// the reason for each replicated one), the collectives per forward and
/// their bytes, and the weight bytes per rank.
std::string formatShardingSummary(const EngineSummary &summary);

/// The chosen role of every weight MatMul as a sharding plan file (JSON, in
/// Hugging Face tp_plan words: colwise, rowwise, replicate), keyed by ONNX
/// node name and by weight name; `tpc compile --sharding-plan` reads it.
std::string formatShardingPlan(const EngineSummary &summary);

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_INSPECT_H
