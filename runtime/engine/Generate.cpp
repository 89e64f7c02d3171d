//===- Generate.cpp - Token generation over a decode engine ---------------===//
#include "runtime/engine/Generate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

namespace tpc::runtime {

namespace {

double millisSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

int64_t pickToken(const float *logits, int64_t vocab,
                  const GenerateOptions &o, std::mt19937_64 &rng) {
  if (o.temperature <= 0) {
    int64_t best = 0;
    for (int64_t i = 1; i < vocab; ++i)
      if (logits[i] > logits[best])
        best = i;
    return best;
  }
  std::vector<int64_t> ids(static_cast<size_t>(vocab), 0);
  std::iota(ids.begin(), ids.end(), 0);
  int64_t keep = o.topK > 0 ? std::min(o.topK, vocab) : vocab;
  std::partial_sort(ids.begin(), ids.begin() + keep, ids.end(),
                    [&](int64_t a, int64_t b) {
                      return logits[a] > logits[b] ||
                             (logits[a] == logits[b] && a < b);
                    });
  ids.resize(size_t(keep));
  double top = logits[ids[0]];
  std::vector<double> weights;
  for (int64_t id : ids)
    weights.push_back(std::exp((double(logits[id]) - top) / o.temperature));
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  return ids[pick(rng)];
}

/// The logits output of the runner's last run.
Status lastLogits(const EngineRunner &runner, const std::string &name,
                  const float *&data) {
  TensorDesc desc;
  const void *raw = nullptr;
  if (!runner.output(name, desc, raw) || !raw || desc.dtype != DType::F32)
    return Status::error("the engine has no f32 output '" + name + "'");
  data = static_cast<const float *>(raw);
  return Status::ok();
}

/// Under MPI, every process takes rank 0's token.
Status agreeOnToken(Communicator *comm, int64_t &token) {
  if (!comm || comm->size() == 1)
    return Status::ok();
  int64_t mine = comm->rank() == 0 ? token : 0;
  return comm->allReduce(&mine, &token, 1, DType::I64);
}

} // namespace

Status checkGenerateRequest(const GenerationSpec &spec,
                            const std::vector<int64_t> &prompt,
                            const GenerateOptions &options) {
  if (spec.kvCacheLength == 0)
    return Status::failedPrecondition("the engine is not a decode engine: compile an "
                         "export with past inputs with tpc compile "
                         "--kv-cache LENGTH");
  if (spec.batch != 1)
    return Status::invalidArgument("the engine was compiled for batch " +
                         std::to_string(spec.batch) +
                         "; generation runs batch 1");
  if (prompt.empty())
    return Status::invalidArgument("the prompt has no tokens");
  for (size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || prompt[i] >= spec.vocab)
      return Status::outOfRange("prompt token " + std::to_string(i) + " is " +
                           std::to_string(prompt[i]) +
                           ", outside the vocabulary [0, " +
                           std::to_string(spec.vocab) + ")");
  if (options.maxNewTokens < 1)
    return Status::invalidArgument("max_new_tokens must be at least 1");
  if (options.temperature < 0 || !std::isfinite(options.temperature) ||
      options.topK < 0)
    return Status::invalidArgument("temperature must be >= 0 and top_k >= 0");
  // The last generated token is not fed back, so it needs no position.
  int64_t needed = int64_t(prompt.size()) + options.maxNewTokens - 1;
  if (needed > spec.kvCacheLength)
    return Status::outOfRange(
        "a prompt of " + std::to_string(prompt.size()) + " tokens and " +
        std::to_string(options.maxNewTokens) + " new tokens need " +
        std::to_string(needed) + " cache positions; the engine was "
        "compiled with --kv-cache " + std::to_string(spec.kvCacheLength) +
        " (at most " +
        std::to_string(spec.kvCacheLength + 1 - int64_t(prompt.size())) +
        " new tokens for this prompt)");
  return Status::ok();
}

Status generate(EngineRunner &runner, Communicator *tokenComm,
                const GenerationSpec &spec, const std::vector<int64_t> &prompt,
                const GenerateOptions &options, GenerateResult &result,
                bool keepLogits) {
  TPC_RETURN_IF_ERROR(checkGenerateRequest(spec, prompt, options));
  result = GenerateResult();
  TPC_RETURN_IF_ERROR(runner.resetState());
  std::mt19937_64 rng(options.seed);
  std::vector<int64_t> mask(size_t(spec.kvCacheLength), 0);
  // One forward takes up to `chunk` tokens: the prompt goes in as few
  // forwards as that allows (one, when it fits), each generated token in
  // one of its own.
  const int64_t chunk = std::max<int64_t>(1, spec.maxNewTokens);
  std::vector<int64_t> ids(static_cast<size_t>(chunk), 0),
      positions(static_cast<size_t>(chunk), 0);
  int64_t pos1 = 0;
  const TensorDesc posDesc{DType::I64, {1}};
  const TensorDesc maskDesc{DType::I64, {1, spec.kvCacheLength}};
  // The inputs point at these buffers; their shapes change with the
  // number of tokens of a forward.
  TPC_RETURN_IF_ERROR(runner.setInput(spec.positionInput, posDesc, &pos1));
  if (!spec.maskInput.empty())
    TPC_RETURN_IF_ERROR(runner.setInput(spec.maskInput, maskDesc, mask.data()));
  auto start = std::chrono::steady_clock::now();
  int64_t fed = -1; // tokens of the last forward
  // Feeds tokens [t, t + n) of `source` in one forward.
  auto forward = [&](int64_t t, const int64_t *source, int64_t n) -> Status {
    const TensorDesc desc{DType::I64, {1, n}};
    if (n != fed) {
      TPC_RETURN_IF_ERROR(runner.setInput(spec.idsInput, desc, ids.data()));
      if (!spec.positionsInput.empty())
        TPC_RETURN_IF_ERROR(
            runner.setInput(spec.positionsInput, desc, positions.data()));
      fed = n;
    }
    for (int64_t i = 0; i < n; ++i) {
      ids[size_t(i)] = source[i];
      positions[size_t(i)] = t + i;
      mask[size_t(t + i)] = 1;
    }
    pos1 = t;
    TPC_RETURN_IF_ERROR(runner.run().withContext(
        "generation step " + std::to_string(t) + ": "));
    return Status::ok();
  };
  auto step = [&](int64_t t, int64_t id) { return forward(t, &id, 1); };
  const float *logits = nullptr;
  int64_t t = 0;
  while (t < int64_t(prompt.size())) {
    int64_t n = std::min<int64_t>(chunk, int64_t(prompt.size()) - t);
    TPC_RETURN_IF_ERROR(forward(t, prompt.data() + t, n));
    t += n;
  }
  for (int64_t n = 0; n < options.maxNewTokens; ++n) {
    auto t0 = std::chrono::steady_clock::now();
    if (n > 0) {
      TPC_RETURN_IF_ERROR(step(t, result.tokens.back()));
      ++t;
    }
    TPC_RETURN_IF_ERROR(lastLogits(runner, spec.logitsOutput, logits));
    if (keepLogits)
      result.logits.emplace_back(logits, logits + spec.vocab);
    int64_t next = pickToken(logits, spec.vocab, options, rng);
    TPC_RETURN_IF_ERROR(agreeOnToken(tokenComm, next));
    result.tokens.push_back(next);
    if (n == 0)
      result.firstTokenMillis = millisSince(start);
    else
      result.stepMillis.push_back(millisSince(t0));
    if (result.tokens.back() == options.endToken)
      break;
  }
  return Status::ok();
}

} // namespace tpc::runtime
