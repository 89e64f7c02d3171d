//===- LocalEngine.cpp - Every rank of an engine in one process -----------===//
#include "runtime/engine/LocalEngine.h"

#include <condition_variable>
#include <mutex>
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
  e->ranks_.resize(size_t(tp));

  // Loading hashes every file and maps the weights: do the ranks in
  // parallel. The lowest failing rank is reported.
  std::vector<Status> loaded(static_cast<size_t>(tp));
  std::vector<std::thread> threads;
  for (int r = 1; r < tp; ++r)
    threads.emplace_back([&, r] {
      loaded[size_t(r)] =
          RankEngine::load(e->manifest_, r, e->ranks_[size_t(r)].engine);
    });
  loaded[0] = RankEngine::load(e->manifest_, 0, e->ranks_[0].engine);
  for (std::thread &t : threads)
    t.join();
  for (const Status &st : loaded)
    TPC_RETURN_IF_ERROR(st);

  InProcessOptions commOptions;
  commOptions.timeout = options.commTimeout;
  TPC_RETURN_IF_ERROR(InProcessGroup::create(tp, e->group_, commOptions));
  SessionOptions sessionOptions;
  sessionOptions.numThreads = options.threadsPerRank;
  sessionOptions.profile = options.profile;
  for (int r = 0; r < tp; ++r) {
    Rank &rank = e->ranks_[size_t(r)];
    rank.comm = e->group_.take(r);
    TPC_RETURN_IF_ERROR(Session::create(*rank.engine,
                                        tp > 1 ? rank.comm.get() : nullptr,
                                        sessionOptions, rank.session));
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

Status LocalEngine::forEachRank(const std::function<Status(int)> &fn) {
  // What the rank threads share lives on the heap and is owned by every
  // thread, so that a thread that never returns (a rank stuck in a kernel)
  // can be left behind without touching this frame.
  struct Shared {
    std::mutex mu;
    std::condition_variable done;
    int running = 0;
    std::vector<bool> finished;
    Status first, firstLocal;
    bool haveFirst = false, haveLocal = false;
    std::function<Status(int)> fn;
  };
  auto shared = std::make_shared<Shared>();
  shared->fn = fn;
  shared->running = tp();
  shared->finished.assign(size_t(tp()), false);
  auto body = [this, shared](int r) {
    Status st = shared->fn(r);
    if (!st)
      // A failure outside a Session (or one a Session did not report to its
      // peers) must still release them.
      group_.abort(st.message());
    std::lock_guard<std::mutex> lock(shared->mu);
    if (!st && !shared->haveFirst) {
      shared->first = st;
      shared->haveFirst = true;
    }
    if (!st && !shared->haveLocal &&
        session(r).lastFailureOrigin() == Session::FailureOrigin::Local) {
      shared->firstLocal = st;
      shared->haveLocal = true;
    }
    shared->finished[size_t(r)] = true;
    --shared->running;
    shared->done.notify_all();
  };
  // Every rank on a thread of its own, so that this one can stop waiting
  // for a stuck rank, whichever it is. A lone rank has no peers to abort
  // it: it runs here.
  std::vector<std::thread> threads;
  if (tp() == 1)
    body(0);
  else
    for (int r = 0; r < tp(); ++r)
      threads.emplace_back(body, r);

  std::unique_lock<std::mutex> lock(shared->mu);
  // Healthy ranks run as long as they need. Once the group is aborted, every
  // rank must stop within the grace period: one that does not is stuck
  // outside any collective and is left behind.
  while (shared->running > 0) {
    if (!shared->haveFirst) {
      shared->done.wait(lock);
      continue;
    }
    if (!shared->done.wait_for(lock, options_.stopGrace,
                               [&] { return shared->running == 0; }))
      break;
  }
  if (shared->running > 0) {
    std::string stuck;
    for (int r = 0; r < tp(); ++r)
      if (!shared->finished[size_t(r)])
        stuck += (stuck.empty() ? "" : ", ") + std::to_string(r);
    abandoned_ = true;
    Status cause = shared->haveLocal ? shared->firstLocal : shared->first;
    lock.unlock();
    for (std::thread &t : threads)
      t.detach();
    return Status::error(
        cause.message() + "; rank(s) " + stuck + " did not stop within " +
        std::to_string(options_.stopGrace.count()) +
        " ms of the abort and were left running (the process must exit)");
  }
  lock.unlock();
  for (std::thread &t : threads)
    t.join();
  if (shared->haveLocal)
    return shared->firstLocal;
  return shared->first;
}

} // namespace tpc::runtime
