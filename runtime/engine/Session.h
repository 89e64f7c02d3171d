//===- Session.h - Running one rank's forward -------------------*- C++ -*-===//
//
// A Session runs the plan of one RankEngine: it copies the graph inputs into
// the arena, executes the steps in order (kernels on this thread's CPU,
// collectives through the communicator) and copies the graph outputs out.
// The tensor-parallel ranks of an engine each run a Session; they meet in the
// collectives.
//
// A failing rank aborts the communicator before returning its error, so that
// peers waiting in a collective fail promptly instead of waiting for it.
// After that, the communicator (and so a Session of a multi-rank engine)
// cannot run again.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_ENGINE_SESSION_H
#define TPC_RUNTIME_ENGINE_SESSION_H

#include "runtime/comm/Communicator.h"
#include "runtime/engine/GraphIo.h"
#include "runtime/engine/RankEngine.h"

#include <memory>
#include <string>
#include <vector>

namespace tpc::runtime {

struct SessionOptions {
  /// Threads each kernel may use.
  int numThreads = 1;
  /// Time every step of every run (stepTimes()); two clock reads a step.
  bool profile = false;
};

/// When a step of the last run started and how long it took, in
/// microseconds of the steady clock (one timeline for every rank of a
/// process).
struct StepTime {
  double startMicros = 0;
  double micros = 0;
  /// For a collective: the part of `micros` spent waiting for the slowest
  /// peer to arrive (a profiled run puts a barrier before each collective
  /// and times it), the rest being the transfer itself.
  double waitMicros = 0;
};

class Session {
public:
  /// Binds a session to `engine` (which must outlive it and may run only one
  /// session at a time: the arena is the engine's). `comm` must be a
  /// communicator of the engine's world size whose rank is the engine's rank;
  /// it may be null for an engine with tp 1.
  static Status create(RankEngine &engine, Communicator *comm,
                       const SessionOptions &options,
                       std::unique_ptr<Session> &out);

  /// Sets graph input `name` to `desc`-shaped data at `data`, which must stay
  /// valid until run() returns. The description must match the engine's.
  Status setInput(const std::string &name, const TensorDesc &desc,
                  const void *data);

  /// Runs one forward. Every input must be set. Errors name the rank, the
  /// step and its kernel.
  Status run();

  /// Graph output `name` of the last successful run(); nullptr data if it
  /// has not run. Returns false if there is no such output.
  bool output(const std::string &name, TensorDesc &desc,
              const void *&data) const {
    return io_.output(name, desc, data);
  }
  /// Names of the graph outputs, in engine.json order.
  std::vector<std::string> outputNames() const { return io_.outputNames(); }

  /// Where the last failed run() failed: in this rank (a missing input, a
  /// kernel) or in a collective (which includes a peer's abort). When ranks
  /// fail together, the local failure is the cause.
  enum class FailureOrigin { None, Local, Collective };
  FailureOrigin lastFailureOrigin() const { return lastFailure_; }

  /// Wall time of the last run(), in milliseconds (steady clock).
  double lastRunMillis() const { return lastRunMillis_; }
  /// With SessionOptions::profile, one entry per plan step of the last
  /// successful run(); empty otherwise.
  const std::vector<StepTime> &stepTimes() const { return stepTimes_; }
  RankEngine &engine() const { return engine_; }
  Communicator *communicator() const { return comm_; }

private:
  Session(RankEngine &engine, Communicator *comm, const SessionOptions &opts)
      : engine_(engine), comm_(comm), options_(opts) {}
  Status runStep(size_t index);
  Status fail(const Status &st, FailureOrigin origin);

  RankEngine &engine_;
  Communicator *comm_;
  SessionOptions options_;
  GraphIo io_;
  FailureOrigin lastFailure_ = FailureOrigin::None;
  double lastRunMillis_ = 0;
  std::vector<StepTime> stepTimes_;
  /// Scratch memory of the collective steps (PreparedCollective::run).
  AlignedBuffer scratch_;
};

} // namespace tpc::runtime

#endif // TPC_RUNTIME_ENGINE_SESSION_H
