//===- LocalEngine.h - Every rank of an engine in one process ---*- C++ -*-===//
//
// Runs a tensor-parallel engine on one host without MPI: every rank is
// loaded in this process, gets a communicator of one InProcessGroup and its
// own Session, and the ranks run concurrently on threads of their own. The
// rank threads live as long as the engine, so that what a rank keeps per
// thread (its kernel thread pool, its GEMM packing buffers) is made once,
// not once per forward.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_LOCALENGINE_H
#define TPC_RUNTIME_ENGINE_LOCALENGINE_H

#include "runtime/comm/InProcessComm.h"
#include "runtime/engine/Session.h"

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

namespace tpc::runtime {

/// Every rank's Session options (numThreads: kernel threads per rank), and
/// what the ranks share.
struct LocalEngineOptions : SessionOptions {
  /// How long a rank waits for its peers in a collective before the group
  /// is aborted.
  std::chrono::milliseconds commTimeout{60000};
  /// After a rank fails (and the group is aborted), how long the other
  /// ranks get to stop. A rank still running then is stuck outside any
  /// collective (in a kernel); it is left behind, and abandoned() says so.
  std::chrono::milliseconds stopGrace{5000};
};

class LocalEngine {
public:
  ~LocalEngine();
  LocalEngine(const LocalEngine &) = delete;
  LocalEngine &operator=(const LocalEngine &) = delete;

  /// Loads every rank of the engine in `dir`.
  static Status load(const std::string &dir, const LocalEngineOptions &options,
                     std::unique_ptr<LocalEngine> &out);

  int tp() const { return int(ranks_.size()); }
  const EngineManifest &manifest() const { return manifest_; }
  RankEngine &rankEngine(int rank) const { return *ranks_[size_t(rank)].engine; }
  Session &session(int rank) const { return *ranks_[size_t(rank)].session; }
  Communicator *communicator(int rank) const {
    return ranks_[size_t(rank)].comm.get();
  }

  /// Sets graph input `name` on every rank (each rank reads the whole
  /// input).
  Status setInput(const std::string &name, const TensorDesc &desc,
                  const void *data);

  /// Runs one forward on every rank concurrently. On failure returns the
  /// error of the rank that caused it (see forEachRank).
  Status run();

  /// Calls `fn(rank)` for every rank, each on its own thread (the same
  /// thread for a rank every time; a lone rank runs on the caller's), and
  /// waits for all. A rank whose `fn` fails aborts the group so that no peer
  /// waits for it. Returns the failure of a rank that failed by itself, in
  /// preference to the collective failures it caused on its peers.
  Status forEachRank(const std::function<Status(int rank)> &fn);

  /// Whether a forEachRank() left a stuck rank's thread running. Its engine
  /// may still be in use: the caller must neither run nor destroy this
  /// LocalEngine again, and should end the process (`tpc run` exits at
  /// once; the Python API keeps the engine alive forever).
  bool abandoned() const { return abandoned_; }

private:
  struct Rank {
    std::unique_ptr<RankEngine> engine;
    std::unique_ptr<Communicator> comm;
    std::unique_ptr<Session> session;
  };
  /// The rank threads and what they share with forEachRank; owned by the
  /// threads too, so that a stuck one can be left behind.
  struct Workers;
  LocalEngine() = default;
  void startWorkers();

  EngineManifest manifest_;
  LocalEngineOptions options_;
  bool abandoned_ = false;
  InProcessGroup group_;
  std::vector<Rank> ranks_;
  std::shared_ptr<Workers> workers_;
};

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_LOCALENGINE_H
