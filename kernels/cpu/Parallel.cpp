//===- Parallel.cpp - Per-caller worker threads ---------------------------===//
//
// A forward alternates parallel products with short serial steps (norms,
// splits, transposes: tens of microseconds). Waking a sleeping thread costs
// about as much on a virtual machine, so a worker spins for a while after
// each job before it sleeps, and the caller spins for its workers to
// finish before it sleeps; a job published while a worker spins starts
// without a system call. Spinning is bounded in time, so threads that
// share cores with other ranks still yield them.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tpc::cpu {
namespace {

/// How long a worker waits for the next job, and the caller for its
/// workers, before sleeping.
constexpr std::chrono::microseconds kSpin(100);

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

/// Spins until `done()` or kSpin has passed; returns done().
template <class Done> bool spinUntil(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (done())
      return true;
    cpuRelax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= deadline)
      return done();
  }
}

/// Workers 1..n-1 of one calling thread. A job is published with a new
/// generation number; each worker runs its part (or nothing, past the
/// job's parts) once per generation and reports, and the caller waits until
/// every worker has: so no worker can still be reading a job when the
/// caller publishes the next.
class Pool {
public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i)
      threads_.emplace_back([this, i] { loop(i + 1); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread &t : threads_)
      t.join();
  }
  int workers() const { return int(threads_.size()); }

  void run(int parts, const std::function<void(int, int)> &fn) {
    job_ = &fn;
    parts_ = parts;
    pending_.store(workers(), std::memory_order_relaxed);
    {
      // Under the mutex, so that a worker about to sleep sees the new
      // generation or is woken.
      std::lock_guard<std::mutex> lock(mu_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    fn(0, parts);
    auto finished = [this] {
      return pending_.load(std::memory_order_acquire) == 0;
    };
    if (!spinUntil(finished)) {
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, finished);
    }
    job_ = nullptr;
  }

private:
  void loop(int index) {
    uint64_t seen = 0;
    for (;;) {
      auto published = [&] {
        return stop_.load(std::memory_order_acquire) ||
               generation_.load(std::memory_order_acquire) != seen;
      };
      if (!spinUntil(published)) {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, published);
      }
      if (stop_.load(std::memory_order_acquire))
        return;
      seen = generation_.load(std::memory_order_acquire);
      if (index < parts_)
        (*job_)(index, parts_);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu_);
        done_.notify_one();
      }
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  // Written by the caller before the generation is published (release) and
  // read by workers after they see it (acquire).
  const std::function<void(int, int)> *job_ = nullptr;
  int parts_ = 0;
  std::atomic<int> pending_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
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

void parallelFor(int numThreads, int64_t n, int64_t bytesPerItem,
                 const std::function<void(int64_t, int64_t)> &fn) {
  if (n <= 0)
    return;
  const int64_t total = n * std::max<int64_t>(bytesPerItem, 1);
  const int64_t byWork = std::max<int64_t>(1, total / kParallelMinBytes);
  const int threads =
      int(std::min<int64_t>({int64_t(std::max(numThreads, 1)), byWork, n}));
  if (threads <= 1) {
    fn(0, n);
    return;
  }
  parallelRun(threads, [&](int t, int parts) {
    int64_t begin, end;
    splitRange(n, t, parts, 1, begin, end);
    if (begin < end)
      fn(begin, end);
  });
}

} // namespace tpc::cpu
