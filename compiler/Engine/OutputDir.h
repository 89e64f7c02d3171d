//===- OutputDir.h - The engine folder a compile writes ---------*- C++ -*-===//
//
// A compile writes into a hidden sibling of its target and moves it into
// place at the end, so a target is either the old engine or the new one,
// never a mix, and a failed or interrupted compile leaves nothing. The only
// folders ever replaced are empty ones and engines tpc wrote (engine.json
// says "tpc-engine" and the folder holds nothing it does not list); the only
// ones ever removed are the target, its own temporary sibling and those of
// compiles that died.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_COMPILER_ENGINE_OUTPUTDIR_H
#define TPC_COMPILER_ENGINE_OUTPUTDIR_H

#include <filesystem>
#include <string>
#include <vector>

namespace tpc {

class OutputDir {
public:
  /// Resolves `-o` (relative, `.`, `..`, trailing slashes), refuses what
  /// must not be replaced, removes leftovers of dead compiles into the same
  /// target (each one a line in `notes`) and creates the temporary folder,
  /// which SIGINT and SIGTERM then remove before the process ends with the
  /// signal's status. False with `error` set on failure.
  bool prepare(const std::string &outDir, std::string &error,
               std::vector<std::string> &notes);
  /// Moves the finished temporary folder into place: an existing engine is
  /// exchanged atomically (readers see the old or the new one) and removed
  /// afterwards.
  bool commit(std::string &error);
  /// Removes the temporary folder unless committed.
  ~OutputDir();

  const std::filesystem::path &temp() const { return tempPath; }
  const std::filesystem::path &target() const { return targetPath; }

private:
  std::filesystem::path targetPath, tempPath;
  bool committed = false;
};

} // namespace tpc

#endif
