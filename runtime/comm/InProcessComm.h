//===- InProcessComm.h - Ranks as threads of one process --------*- C++ -*-===//
//
// A communicator for N ranks that are threads of one process: tests, and
// tensor-parallel execution on a single host without MPI. Collectives work
// directly on the ranks' buffers through shared memory:
//
//  * all-reduce is a reduce-scatter (rank r sums chunk r of every rank's
//    input, in rank order) followed by an all-gather of the reduced chunks,
//    so every element is summed exactly once, by one rank, in a fixed order:
//    all ranks receive bit-identical results, run after run;
//  * ranks synchronise with a mutex and condition variable, never by
//    spinning; every wait has a deadline.
//
// Failures poison the whole group: abort() on any rank, a timeout, a call
// that does not match the other ranks' calls, or invalid arguments on any
// rank make the collective fail on every rank (with the same explanation)
// and every later collective fail immediately. Before a failing collective
// returns, it waits until no peer can still be reading or writing the
// caller's buffers.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_COMM_INPROCESSCOMM_H
#define TPC_RUNTIME_COMM_INPROCESSCOMM_H

#include "runtime/comm/Communicator.h"

#include <chrono>
#include <memory>

namespace tpc {

namespace detail {
class InProcessState;
} // namespace detail

struct InProcessOptions {
  /// How long a rank waits for its peers at any step of a collective. When
  /// it expires the group is aborted with a message naming the missing
  /// ranks.
  std::chrono::milliseconds timeout{60000};
};

/// The shared state of N in-process ranks; hands out one Communicator per
/// rank. Communicators keep the state alive, so the group object may be
/// destroyed before them. Destroying a rank's communicator aborts the group
/// (a rank that leaves early must not leave its peers waiting).
class InProcessGroup {
public:
  /// A group of `size` ranks; size must be at least 1.
  static Status create(int size, InProcessGroup &out,
                       const InProcessOptions &options = {});

  InProcessGroup() = default;

  int size() const;
  /// The communicator of `rank`; nullptr if `rank` is out of range or its
  /// communicator was already taken.
  std::unique_ptr<Communicator> take(int rank);
  /// Aborts the group from outside any rank (a watchdog, a signal handler
  /// thread).
  void abort(const std::string &reason);

private:
  std::shared_ptr<detail::InProcessState> state_;
};

} // namespace tpc

#endif // TPC_RUNTIME_COMM_INPROCESSCOMM_H
