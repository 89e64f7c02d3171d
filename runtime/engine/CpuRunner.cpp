//===- CpuRunner.cpp - Engines on the CPU behind EngineRunner -------------===//
#include "runtime/engine/CpuRunner.h"

#include <algorithm>

namespace tpc::runtime {

namespace {

/// Every rank of the engine in this process, on threads of their own.
class LocalCpuRunner final : public EngineRunner {
public:
  LocalCpuRunner(std::unique_ptr<LocalEngine> engine, bool alignStarts,
                 bool profile)
      : engine_(std::move(engine)), alignStarts_(alignStarts),
        profile_(profile) {}
  ~LocalCpuRunner() override {
    // A stuck rank's thread may still use the engine: it must outlive it.
    if (engine_->abandoned())
      (void)engine_.release();
  }

  int tp() const override { return engine_->tp(); }
  Status setInput(const std::string &name, const TensorDesc &desc,
                  const void *data) override {
    return engine_->setInput(name, desc, data);
  }
  Status run() override {
    // forEachRank refuses an engine a stuck rank left behind.
    const bool barrier = alignStarts_ && tp() > 1;
    return engine_->forEachRank([&](int r) -> Status {
      if (barrier)
        TPC_RETURN_IF_ERROR(engine_->communicator(r)->barrier().withContext(
            "rank " + std::to_string(r) + ": "));
      return engine_->session(r).run();
    });
  }
  Status resetState() override {
    for (int r = 0; r < tp(); ++r)
      engine_->rankEngine(r).resetState();
    return Status::ok();
  }
  double lastRunMillis() const override {
    // A forward takes as long as its slowest rank.
    double slowest = 0;
    for (int r = 0; r < tp(); ++r)
      slowest = std::max(slowest, engine_->session(r).lastRunMillis());
    return slowest;
  }
  bool output(const std::string &name, TensorDesc &desc,
              const void *&data) const override {
    return engine_->session(0).output(name, desc, data);
  }
  std::vector<std::string> outputNames() const override {
    return engine_->session(0).outputNames();
  }
  std::vector<RankStepTimes> lastStepTimes() const override {
    std::vector<RankStepTimes> out;
    if (profile_)
      for (int r = 0; r < tp(); ++r)
        out.push_back({r, &engine_->rankEngine(r).plan(),
                       &engine_->session(r).stepTimes()});
    return out;
  }
  bool abandoned() const override { return engine_->abandoned(); }
  std::string describe() const override {
    return "CPU, " + std::to_string(tp()) +
           " rank(s) on threads of this process";
  }

private:
  std::unique_ptr<LocalEngine> engine_;
  bool alignStarts_;
  bool profile_;
};

/// One rank of the engine; its peers are other processes.
class RankCpuRunner final : public EngineRunner {
public:
  RankCpuRunner(std::unique_ptr<RankEngine> engine, Communicator &comm,
                bool alignStarts, bool profile)
      : engine_(std::move(engine)), comm_(comm), alignStarts_(alignStarts),
        profile_(profile) {}
  Status init(const SessionOptions &options) {
    return Session::create(*engine_, &comm_, options, session_);
  }

  int tp() const override { return comm_.size(); }
  Status setInput(const std::string &name, const TensorDesc &desc,
                  const void *data) override {
    return session_->setInput(name, desc, data);
  }
  Status run() override {
    if (alignStarts_ && comm_.size() > 1)
      TPC_RETURN_IF_ERROR(comm_.barrier().withContext(
          "rank " + std::to_string(comm_.rank()) + ": "));
    return session_->run();
  }
  Status resetState() override {
    engine_->resetState();
    return Status::ok();
  }
  double lastRunMillis() const override { return session_->lastRunMillis(); }
  bool output(const std::string &name, TensorDesc &desc,
              const void *&data) const override {
    return session_->output(name, desc, data);
  }
  std::vector<std::string> outputNames() const override {
    return session_->outputNames();
  }
  std::vector<RankStepTimes> lastStepTimes() const override {
    if (!profile_)
      return {};
    return {{comm_.rank(), &engine_->plan(), &session_->stepTimes()}};
  }
  std::string describe() const override {
    return "CPU, rank " + std::to_string(comm_.rank()) + " of " +
           std::to_string(comm_.size()) + " in this process";
  }

private:
  std::unique_ptr<RankEngine> engine_;
  Communicator &comm_;
  bool alignStarts_;
  bool profile_;
  std::unique_ptr<Session> session_;
};

} // namespace

Status createCpuRunner(const std::string &dir, const CpuRunOptions &options,
                       std::unique_ptr<EngineRunner> &out) {
  out.reset();
  std::unique_ptr<LocalEngine> engine;
  TPC_RETURN_IF_ERROR(LocalEngine::load(dir, options, engine));
  out = std::make_unique<LocalCpuRunner>(std::move(engine), options.alignStarts,
                                         options.profile);
  return Status::ok();
}

Status createCpuRankRunner(const EngineManifest &manifest, Communicator &comm,
                           const CpuRunOptions &options,
                           std::unique_ptr<EngineRunner> &out) {
  out.reset();
  if (comm.size() != manifest.tp)
    return Status::invalidArgument(
        "the communicator has " + std::to_string(comm.size()) +
        " rank(s), but the engine has tp " + std::to_string(manifest.tp));
  std::unique_ptr<RankEngine> engine;
  TPC_RETURN_IF_ERROR(RankEngine::load(manifest, comm.rank(), engine));
  auto runner = std::make_unique<RankCpuRunner>(
      std::move(engine), comm, options.alignStarts, options.profile);
  TPC_RETURN_IF_ERROR(runner->init(options));
  out = std::move(runner);
  return Status::ok();
}

} // namespace tpc::runtime
