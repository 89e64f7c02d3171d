//===- Generate.h - Token generation over a decode engine -------*- C++ -*-===//
//
// A decode engine (tpc compile --kv-cache) runs one token per forward and
// keeps each rank's KV caches as engine state. generate() feeds the prompt
// one token at a time (each step appends to the caches), then picks each
// new token from the last logits (greedy, or sampled with a temperature
// and top-k) and feeds it back, until max_new_tokens or an end token.
// It runs on any StepRunner: the ranks of a LocalEngine in process, or
// this process's rank under MPI.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_GENERATE_H
#define TPC_RUNTIME_ENGINE_GENERATE_H

#include "runtime/engine/EngineManifest.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace tpc::runtime {

/// One forward of a decode engine, on whatever runs it.
class StepRunner {
public:
  virtual ~StepRunner() = default;
  /// Zeroes the KV caches: a new sequence starts.
  virtual Status reset() = 0;
  virtual Status setInput(const std::string &name, const TensorDesc &desc,
                          const void *data) = 0;
  virtual Status run() = 0;
  /// The logits of the last run, `vocab` floats for batch 1.
  virtual Status logits(const std::string &name, const float *&data) = 0;
  /// Makes every process feed the same next token: under MPI, rank 0's
  /// choice (each rank picks from its own copy of the logits).
  virtual Status agree(int64_t &token) {
    (void)token;
    return Status::ok();
  }
};

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

class LocalEngine;
class Session;

/// Output `name` of `session`'s last run as f32 logits.
Status sessionLogits(const Session &session, const std::string &name,
                     const float *&data);

/// Every rank of a LocalEngine, in this process.
class LocalStepRunner final : public StepRunner {
public:
  explicit LocalStepRunner(LocalEngine &engine) : engine_(engine) {}
  Status reset() override;
  Status setInput(const std::string &name, const TensorDesc &desc,
                  const void *data) override;
  Status run() override;
  Status logits(const std::string &name, const float *&data) override;

private:
  LocalEngine &engine_;
};

/// Checks a request against the engine before anything runs: a non-empty
/// prompt of ids below the vocabulary, batch 1, and room in the caches for
/// the prompt and max_new_tokens.
Status checkGenerateRequest(const GenerationSpec &spec,
                            const std::vector<int64_t> &prompt,
                            const GenerateOptions &options);

/// Runs the generation; with `keepLogits`, result.logits holds the logits
/// each generated token was picked from.
Status generate(StepRunner &runner, const GenerationSpec &spec,
                const std::vector<int64_t> &prompt,
                const GenerateOptions &options, GenerateResult &result,
                bool keepLogits = false);

} // namespace tpc::runtime

#endif
