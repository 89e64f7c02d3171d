//===- comm_bench.cpp - Collective bandwidth of tpc's communicators -------===//
//
// The nccl-tests measurements for tpc's CPU communicators: for each size,
// the median time of allReduce, allGather and reduceScatter over f32
// buffers, their algorithm bandwidth (bytes / time, bytes being the full
// tensor) and bus bandwidth, which corrects for what each collective must
// move per rank and so compares across rank counts: x 2(n-1)/n for
// all-reduce, x (n-1)/n for all-gather and reduce-scatter. Each result is
// checked exactly (integer-valued floats) before it is timed.
//
//   tpc_comm_bench [--ranks N] [--min-bytes B] [--max-bytes B] [--iters I]
//       in-process: N ranks as threads of this process (default 2)
//   mpirun -np N tpc_comm_bench --mpi [...]
//       one rank per process over MPI
//
// Prints one JSON object (from rank 0).
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/InProcessComm.h"
#ifdef TPC_HAVE_MPI
#include "runtime/comm/MpiComm.h"
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace tpc;

namespace {

struct Options {
  int ranks = 2;
  bool mpi = false;
  size_t minBytes = 1024;
  size_t maxBytes = size_t(64) << 20;
  int iters = 0;
};

struct Row {
  const char *op;
  size_t bytes;
  double us, algbw, busbw;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Runs the sweep on one rank; rank 0 collects the rows. Returns "" or the
/// first error.
std::string sweep(Communicator &comm, const Options &o, std::vector<Row> &rows) {
  const int n = comm.size(), r = comm.rank();
  for (size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= 4) {
    const size_t count = std::max<size_t>(size_t(n), bytes / 4) / size_t(n) *
                         size_t(n);
    const size_t block = count / size_t(n);
    std::vector<float> send(count), recv(count);
    for (const char *op : {"all_reduce", "all_gather", "reduce_scatter"}) {
      const bool ar = !std::strcmp(op, "all_reduce");
      const bool ag = !std::strcmp(op, "all_gather");
      auto call = [&]() -> Status {
        if (ar)
          return comm.allReduce(send.data(), recv.data(), count, DType::F32);
        if (ag)
          return comm.allGather(send.data(), recv.data(), block, DType::F32);
        return comm.reduceScatter(send.data(), recv.data(), block,
                                  DType::F32);
      };
      // Integer values: sums are exact, so the check is bit for bit.
      for (size_t i = 0; i < count; ++i)
        send[i] = float((i % 251) + size_t(r) * 1000);
      if (Status st = call(); !st)
        return std::string(op) + ": " + st.message();
      const size_t checked = ar ? count : ag ? count : block;
      for (size_t i = 0; i < checked; ++i) {
        float want;
        if (ar)
          want = float(n * int(i % 251) + 1000 * n * (n - 1) / 2);
        else if (ag)
          want = float(((i % block) % 251) + (i / block) * 1000);
        else
          want = float(n * int((size_t(r) * block + i) % 251) +
                       1000 * n * (n - 1) / 2);
        if (recv[i] != want)
          return std::string(op) + " of " + std::to_string(bytes) +
                 " bytes: element " + std::to_string(i) + " is " +
                 std::to_string(recv[i]) + ", expected " +
                 std::to_string(want);
      }
      const int iters =
          o.iters > 0 ? o.iters
                      : int(std::clamp<size_t>((size_t(256) << 20) / bytes,
                                               5, 200));
      std::vector<double> times;
      for (int it = 0; it < iters + 2; ++it) {
        if (Status st = comm.barrier(); !st)
          return st.message();
        auto t0 = std::chrono::steady_clock::now();
        if (Status st = call(); !st)
          return std::string(op) + ": " + st.message();
        double us = std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
        if (it >= 2)
          times.push_back(us);
      }
      // Every rank's time matters: a collective ends when its slowest
      // rank does; take the maximum over ranks of the medians.
      const double us = median(times);
      std::vector<double> gathered(static_cast<size_t>(n));
      if (Status st = comm.allGather(&us, gathered.data(), 1, DType::F64); !st)
        return st.message();
      const double all = *std::max_element(gathered.begin(), gathered.end());
      const double total = double(count) * 4.0;
      const double algbw = total / all * 1e-3; // GB/s
      const double factor =
          ar ? 2.0 * (n - 1) / n : double(n - 1) / double(n);
      if (r == 0)
        rows.push_back({op, size_t(total), all, algbw, algbw * factor});
    }
  }
  return "";
}

void print(const Options &o, int n, const std::vector<Row> &rows) {
  std::printf("{\"communicator\": \"%s\", \"ranks\": %d, \"results\": [",
              o.mpi ? "mpi" : "inprocess", n);
  for (size_t i = 0; i < rows.size(); ++i)
    std::printf("%s\n  {\"op\": \"%s\", \"bytes\": %zu, \"time_us\": %.2f, "
                "\"algbw_gbps\": %.3f, \"busbw_gbps\": %.3f}",
                i ? "," : "", rows[i].op, rows[i].bytes, rows[i].us,
                rows[i].algbw, rows[i].busbw);
  std::printf("\n]}\n");
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    auto next = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tpc_comm_bench: %s needs a value\n", f.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (f == "--ranks")
      o.ranks = std::atoi(next());
    else if (f == "--mpi")
      o.mpi = true;
    else if (f == "--min-bytes")
      o.minBytes = size_t(std::atoll(next()));
    else if (f == "--max-bytes")
      o.maxBytes = size_t(std::atoll(next()));
    else if (f == "--iters")
      o.iters = std::atoi(next());
    else {
      std::fprintf(stderr, "tpc_comm_bench: unknown flag %s\n", f.c_str());
      return 2;
    }
  }
  std::vector<Row> rows;
  if (o.mpi) {
#ifdef TPC_HAVE_MPI
    if (Status st = initMpi(&argc, &argv); !st) {
      std::fprintf(stderr, "tpc_comm_bench: %s\n", st.message().c_str());
      return 1;
    }
    int n = 0;
    std::string err;
    {
      std::unique_ptr<MpiCommunicator> comm;
      if (Status st = MpiCommunicator::createWorld(comm); !st)
        err = st.message();
      else {
        n = comm->size();
        err = sweep(*comm, o, rows);
        if (err.empty() && comm->rank() == 0)
          print(o, n, rows);
      }
    }
    (void)finalizeMpi();
    if (!err.empty()) {
      std::fprintf(stderr, "tpc_comm_bench: %s\n", err.c_str());
      return 1;
    }
    return 0;
#else
    std::fprintf(stderr, "tpc_comm_bench: built without MPI\n");
    return 1;
#endif
  }
  InProcessGroup group;
  if (Status st = InProcessGroup::create(o.ranks, group); !st) {
    std::fprintf(stderr, "tpc_comm_bench: %s\n", st.message().c_str());
    return 1;
  }
  std::vector<std::string> errors(size_t(o.ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < o.ranks; ++r)
    threads.emplace_back([&, r, comm = group.take(r)]() mutable {
      std::vector<Row> mine;
      errors[size_t(r)] = sweep(*comm, o, mine);
      if (r == 0)
        rows = std::move(mine);
      if (!errors[size_t(r)].empty())
        comm->abort(errors[size_t(r)]);
    });
  for (std::thread &t : threads)
    t.join();
  for (const std::string &e : errors)
    if (!e.empty()) {
      std::fprintf(stderr, "tpc_comm_bench: %s\n", e.c_str());
      return 1;
    }
  print(o, o.ranks, rows);
  return 0;
}
