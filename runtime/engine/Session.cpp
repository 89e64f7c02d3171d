//===- Session.cpp - Running one rank's forward ---------------------------===//
#include "runtime/engine/Session.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>

namespace tpc::runtime {

Status Session::create(RankEngine &engine, Communicator *comm,
                       const SessionOptions &options,
                       std::unique_ptr<Session> &out) {
  out.reset();
  const int world = engine.worldSize();
  const std::string who = "rank " + std::to_string(engine.rank()) + ": ";
  if (options.numThreads < 1)
    return Status::error(who + "numThreads must be at least 1");
  if (!engine.hostExecutable())
    return Status::error(who + "the engine was loaded for another backend "
                               "(without host execution)");
  if (!comm && world > 1)
    return Status::error(who + "the engine has tp " + std::to_string(world) +
                         " and needs a communicator");
  if (comm && (comm->size() != world || comm->rank() != engine.rank()))
    return Status::error(who + "the communicator is rank " +
                         std::to_string(comm->rank()) + " of " +
                         std::to_string(comm->size()) +
                         ", but the engine is rank " +
                         std::to_string(engine.rank()) + " of " +
                         std::to_string(world));
  std::unique_ptr<Session> s(new Session(engine, comm, options));
  TPC_RETURN_IF_ERROR(s->io_.bind(engine, who));
  // The collectives' scratch, sized for this communicator: one that gathers
  // rows in place needs none for the blocks of an AllGather along a middle
  // axis (an LM head's logits, split by vocabulary).
  const bool rowsInPlace = comm && comm->gathersRowsInPlace();
  size_t scratchBytes = 0;
  for (const RankEngine::Step &step : engine.steps())
    scratchBytes =
        std::max(scratchBytes, step.collective.scratchBytes(rowsInPlace));
  TPC_RETURN_IF_ERROR(
      s->scratch_.allocate(scratchBytes, "collective scratch of rank " +
                                             std::to_string(engine.rank())));
  // Outputs are handed out where the forward leaves them (no copy per run),
  // except a state buffer's, which resetState() may zero before they are
  // read.
  for (GraphIo::Output &o : s->io_.outputs()) {
    const PlanBuffer &b = engine.plan().buffers[o.buffer];
    if (b.kind != BufferKind::State && o.desc.bytes()) {
      o.external = engine.bufferData(o.buffer);
      std::vector<uint8_t>().swap(o.data);
    }
  }
  out = std::move(s);
  return Status::ok();
}

Status Session::setInput(const std::string &name, const TensorDesc &desc,
                         const void *data) {
  return io_.setInput(name, desc, data);
}

Status Session::fail(const Status &st, FailureOrigin origin) {
  lastFailure_ = origin;
  // Peers may be waiting for this rank in a collective: make theirs fail
  // now rather than when the communicator times out.
  if (comm_ && comm_->size() > 1)
    comm_->abort(st.message());
  return st;
}

Status Session::run() {
  auto start = std::chrono::steady_clock::now();
  lastFailure_ = FailureOrigin::None;
  const std::string who = "rank " + std::to_string(engine_.rank()) + ": ";
  if (Status st = io_.checkInputsSet(); !st)
    return fail(st, FailureOrigin::Local);
  io_.beginRun();
  // Run-time dimensions: the inputs set them, and the steps that depend on
  // them are prepared for their values (or taken back from a run before).
  if (!engine_.plan().symbols.empty()) {
    SymbolValues values;
    Status st = io_.resolveSymbols(engine_.plan(), values);
    if (st)
      st = engine_.bindSymbols(values).withContext(who);
    if (!st)
      return fail(st, FailureOrigin::Local);
    io_.shapeOutputs(engine_.plan(), values);
  }
  for (const GraphIo::Input &in : io_.inputs())
    if (in.desc.bytes())
      std::memcpy(engine_.bufferData(in.buffer), in.data, in.desc.bytes());

  const size_t steps = engine_.steps().size();
  stepTimes_.assign(options_.profile ? steps : 0, StepTime());
  auto micros = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t.time_since_epoch())
        .count();
  };
  for (size_t i = 0; i < steps; ++i) {
    std::chrono::steady_clock::time_point t0, arrived;
    Status st = Status::ok();
    if (options_.profile) {
      t0 = std::chrono::steady_clock::now();
      // A collective's wait for its slowest peer, measured apart from its
      // transfer by a barrier first.
      if (!engine_.steps()[i].kernel && comm_ && comm_->size() > 1)
        st = comm_->barrier();
      arrived = std::chrono::steady_clock::now();
    }
    if (st)
      st = runStep(i);
    if (options_.profile) {
      auto t1 = std::chrono::steady_clock::now();
      stepTimes_[i] = {micros(t0), micros(t1) - micros(t0),
                       micros(arrived) - micros(t0)};
    }
    if (!st)
      return fail(st.withContext(who + engine_.plan().describeStep(i) + ": "),
                  engine_.steps()[i].kernel ? FailureOrigin::Local
                                            : FailureOrigin::Collective);
  }

  for (GraphIo::Output &o : io_.outputs())
    if (!o.data.empty())
      std::memcpy(o.data.data(), engine_.bufferData(o.buffer), o.data.size());
  io_.markRun();
  lastRunMillis_ = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  return Status::ok();
}

Status Session::runStep(size_t index) {
  RankEngine::Step &step = engine_.steps()[index];
  if (!step.kernel)
    return step.collective.run(comm_, step.inputs[0], step.outputs[0],
                               scratch_.data());
  try {
    cpu::ExecContext ctx;
    ctx.numThreads = options_.numThreads;
    step.kernel->run(step.inputs.data(), step.outputs.data(), ctx);
  } catch (const std::exception &ex) {
    return Status::error(std::string("kernel failed: ") + ex.what());
  }
  return step.kernel->runStatus();
}

} // namespace tpc::runtime
