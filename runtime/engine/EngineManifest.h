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
#include "runtime/format/SymExpr.h"
#include "runtime/support/UniqueFd.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tpc::runtime {

/// An engine folder held open while its files are read. Files are opened
/// through the folder's descriptor (/proc/self/fd/N/FILE), so a compile that
/// swaps a new engine into the same path meanwhile cannot make a reader mix
/// the two; and a shared lock (flock) on the folder tells that compile to
/// wait before it deletes the old engine, until release().
class EngineFolder {
public:
  /// Opens and share-locks `dir`, the folder that is at that path once the
  /// lock is held (a folder swapped away meanwhile is let go, and the new
  /// one taken).
  static Status open(const std::string &dir,
                     std::shared_ptr<EngineFolder> &out);

  /// A path that names `file` in this folder, whatever is at its old path.
  std::string pathOf(const std::string &file) const;
  /// Drops the lock once every file has been opened (mappings stay valid
  /// after the files are deleted). Idempotent.
  void release();

  EngineFolder(const EngineFolder &) = delete;
  EngineFolder &operator=(const EngineFolder &) = delete;

private:
  EngineFolder() = default;
  UniqueFd fd_;
  bool locked_ = false;
};

/// The engine format version this runtime reads; newer engines are refused.
constexpr int kEngineFormatVersion = 1;

/// A graph input or output as engine.json declares it.
struct TensorSpec {
  std::string name;
  /// With run-time dimensions, the shape at the symbols' maxima.
  TensorDesc desc;
  /// Run-time dimensions: each dimension as an expression of the engine's
  /// symbols ("1", "sequence"); empty for a static shape.
  std::vector<std::string> dims;

  /// "i64[1x16]", or "i64[1 x sequence]" with run-time dimensions.
  std::string str() const;
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

/// What the inputs of a decode engine (tpc compile --kv-cache) mean:
/// engine.json's "generation" object.
struct GenerationSpec {
  /// Positions each rank's KV caches hold: prompt plus generated tokens.
  int64_t kvCacheLength = 0;
  int64_t batch = 1;
  int64_t vocab = 0;
  std::string idsInput;
  /// Where this step's entries go in the caches (one int64).
  std::string positionInput;
  std::string logitsOutput;
  /// Optional: the attention mask [batch, kvCacheLength] and the position
  /// ids [batch, 1]; empty when the model takes none.
  std::string maskInput;
  std::string positionsInput;
  /// The most tokens one forward takes: 1 for an engine of one token per
  /// step; with a run-time count of new tokens (compiled with
  /// --input-shape input_ids=1x1..N), N, so that a prompt of up to N
  /// tokens is prefilled in one forward.
  int64_t maxNewTokens = 1;
};

struct EngineManifest {
  /// The engine folder the manifest was read from.
  std::string dir;
  /// That folder, open and share-locked by load() (null after parse()):
  /// the rank files are read through it. Shared by copies of the manifest.
  std::shared_ptr<EngineFolder> folder;
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
  /// Run-time dimensions (engine.json's "symbols"; the plans hold the
  /// expressions): empty for static shapes.
  std::vector<PlanSymbol> symbols;
  /// A decode engine's "generation" object; kvCacheLength 0 when absent.
  GenerationSpec generation;
  /// SHA-256 of the engine.json text, as 64 hex digits: it names every rank
  /// file by digest, so two processes with the same id run the same
  /// compile. Ranks of an MPI job compare ids before they run.
  std::string engineId;

  /// Reads and validates DIR/engine.json. With `holdFolder`, the folder's
  /// shared lock is kept until releaseFolder(), for a caller that goes on to
  /// open the rank files; otherwise it is dropped before returning.
  static Status load(const std::string &dir, EngineManifest &out,
                     bool holdFolder = false);
  /// Validates engine.json text; `dir` is recorded, not read.
  static Status parse(const std::string &text, const std::string &dir,
                      EngineManifest &out);

  /// A path of FILE in the engine folder: through `folder` when it is
  /// open, DIR/FILE otherwise.
  std::string pathOf(const std::string &file) const;
  /// Lets a compile replace the folder now that its files are open (see
  /// EngineFolder::release). Loaders call it when they are done.
  void releaseFolder() const {
    if (folder)
      folder->release();
  }
  const TensorSpec *findInput(const std::string &name) const;
  const TensorSpec *findOutput(const std::string &name) const;
};

/// Calls manifest.releaseFolder() when it goes out of scope: what a loader
/// holds while it opens the rank files.
class FolderRelease {
public:
  explicit FolderRelease(const EngineManifest &manifest) : m_(manifest) {}
  ~FolderRelease() { m_.releaseFolder(); }
  FolderRelease(const FolderRelease &) = delete;
  FolderRelease &operator=(const FolderRelease &) = delete;

private:
  const EngineManifest &m_;
};

/// Checks that DIR/record.file exists with the recorded size and, when
/// `checkDigest` is set, the recorded SHA-256. Messages start with the file
/// name: "rank1.safetensors: sha256 mismatch (engine.json says ..., file has
/// ...)".
Status verifyFile(const EngineManifest &manifest, const FileRecord &record,
                  bool checkDigest = true);

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_ENGINEMANIFEST_H
