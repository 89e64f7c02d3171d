//===- HashingWriter.cpp --------------------------------------------------===//
#include "runtime/support/HashingWriter.h"
#include "runtime/support/Sha256.h"

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace tpc {

/// The hashing thread and the two buffers. One buffer is the caller's to
/// fill; the other is being hashed, or free.
struct HashingWriter::Worker {
  std::vector<uint8_t> buffers[2];
  int filling = 0;
  Sha256 hash;

  std::mutex mu;
  std::condition_variable cv;
  bool busy = false;
  bool stop = false;
  /// The job: hash `jobBytes` at `jobData`.
  const uint8_t *jobData = nullptr;
  size_t jobBytes = 0;
  std::thread thread;

  void run() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return busy || stop; });
      if (!busy)
        return;
      const uint8_t *data = jobData;
      size_t n = jobBytes;
      lock.unlock();
      hash.update(data, n);
      lock.lock();
      busy = false;
      cv.notify_all();
    }
  }

  /// Waits until the hash of the last job is done.
  void idle() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return !busy; });
  }

  /// Waits for the last job, then hands over the next.
  void post(const uint8_t *data, size_t n) {
    idle();
    if (!thread.joinable())
      thread = std::thread([this] { run(); });
    {
      std::lock_guard<std::mutex> lock(mu);
      jobData = data;
      jobBytes = n;
      busy = true;
    }
    cv.notify_all();
  }
};

HashingWriter::HashingWriter(Sink sink, uint64_t offset, size_t bufferBytes)
    : sink_(std::move(sink)), worker_(std::make_unique<Worker>()), end_(offset) {
  size_t n = bufferBytes ? bufferBytes : 1;
  worker_->buffers[0].resize(n);
  worker_->buffers[1].resize(n);
}

HashingWriter::~HashingWriter() {
  if (worker_->thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(worker_->mu);
      worker_->stop = true;
    }
    worker_->cv.notify_all();
    worker_->thread.join();
  }
}

Status HashingWriter::submit() {
  Worker &w = *worker_;
  // Written here while the thread may still hash the other buffer; then
  // hashed there while this thread fills the other buffer.
  const uint8_t *buf = w.buffers[w.filling].data();
  TPC_RETURN_IF_ERROR(sink_(end_ - fill_, buf, fill_));
  w.post(buf, fill_);
  w.filling ^= 1;
  fill_ = 0;
  return Status::ok();
}

Status HashingWriter::append(const void *data, size_t size) {
  Worker &w = *worker_;
  const uint8_t *p = static_cast<const uint8_t *>(data);
  const size_t cap = w.buffers[0].size();
  while (size > 0) {
    uint8_t *cur = w.buffers[w.filling].data();
    size_t n = std::min(size, cap - fill_);
    std::memcpy(cur + fill_, p, n);
    fill_ += n;
    end_ += n;
    p += n;
    size -= n;
    if (fill_ == cap)
      TPC_RETURN_IF_ERROR(submit());
  }
  return Status::ok();
}

Status HashingWriter::flush() {
  if (fill_ > 0)
    TPC_RETURN_IF_ERROR(submit());
  worker_->idle();
  return Status::ok();
}

std::string HashingWriter::finishHex() { return worker_->hash.finishHex(); }

} // namespace tpc
