//===- FuzzEngine.cpp - libFuzzer harness: rank plans, loaded and run -----===//
//
// Input: a rankN.plan. The harness puts it in an engine folder next to the
// real engine.json and weights of the engine named by TPC_FUZZ_ENGINE (with
// the plan's size and digest recorded, so the loader gets past the digest
// check), loads the rank as `tpc run` does and, for an engine with tp 1,
// runs it once on zero-filled inputs. Loading must accept the plan or return
// an error; an accepted plan must run without touching memory it does not
// own (the sanitizers check that), whatever its kernels' attributes say.

#include "runtime/engine/EngineManifest.h"
#include "runtime/engine/RankEngine.h"
#include "runtime/engine/RankPlan.h"
#include "runtime/engine/Session.h"
#include "runtime/support/Sha256.h"
#include "test/fuzz/FuzzSupport.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace tpc;
using namespace tpc::runtime;

namespace {
struct Seed {
  nlohmann::json manifest;
  int tp = 0;
};

const Seed &seed() {
  static Seed s = [] {
    Seed s;
    const char *dir = std::getenv("TPC_FUZZ_ENGINE");
    if (!dir || !*dir) {
      std::fprintf(stderr, "fuzz_engine: set TPC_FUZZ_ENGINE to an engine "
                           "folder (scripts/fuzz does)\n");
      std::abort();
    }
    std::ifstream in(fs::path(dir) / "engine.json");
    std::stringstream text;
    text << in.rdbuf();
    s.manifest = nlohmann::json::parse(text.str());
    s.tp = s.manifest.at("tp").get<int>();
    // The weights are shared with the seed engine, read-only.
    for (const auto &r : s.manifest.at("ranks")) {
      std::string w = r.at("weights").at("file").get<std::string>();
      fs::path link = fs::path(fuzz::scratchDir()) / w;
      std::error_code ec;
      fs::remove(link, ec);
      fs::create_symlink(fs::absolute(fs::path(dir) / w), link);
    }
    return s;
  }();
  return s;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const Seed &s = seed();
  RankPlan parsed;
  if (!parseRankPlan(data, size, "fuzz.plan", parsed).isOk())
    return 0;
  int rank = parsed.rank >= 0 && parsed.rank < s.tp ? parsed.rank : 0;

  nlohmann::json manifest = s.manifest;
  nlohmann::json &record = manifest["ranks"][size_t(rank)]["plan"];
  std::string planFile = record.at("file").get<std::string>();
  record["bytes"] = size;
  record["sha256"] = Sha256::toHex(Sha256::hash(data, size));
  fuzz::writeScratch(planFile, data, size);
  std::string json = manifest.dump();
  fuzz::writeScratch("engine.json", reinterpret_cast<const uint8_t *>(
                                        json.data()),
                     json.size());

  std::unique_ptr<RankEngine> engine;
  if (!RankEngine::load(fuzz::scratchDir(), rank, engine).isOk())
    return 0;
  if (s.tp != 1)
    return 0;
  std::unique_ptr<Session> session;
  if (!Session::create(*engine, nullptr, SessionOptions(), session).isOk())
    return 0;
  std::vector<std::vector<uint8_t>> inputs;
  for (const TensorSpec &in : engine->manifest().inputs) {
    inputs.emplace_back(in.desc.bytes(), 0);
    if (!session->setInput(in.name, in.desc, inputs.back().data()).isOk())
      return 0;
  }
  (void)session->run();
  return 0;
}
