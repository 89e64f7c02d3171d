//===- Generate.h - Token generation over a decode engine -------*- C++ -*-===//
//
// A decode engine (tpc compile --kv-cache) keeps each rank's KV caches as
// engine state and takes one token per forward, or, compiled with a
// run-time count of new tokens (--input-shape input_ids=1x1..N), up to N.
// generate() feeds the prompt in as few forwards as that allows (one
// forward for a prompt of up to N tokens; each appends to the caches),
// then picks each new token from the last logits (greedy, or sampled with
// a temperature and top-k) and feeds it back, one token per forward,
// until max_new_tokens or an end token.
// It runs on any EngineRunner: every rank in process, or this process's
// rank under MPI, on the CPU or a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_GENERATE_H
#define TPC_RUNTIME_ENGINE_GENERATE_H

#include "runtime/comm/Communicator.h"
#include "runtime/engine/EngineManifest.h"
#include "runtime/engine/Runner.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace tpc::runtime {

struct GenerateOptions {
  int64_t maxNewTokens = 16;
  /// 0: greedy (the highest logit, the lowest id on ties); above 0, sample
  /// from softmax(logits / temperature), restricted to the topK highest
  /// when topK > 0.
  double temperature = 0;
  int64_t topK = 0;
  uint64_t seed = 0;
  /// Stop after generating this id (not before max_new_tokens); -1: never.
  int64_t endToken = -1;
};

struct GenerateResult {
  std::vector<int64_t> tokens;
  /// From the first prompt token to the first generated token, ms.
  double firstTokenMillis = 0;
  /// Each decode step after the first token, ms.
  std::vector<double> stepMillis;
  /// The logits each token was picked from, when asked for.
  std::vector<std::vector<float>> logits;
};

/// Checks a request against the engine before anything runs: a non-empty
/// prompt of ids below the vocabulary, batch 1, and room in the caches for
/// the prompt and max_new_tokens.
Status checkGenerateRequest(const GenerationSpec &spec,
                            const std::vector<int64_t> &prompt,
                            const GenerateOptions &options);

/// Runs the generation on `runner`; with `keepLogits`, result.logits holds
/// the logits each generated token was picked from. Under MPI, `tokenComm`
/// is the job's communicator: every process feeds rank 0's choice (each
/// picks from its own copy of the logits). Null when every rank runs here.
Status generate(EngineRunner &runner, Communicator *tokenComm,
                const GenerationSpec &spec, const std::vector<int64_t> &prompt,
                const GenerateOptions &options, GenerateResult &result,
                bool keepLogits = false);

} // namespace tpc::runtime

#endif
