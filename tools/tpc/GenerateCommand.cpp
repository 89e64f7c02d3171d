//===- GenerateCommand.cpp - tpc generate ---------------------------------===//
//
// Greedy or sampled generation over a decode engine (tpc compile
// --kv-cache), every rank in this process or one per process under mpirun,
// on the CPU or GPUs; the loop is runtime::generate() over an
// EngineRunner.
//
//===----------------------------------------------------------------------===//
#include "base/Cores.h"
#include "runtime/engine/CpuRunner.h"
#include "runtime/engine/Generate.h"
#include "runtime/io/Npy.h"
#include "tools/run/RunToolSupport.h"
#include "tools/run/Tools.h"
#include "tools/tpc/Commands.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

namespace tpc::cli {

const Command kGenerateCommand = {
    "generate",
    "ENGINE_DIR --input-ids PROMPT.npy --max-new-tokens N [--output-dir DIR] "
    "[--temperature T] [--top-k K] [--seed S] [--end-token ID] "
    "[--threads N] [--backend cpu|cuda] [--emulate-ranks] [--device N] "
    "[--json]",
    "Generate tokens with a decode engine (tpc compile --kv-cache): the "
    "prompt is fed into the per-rank KV caches (in one forward when the "
    "engine takes a run-time count of tokens, --input-shape "
    "input_ids=1x1..N, else one token at a time), then each new token is "
    "picked from the logits and fed back.",
    {
        {"--input-ids", "PROMPT.npy",
         "the prompt: int64 or int32 token ids, shape [1, T] or [T]"},
        {"--max-new-tokens", "N", "tokens to generate (required)"},
        {"--output-dir", "DIR",
         "write the generated ids to DIR/generated_ids.npy (int64 [1, N])"},
        {"--save-logits", nullptr,
         "with --output-dir, also the logits each token was picked from, "
         "DIR/logits.npy (f32 [N, vocab])"},
        {"--temperature", "T",
         "0 (default): greedy; above 0, sample from softmax(logits / T)"},
        {"--top-k", "K", "sample among the K most likely tokens only"},
        {"--seed", "S", "seed of the sampler (default 0)"},
        {"--end-token", "ID", "stop after generating ID"},
        {"--threads", "N", "kernel threads per rank (default 1)"},
        {"--backend", "cpu|cuda",
         "where kernels run (default cpu); cuda: one GPU per rank, the "
         "decode step replayed as a CUDA graph"},
        {"--emulate-ranks", nullptr,
         "with --backend cuda: every rank on one GPU"},
        {"--device", "N", "with --backend cuda: the first GPU (default 0)"},
        {"--oversubscribe", nullptr,
         "allow ranks x threads to exceed the available cores"},
        {"--json", nullptr,
         "print {\"tokens\", \"time_to_first_token_ms\", \"per_token_ms\": "
         "{median, p90}, \"tokens_per_s\", \"load_ms\", \"tp\"} only"},
    },
    1,
    1,
};

namespace {

int fail(const std::string &msg) {
  std::cerr << "tpc generate: error: " << msg << "\n";
  return 1;
}

bool parseInt(const std::string &text, int64_t lo, int64_t &out) {
  try {
    size_t used = 0;
    long long v = std::stoll(text, &used);
    if (used != text.size() || v < lo)
      return false;
    out = v;
    return true;
  } catch (...) {
    return false;
  }
}

/// Writes --output-dir and prints the result (text or --json).
int printResult(const ParsedArgs &args, const runtime::GenerateResult &result,
                size_t promptTokens, int64_t vocab, double loadMillis, int tp,
                int64_t threads) {
  if (args.has("--output-dir")) {
    std::error_code ec;
    std::filesystem::create_directories(args.get("--output-dir"), ec);
    std::string path =
        (std::filesystem::path(args.get("--output-dir")) / "generated_ids.npy")
            .string();
    TensorDesc d{DType::I64, {1, int64_t(result.tokens.size())}};
    if (Status ws = writeNpy(path, d, result.tokens.data()); !ws)
      return fail(ws.message());
    if (args.has("--save-logits")) {
      std::vector<float> all;
      for (const std::vector<float> &l : result.logits)
        all.insert(all.end(), l.begin(), l.end());
      TensorDesc ld{DType::F32,
                    {int64_t(result.logits.size()), vocab}};
      std::string lp =
          (std::filesystem::path(args.get("--output-dir")) / "logits.npy")
              .string();
      if (Status ws = writeNpy(lp, ld, all.data()); !ws)
        return fail(ws.message());
    }
  }
  const runtime::LatencyStats stats = runtime::latencyStats(result.stepMillis);
  const double median = stats.median, p90 = stats.p90;
  double total = result.firstTokenMillis;
  for (double m : result.stepMillis)
    total += m;
  double perSecond =
      result.stepMillis.empty()
          ? 0
          : 1000.0 * double(result.stepMillis.size()) /
                (total - result.firstTokenMillis);
  if (args.has("--json")) {
    nlohmann::json j{{"tokens", result.tokens},
                     {"prompt_tokens", promptTokens},
                     {"time_to_first_token_ms", result.firstTokenMillis},
                     {"per_token_ms", {{"median", median}, {"p90", p90}}},
                     {"tokens_per_s", perSecond},
                     {"load_ms", loadMillis},
                     {"tp", tp},
                     {"threads", threads}};
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << "generated " << result.tokens.size() << " tokens:";
  for (int64_t t : result.tokens)
    std::cout << " " << t;
  std::cout << "\n";
  char line[256];
  std::snprintf(line, sizeof line,
                "time to first token %.3f ms (%zu prompt tokens), per token "
                "median %.3f ms, p90 %.3f ms, %.1f tokens/s; load %.1f ms "
                "(tp %d, %lld thread(s) per rank)\n",
                result.firstTokenMillis, promptTokens, median, p90, perSecond,
                loadMillis, tp, (long long)threads);
  std::cout << line;
  return 0;
}

} // namespace

int runGenerate(const ParsedArgs &args) {
  const std::string dir = args.positional[0];
  if (Status st = runtime::checkTorchrunLaunch(); !st)
    return fail(st.message());
  if (!args.has("--input-ids"))
    return fail("missing --input-ids PROMPT.npy");
  if (!args.has("--max-new-tokens"))
    return fail("missing --max-new-tokens N");
  runtime::GenerateOptions go;
  int64_t threads = 1;
  if (!parseInt(args.get("--max-new-tokens"), 1, go.maxNewTokens))
    return fail("--max-new-tokens must be a positive integer, not '" +
                args.get("--max-new-tokens") + "'");
  if (args.has("--top-k") && !parseInt(args.get("--top-k"), 0, go.topK))
    return fail("--top-k must be a non-negative integer");
  int64_t seed = 0;
  if (args.has("--seed") && !parseInt(args.get("--seed"), 0, seed))
    return fail("--seed must be a non-negative integer");
  go.seed = uint64_t(seed);
  if (args.has("--end-token") &&
      !parseInt(args.get("--end-token"), 0, go.endToken))
    return fail("--end-token must be a token id");
  if (args.has("--threads") && !parseInt(args.get("--threads"), 1, threads))
    return fail("--threads must be a positive integer");
  runtime::Backend backend = runtime::Backend::Cpu;
  if (args.has("--backend"))
    if (Status st = runtime::parseBackend(args.get("--backend"), backend); !st)
      return fail(st.message());
  runtime::GpuRunOptions gpu;
  gpu.emulateRanks = args.has("--emulate-ranks");
  if (args.has("--device"))
    if (Status st = runtime::parseIntFlag("--device", args.get("--device"), 0,
                                          1023, gpu.device);
        !st)
      return fail(st.message());
  if (backend == runtime::Backend::Cpu &&
      (args.has("--emulate-ranks") || args.has("--device")))
    return fail(
        std::string(args.has("--device") ? "--device" : "--emulate-ranks") +
        " needs --backend cuda");
  if (args.has("--temperature")) {
    try {
      size_t used = 0;
      go.temperature = std::stod(args.get("--temperature"), &used);
      if (used != args.get("--temperature").size())
        throw std::invalid_argument("");
    } catch (...) {
      return fail("--temperature must be a number");
    }
  }

  runtime::EngineManifest manifest;
  if (Status st = runtime::EngineManifest::load(dir, manifest); !st)
    return fail(st.message());
  NpyArray prompt;
  const std::string promptPath = args.get("--input-ids");
  Status read = readNpy(promptPath, prompt, [&](const TensorDesc &d) {
    bool intType = d.dtype == DType::I64 || d.dtype == DType::I32;
    bool shapeOk = d.shape.size() == 1 ||
                   (d.shape.size() == 2 && d.shape[0] == 1);
    if (!intType || !shapeOk)
      return Status::error("the prompt must be int64 or int32 token ids of "
                           "shape [1, T] or [T], not " +
                           d.str());
    return Status::ok();
  });
  if (!read)
    return fail(promptPath + ": " + read.message());
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < prompt.desc.numel(); ++i)
    ids.push_back(prompt.desc.dtype == DType::I64
                      ? reinterpret_cast<const int64_t *>(prompt.data.data())[i]
                      : reinterpret_cast<const int32_t *>(prompt.data.data())[i]);
  // Everything that can be refused is refused before the engine loads.
  if (Status st =
          runtime::checkGenerateRequest(manifest.generation, ids, go);
      !st)
    return fail(dir + ": " + st.message());
  auto report = [&](const runtime::GenerateResult &result, double loadMillis,
                    int tp) -> int {
    return printResult(args, result, ids.size(), manifest.generation.vocab,
                       loadMillis, tp, threads);
  };
  if (runtime::launchedByMpi()) {
    runtime::GenerateToolOptions mo;
    mo.engineDir = dir;
    mo.prompt = ids;
    mo.generate = go;
    mo.threadsPerRank = int(threads);
    mo.backend = backend;
    mo.gpu = gpu;
    int status = 0;
    int rc = runtime::generateUnderMpi(
        mo,
        [&](const runtime::GenerateResult &r, double loadMillis) {
          status = report(r, loadMillis, manifest.tp);
        },
        std::cerr);
    return rc ? rc : status;
  }
  if (args.has("--save-logits") && !args.has("--output-dir"))
    return fail("--save-logits needs --output-dir DIR");
  std::unique_ptr<runtime::EngineRunner> runner;
  auto t0 = std::chrono::steady_clock::now();
  if (backend == runtime::Backend::Cpu) {
    int64_t cores = usableCores();
    if (int64_t(manifest.tp) * threads > cores && !args.has("--oversubscribe"))
      return fail(std::to_string(manifest.tp) + " rank(s) x " +
                  std::to_string(threads) + " thread(s) exceed the " +
                  std::to_string(cores) +
                  " cores available; lower --threads or pass --oversubscribe");
    runtime::CpuRunOptions co;
    co.numThreads = int(threads);
    if (Status st = runtime::createCpuRunner(dir, co, runner); !st)
      return fail(st.message());
  } else if (Status st = runtime::createCudaRunner(dir, gpu, runner); !st) {
    return fail(st.message());
  }
  double loadMillis = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
  runtime::GenerateResult result;
  Status st = runtime::generate(*runner, nullptr, manifest.generation, ids, go,
                                result, args.has("--save-logits"));
  if (!st && runner->abandoned()) {
    std::cerr << "tpc generate: error: " << st.message() << "\n";
    std::fflush(nullptr);
    std::_Exit(1);
  }
  if (!st)
    return fail(st.message());

  return report(result, loadMillis, manifest.tp);
}

} // namespace tpc::cli
