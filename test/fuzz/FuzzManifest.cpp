//===- FuzzManifest.cpp - libFuzzer harness: engine.json ------------------===//
//
// Input: the text of an engine.json. Parsing must accept it or return an
// error; an accepted manifest must be self-consistent.

#include "runtime/engine/EngineManifest.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  tpc::runtime::EngineManifest manifest;
  if (!tpc::runtime::EngineManifest::parse(text, "fuzz-engine", manifest)
           .isOk())
    return 0;
  if (manifest.tp < 1 || manifest.ranks.size() != size_t(manifest.tp))
    std::abort();
  for (size_t r = 0; r < manifest.ranks.size(); ++r)
    if (manifest.ranks[r].rank != int(r))
      std::abort();
  return 0;
}
