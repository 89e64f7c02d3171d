//===- LocalEngine.cpp - Every rank of an engine in one process -----------===//
#include "runtime/engine/LocalEngine.h"

#include <condition_variable>
#include <mutex>
#include <numeric>
#include <thread>

namespace tpc::runtime {

Status LocalEngine::load(const std::string &dir,
                         const LocalEngineOptions &options,
                         std::unique_ptr<LocalEngine> &out) {
  out.reset();
  std::unique_ptr<LocalEngine> e(new LocalEngine());
  e->options_ = options;
  TPC_RETURN_IF_ERROR(
      EngineManifest::load(dir, e->manifest_, /*holdFolder=*/true));
  // Every rank file is open once the ranks are loaded.
  FolderRelease release(e->manifest_);
  const int tp = e->manifest_.tp;
  std::vector<int> ranks(static_cast<size_t>(tp));
  std::iota(ranks.begin(), ranks.end(), 0);
  std::vector<std::unique_ptr<RankEngine>> engines;
  TPC_RETURN_IF_ERROR(
      RankEngine::loadRanks(e->manifest_, ranks, RankEngineOptions(), engines));
  e->ranks_.resize(size_t(tp));
  for (int r = 0; r < tp; ++r)
    e->ranks_[size_t(r)].engine = std::move(engines[size_t(r)]);

  InProcessOptions commOptions;
  commOptions.timeout = options.commTimeout;
  TPC_RETURN_IF_ERROR(InProcessGroup::create(tp, e->group_, commOptions));
  for (int r = 0; r < tp; ++r) {
    Rank &rank = e->ranks_[size_t(r)];
    rank.comm = e->group_.take(r);
    TPC_RETURN_IF_ERROR(Session::create(*rank.engine,
                                        tp > 1 ? rank.comm.get() : nullptr,
                                        options, rank.session));
  }
  out = std::move(e);
  return Status::ok();
}

Status LocalEngine::setInput(const std::string &name, const TensorDesc &desc,
                             const void *data) {
  // Every rank checks against the same engine.json description; report the
  // first rank's message only.
  for (Rank &r : ranks_)
    TPC_RETURN_IF_ERROR(r.session->setInput(name, desc, data));
  return Status::ok();
}

Status LocalEngine::run() {
  return forEachRank([this](int r) { return session(r).run(); });
}

struct LocalEngine::Workers {
  std::mutex mu;
  /// Signals a new job (or stop) to the rank threads.
  std::condition_variable wake;
  /// Signals forEachRank that a rank finished its part.
  std::condition_variable done;
  /// Bumped for every job; a thread runs each generation once.
  uint64_t generation = 0;
  bool stop = false;
  std::function<Status(int)> fn;
  int running = 0;
  std::vector<bool> finished;
  Status first, firstLocal;
  bool haveFirst = false, haveLocal = false;
  std::vector<std::thread> threads;
};

LocalEngine::~LocalEngine() {
  if (!workers_)
    return;
  {
    std::lock_guard<std::mutex> lock(workers_->mu);
    workers_->stop = true;
  }
  workers_->wake.notify_all();
  for (std::thread &t : workers_->threads)
    if (t.joinable())
      t.join();
}

void LocalEngine::startWorkers() {
  workers_ = std::make_shared<Workers>();
  for (int r = 0; r < tp(); ++r)
    workers_->threads.emplace_back([this, w = workers_, r] {
      uint64_t seen = 0;
      while (true) {
        std::function<Status(int)> fn;
        {
          std::unique_lock<std::mutex> lock(w->mu);
          w->wake.wait(lock, [&] { return w->stop || w->generation != seen; });
          if (w->stop)
            return;
          seen = w->generation;
          fn = w->fn;
        }
        Status st = fn(r);
        if (!st)
          // A failure outside a Session (or one a Session did not report to
          // its peers) must still release them.
          group_.abort(st.message());
        std::lock_guard<std::mutex> lock(w->mu);
        if (!st && !w->haveFirst) {
          w->first = st;
          w->haveFirst = true;
        }
        if (!st && !w->haveLocal &&
            session(r).lastFailureOrigin() == Session::FailureOrigin::Local) {
          w->firstLocal = st;
          w->haveLocal = true;
        }
        w->finished[size_t(r)] = true;
        --w->running;
        w->done.notify_all();
      }
    });
}

Status LocalEngine::forEachRank(const std::function<Status(int)> &fn) {
  if (abandoned_)
    return Status::failedPrecondition("the engine cannot run again: a rank "
                                      "of an earlier run never stopped");
  // A lone rank has no peers to abort it and nothing to wait for: it runs
  // here.
  if (tp() == 1) {
    Status st = fn(0);
    if (!st)
      group_.abort(st.message());
    return st;
  }
  // Every rank on a thread of its own, so that this one can stop waiting
  // for a stuck rank, whichever it is.
  if (!workers_)
    startWorkers();
  Workers &w = *workers_;
  std::unique_lock<std::mutex> lock(w.mu);
  w.fn = fn;
  w.running = tp();
  w.finished.assign(size_t(tp()), false);
  w.first = w.firstLocal = Status::ok();
  w.haveFirst = w.haveLocal = false;
  ++w.generation;
  w.wake.notify_all();
  // Healthy ranks run as long as they need. Once the group is aborted, every
  // rank must stop within the grace period: one that does not is stuck
  // outside any collective and is left behind.
  while (w.running > 0) {
    if (!w.haveFirst) {
      w.done.wait(lock);
      continue;
    }
    if (!w.done.wait_for(lock, options_.stopGrace,
                         [&] { return w.running == 0; }))
      break;
  }
  if (w.running > 0) {
    std::string stuck;
    for (int r = 0; r < tp(); ++r)
      if (!w.finished[size_t(r)])
        stuck += (stuck.empty() ? "" : ", ") + std::to_string(r);
    abandoned_ = true;
    Status cause = w.haveLocal ? w.firstLocal : w.first;
    // The threads keep the shared state alive; none is joined again.
    for (std::thread &t : w.threads)
      t.detach();
    return Status::error(
        cause.message() + "; rank(s) " + stuck + " did not stop within " +
        std::to_string(options_.stopGrace.count()) +
        " ms of the abort and were left running (the process must exit)");
  }
  Status result = w.haveLocal ? w.firstLocal : w.first;
  w.fn = nullptr;
  return result;
}

} // namespace tpc::runtime
