//===- EngineManifest.h - engine.json ---------------------------*- C++ -*-===//
//
// engine.json says what an engine folder holds: the format version, the
// tensor-parallel degree, the graph inputs and outputs, and for every rank the
// plan and weights files with their sizes and SHA-256 digests
// (docs/engine-format.md). Everything else the runtime loads is reached
// through it, so it is validated completely before any other file is read.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_ENGINEMANIFEST_H
#define TPC_RUNTIME_ENGINE_ENGINEMANIFEST_H

#include "kernels/Types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tpc::runtime {

/// The engine format version this runtime reads; newer engines are refused.
constexpr int kEngineFormatVersion = 1;

/// A graph input or output as engine.json declares it.
struct TensorSpec {
  std::string name;
  TensorDesc desc;
};

/// A file of the engine folder and what engine.json records about it.
struct FileRecord {
  /// A plain file name inside the engine folder.
  std::string file;
  uint64_t bytes = 0;
  /// 64 lower-case hex digits.
  std::string sha256;
};

struct RankRecord {
  int rank = 0;
  FileRecord plan;
  FileRecord weights;
};

struct EngineManifest {
  /// The engine folder the manifest was read from.
  std::string dir;
  int formatVersion = 0;
  std::string producerName;
  std::string producerVersion;
  int tp = 0;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  /// Indexed by rank: ranks[r].rank == r.
  std::vector<RankRecord> ranks;
  /// The "options" object as compact JSON text ("{}" when absent).
  std::string optionsJson;
  /// SHA-256 of the engine.json text, as 64 hex digits: it names every rank
  /// file by digest, so two processes with the same id run the same
  /// compile. Ranks of an MPI job compare ids before they run.
  std::string engineId;

  /// Reads and validates DIR/engine.json.
  static Status load(const std::string &dir, EngineManifest &out);
  /// Validates engine.json text; `dir` is recorded, not read.
  static Status parse(const std::string &text, const std::string &dir,
                      EngineManifest &out);

  /// DIR/FILE.
  std::string pathOf(const std::string &file) const;
  const TensorSpec *findInput(const std::string &name) const;
  const TensorSpec *findOutput(const std::string &name) const;
};

/// Checks that DIR/record.file exists with the recorded size and, when
/// `checkDigest` is set, the recorded SHA-256. Messages start with the file
/// name: "rank1.safetensors: sha256 mismatch (engine.json says ..., file has
/// ...)".
Status verifyFile(const EngineManifest &manifest, const FileRecord &record,
                  bool checkDigest = true);

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_ENGINEMANIFEST_H
