//===- Parallel.cpp - Per-caller worker threads ---------------------------===//
#include "kernels/cpu/Parallel.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tpc::cpu {
namespace {

/// Workers 1..n-1 of one calling thread. A job is published under the
/// mutex with a new generation number; each worker runs its part once per
/// generation and the caller waits until all have reported.
class Pool {
public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i)
      threads_.emplace_back([this, i] { loop(i + 1); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread &t : threads_)
      t.join();
  }
  int workers() const { return int(threads_.size()); }

  void run(int parts, const std::function<void(int, int)> &fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &fn;
      parts_ = parts;
      pending_ = parts - 1;
      ++generation_;
    }
    wake_.notify_all();
    fn(0, parts);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
  }

private:
  void loop(int index) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
      if (index >= parts_)
        continue;
      const std::function<void(int, int)> *job = job_;
      const int parts = parts_;
      lock.unlock();
      (*job)(index, parts);
      lock.lock();
      if (--pending_ == 0)
        done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int, int)> *job_ = nullptr;
  int parts_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

} // namespace

void parallelRun(int numThreads, const std::function<void(int, int)> &fn) {
  if (numThreads <= 1) {
    fn(0, 1);
    return;
  }
  thread_local std::unique_ptr<Pool> pool;
  if (!pool || pool->workers() < numThreads - 1)
    pool = std::make_unique<Pool>(numThreads - 1);
  pool->run(numThreads, fn);
}

} // namespace tpc::cpu
