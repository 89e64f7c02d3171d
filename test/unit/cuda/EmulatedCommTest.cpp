//===- EmulatedCommTest.cpp - The on-device communicator of --emulate-ranks ===//
//
// Collectives of 2, 3 and 4 emulated ranks on one GPU, checked bit-exactly
// (nccl-tests style: inputs are small integers, so every sum is exact in
// every dtype), in and out of place, captured into a CUDA graph, and the
// errors a round can end with (ranks that disagree or do not call).
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include "runtime/cuda/EmulatedComm.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <utility>

namespace tpc::cuda::test {
namespace {

using cpu::test::makeTensor;

/// Host value of element i on rank r: a small integer unique to (r, i).
double value(int r, size_t i) { return double(int((r * 7 + i * 3) % 11) - 5); }

/// Device buffers of one rank, freed on destruction.
struct Buffers {
  std::vector<void *> ptrs;
  ~Buffers() {
    for (void *p : ptrs)
      (void)cudaFree(p);
  }
  void *alloc(size_t bytes) {
    void *p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, bytes ? bytes : 1), cudaSuccess);
    EXPECT_EQ(cudaMemset(p, 0xFF, bytes ? bytes : 1), cudaSuccess);
    ptrs.push_back(p);
    return p;
  }
};

void upload(void *dst, const Tensor &t) {
  ASSERT_EQ(cudaMemcpy(dst, t.data(), t.bytes.size(), cudaMemcpyHostToDevice),
            cudaSuccess);
}

Tensor download(const void *src, DType t, size_t count) {
  Tensor h(t, {int64_t(count)});
  EXPECT_EQ(cudaMemcpy(h.data(), src, h.bytes.size(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  return h;
}

Tensor rankInput(int r, DType t, size_t count) {
  std::vector<double> v;
  for (size_t i = 0; i < count; ++i)
    v.push_back(value(r, i));
  return makeTensor(t, {int64_t(count)}, v);
}

struct Group {
  cudaStream_t stream = nullptr;
  std::unique_ptr<EmulatedGroup> group;
  explicit Group(int n) {
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
              cudaSuccess);
    Status st = EmulatedGroup::create(n, stream, group);
    EXPECT_TRUE(st.isOk()) << st.message();
  }
  ~Group() {
    group.reset();
    if (stream)
      (void)cudaStreamDestroy(stream);
  }
  /// One round in which rank r calls f(r, comm).
  template <class F> Status round(F &&f) {
    TPC_RETURN_IF_ERROR(group->beginRound());
    Status st;
    for (int r = 0; r < group->localRanks() && st; ++r)
      st = f(r, group->comm(r));
    Status end = group->endRound();
    return st ? end : st;
  }
  /// One round as above, then the stream drained; fails on an error of
  /// either.
  template <class F> ::testing::AssertionResult roundAndSync(F &&f) {
    Status st = round(std::forward<F>(f));
    if (!st.isOk())
      return ::testing::AssertionFailure() << st.message();
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess)
      return ::testing::AssertionFailure()
             << "cudaStreamSynchronize: " << cudaGetErrorString(e);
    return ::testing::AssertionSuccess();
  }
};

class EmulatedComm : public ::testing::TestWithParam<int> {};

TEST_P(EmulatedComm, AllReduceEveryDType) {
  TPC_REQUIRE_GPU();
  const int n = GetParam();
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32,
                  DType::I64})
    for (bool inPlace : {false, true}) {
      SCOPED_TRACE(std::string(dtypeName(t)) + (inPlace ? " in place" : ""));
      const size_t count = 1037;
      Group g(n);
      Buffers b;
      std::vector<void *> send(n), recv(n);
      for (int r = 0; r < n; ++r) {
        send[r] = b.alloc(count * dtypeSize(t));
        recv[r] = inPlace ? send[r] : b.alloc(count * dtypeSize(t));
        upload(send[r], rankInput(r, t, count));
      }
      ASSERT_TRUE(g.roundAndSync([&](int r, Communicator &c) {
        return c.allReduce(send[r], recv[r], count, t);
      }));
      for (int r = 0; r < n; ++r) {
        Tensor got = download(recv[r], t, count);
        for (size_t i = 0; i < count; ++i) {
          double want = 0;
          for (int q = 0; q < n; ++q)
            want += value(q, i);
          ASSERT_EQ(got.at(int64_t(i)), want) << "rank " << r << " [" << i
                                              << "]";
        }
      }
    }
}

TEST_P(EmulatedComm, AllGatherAndReduceScatter) {
  TPC_REQUIRE_GPU();
  const int n = GetParam();
  const DType t = DType::F32;
  const size_t count = 333, es = dtypeSize(t);
  for (bool inPlace : {false, true}) {
    SCOPED_TRACE(inPlace ? "in place" : "out of place");
    Group g(n);
    Buffers b;
    std::vector<void *> full(n), shard(n);
    for (int r = 0; r < n; ++r) {
      full[r] = b.alloc(n * count * es);
      shard[r] = inPlace ? static_cast<char *>(full[r]) + r * count * es
                         : b.alloc(count * es);
      upload(shard[r], rankInput(r, t, count));
    }
    ASSERT_TRUE(g.roundAndSync([&](int r, Communicator &c) {
      return c.allGather(shard[r], full[r], count, t);
    }));
    for (int r = 0; r < n; ++r) {
      Tensor got = download(full[r], t, n * count);
      for (int q = 0; q < n; ++q)
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(got.at(int64_t(q * count + i)), value(q, i))
              << "rank " << r << " block " << q;
    }
    // Reduce-scatter the gathered tensors back: rank r gets n * block r.
    ASSERT_TRUE(g.roundAndSync([&](int r, Communicator &c) {
      return c.reduceScatter(full[r], shard[r], count, t);
    }));
    for (int r = 0; r < n; ++r) {
      Tensor got = download(shard[r], t, count);
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(got.at(int64_t(i)), n * value(r, i)) << "rank " << r;
    }
  }
}

TEST_P(EmulatedComm, AllGatherVUnequalShards) {
  TPC_REQUIRE_GPU();
  const int n = GetParam();
  const DType t = DType::F16;
  std::vector<size_t> counts;
  size_t total = 0;
  for (int r = 0; r < n; ++r) {
    counts.push_back(size_t(5 + 3 * r));
    total += counts.back();
  }
  Group g(n);
  Buffers b;
  std::vector<void *> send(n), recv(n);
  for (int r = 0; r < n; ++r) {
    send[r] = b.alloc(counts[r] * 2);
    recv[r] = b.alloc(total * 2);
    upload(send[r], rankInput(r, t, counts[r]));
  }
  ASSERT_TRUE(g.roundAndSync([&](int r, Communicator &c) {
    return c.allGatherV(send[r], recv[r], counts, t);
  }));
  for (int r = 0; r < n; ++r) {
    Tensor got = download(recv[r], t, total);
    size_t off = 0;
    for (int q = 0; q < n; ++q) {
      for (size_t i = 0; i < counts[q]; ++i)
        ASSERT_EQ(got.at(int64_t(off + i)), value(q, i)) << "rank " << r;
      off += counts[q];
    }
  }
}

TEST_P(EmulatedComm, CapturesIntoAGraph) {
  TPC_REQUIRE_GPU();
  const int n = GetParam();
  const size_t count = 4099;
  Group g(n);
  Buffers b;
  std::vector<void *> buf(n);
  for (int r = 0; r < n; ++r) {
    buf[r] = b.alloc(count * 4);
    upload(buf[r], rankInput(r, DType::I32, count));
  }
  ASSERT_EQ(cudaStreamBeginCapture(g.stream, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  Status st = g.round([&](int r, Communicator &c) {
    return c.allReduce(buf[r], buf[r], count, DType::I32);
  });
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(g.stream, &graph), cudaSuccess);
  ASSERT_TRUE(st.isOk()) << st.message();
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  // Two replays: every element is multiplied by n twice.
  ASSERT_EQ(cudaGraphLaunch(exec, g.stream), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, g.stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(g.stream), cudaSuccess);
  for (int r = 0; r < n; ++r) {
    Tensor got = download(buf[r], DType::I32, count);
    for (size_t i = 0; i < count; i += 97) {
      double once = 0;
      for (int q = 0; q < n; ++q)
        once += value(q, i);
      ASSERT_EQ(got.at(int64_t(i)), once * n) << "rank " << r;
    }
  }
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
}

TEST_P(EmulatedComm, DisagreeingRanksFailTheRound) {
  TPC_REQUIRE_GPU();
  const int n = GetParam();
  Group g(n);
  Buffers b;
  void *p = b.alloc(64 * 4);
  Status st = g.round([&](int r, Communicator &c) {
    return c.allReduce(p, p, r == n - 1 ? 32 : 64, DType::F32);
  });
  EXPECT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("disagree"), std::string::npos) << st.message();
  // The group is aborted: later rounds fail at once.
  EXPECT_FALSE(g.group->poll().isOk());
  EXPECT_FALSE(g.group->beginRound().isOk());

  Group h(n);
  st = h.round([&](int r, Communicator &c) -> Status {
    if (r == 0)
      return Status::ok(); // rank 0 makes no call
    return c.allReduce(p, p, 64, DType::F32);
  });
  EXPECT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("rank 0 made no collective call"),
            std::string::npos)
      << st.message();
}

INSTANTIATE_TEST_SUITE_P(Ranks, EmulatedComm, ::testing::Values(2, 3, 4),
                         [](const ::testing::TestParamInfo<int> &info) {
                           return "tp" + std::to_string(info.param);
                         });

} // namespace
} // namespace tpc::cuda::test
