//===- LocalEngine.cpp - Every rank of an engine in one process -----------===//
#include "runtime/engine/LocalEngine.h"

#include <mutex>
#include <thread>

namespace tpc::runtime {

Status LocalEngine::load(const std::string &dir,
                         const LocalEngineOptions &options,
                         std::unique_ptr<LocalEngine> &out) {
  out.reset();
  std::unique_ptr<LocalEngine> e(new LocalEngine());
  TPC_RETURN_IF_ERROR(EngineManifest::load(dir, e->manifest_));
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
  std::mutex mu;
  Status first, firstLocal;
  bool haveFirst = false, haveLocal = false;
  auto body = [&](int r) {
    Status st = fn(r);
    if (st)
      return;
    // A failure outside a Session (or one a Session did not report to its
    // peers) must still release them.
    group_.abort(st.message());
    std::lock_guard<std::mutex> lock(mu);
    if (!haveFirst) {
      first = st;
      haveFirst = true;
    }
    if (!haveLocal &&
        session(r).lastFailureOrigin() == Session::FailureOrigin::Local) {
      firstLocal = st;
      haveLocal = true;
    }
  };
  std::vector<std::thread> threads;
  for (int r = 1; r < tp(); ++r)
    threads.emplace_back(body, r);
  body(0);
  for (std::thread &t : threads)
    t.join();
  if (haveLocal)
    return firstLocal;
  return first;
}

} // namespace tpc::runtime
