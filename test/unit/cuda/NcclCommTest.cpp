//===- NcclCommTest.cpp - The NCCL group on the GPUs of this machine ------===//
//
// A group over every visible GPU (one is enough): collectives inside a
// round, checked exactly, and a call that NCCL rejects inside a round, which
// must fail the round and abort the group without touching freed
// communicators at ncclGroupEnd. And a rank whose peer never joins: the
// initialisation must end at the timeout with ncclCommAbort, not hang.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#ifdef TPC_HAVE_NCCL
#include "runtime/comm/NcclComm.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdlib>
#include <memory>

namespace tpc::cuda::test {
namespace {

// NCCL checks buffer pointers only when asked, and reads the variable once
// per process: set it before the first communicator, so that a null buffer
// is refused whatever the number of ranks (with one rank NCCL otherwise
// accepts it as a no-op copy).
[[maybe_unused]] const bool kCheckPointers = [] {
  setenv("NCCL_CHECK_POINTERS", "1", /*overwrite=*/0);
  return true;
}();

struct LocalGroup {
  std::vector<int> devices;
  std::vector<cudaStream_t> streams;
  std::unique_ptr<NcclGroup> group;

  Status create() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1)
      return Status::error("no device");
    for (int d = 0; d < n; ++d) {
      devices.push_back(d);
      cudaStream_t s = nullptr;
      (void)cudaSetDevice(d);
      if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        return Status::error("stream");
      streams.push_back(s);
    }
    NcclOptions o;
    o.timeout = std::chrono::milliseconds(20000);
    return NcclGroup::createLocal(devices, streams, o, group);
  }
  ~LocalGroup() {
    group.reset();
    for (size_t i = 0; i < streams.size(); ++i) {
      (void)cudaSetDevice(devices[i]);
      (void)cudaStreamDestroy(streams[i]);
    }
  }
};

TEST(NcclGroup, AllReduceInARound) {
  TPC_REQUIRE_GPU();
  LocalGroup g;
  Status st = g.create();
  ASSERT_TRUE(st.isOk()) << st.message();
  const int n = g.group->localRanks();
  const size_t count = 4097;
  std::vector<float *> bufs(n);
  std::vector<float> host(count);
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(cudaSetDevice(g.devices[r]), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&bufs[r], count * 4), cudaSuccess);
    for (size_t i = 0; i < count; ++i)
      host[i] = float(int(i % 7) - 3 + r);
    ASSERT_EQ(cudaMemcpy(bufs[r], host.data(), count * 4,
                         cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  ASSERT_TRUE(g.group->beginRound().isOk());
  for (int r = 0; r < n && st; ++r) {
    (void)cudaSetDevice(g.devices[r]);
    st = g.group->comm(r).allReduce(bufs[r], bufs[r], count, DType::F32);
  }
  Status end = g.group->endRound();
  ASSERT_TRUE(st.isOk()) << st.message();
  ASSERT_TRUE(end.isOk()) << end.message();
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(cudaSetDevice(g.devices[r]), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(g.streams[r]), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(host.data(), bufs[r], count * 4,
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (size_t i = 0; i < count; i += 131) {
      float want = 0;
      for (int q = 0; q < n; ++q)
        want += float(int(i % 7) - 3 + q);
      ASSERT_EQ(host[i], want) << "rank " << r << " [" << i << "]";
    }
    (void)cudaFree(bufs[r]);
  }
  EXPECT_TRUE(g.group->poll().isOk());
}

TEST(NcclGroup, RejectedCallInARoundAbortsAfterTheRound) {
  TPC_REQUIRE_GPU();
  LocalGroup g;
  Status st = g.create();
  ASSERT_TRUE(st.isOk()) << st.message();
  ASSERT_TRUE(g.group->beginRound().isOk());
  // Null buffers: NCCL refuses the call (ncclInvalidArgument).
  (void)cudaSetDevice(g.devices[0]);
  st = g.group->comm(0).allReduce(nullptr, nullptr, 16, DType::F32);
  Status end = g.group->endRound();
  EXPECT_FALSE(st.isOk() && end.isOk())
      << "a null-buffer all-reduce was accepted";
  EXPECT_TRUE(g.group->aborted());
  EXPECT_FALSE(g.group->poll().isOk());
  EXPECT_FALSE(g.group->beginRound().isOk());
}

TEST(NcclGroup, JoinWhosePeerNeverComesTimesOut) {
  TPC_REQUIRE_GPU();
  std::vector<uint8_t> id;
  Status st = NcclGroup::newUniqueId(id);
  ASSERT_TRUE(st.isOk()) << st.message();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            cudaSuccess);
  NcclOptions o;
  o.timeout = std::chrono::milliseconds(3000);
  std::unique_ptr<NcclGroup> group;
  // Rank 0 of 2; rank 1 is never started.
  auto t0 = std::chrono::steady_clock::now();
  st = NcclGroup::createRank(id, 2, 0, 0, stream, o, group);
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_FALSE(st.isOk()) << "rank 0 of 2 joined without its peer";
  EXPECT_EQ(group, nullptr);
  EXPECT_NE(st.message().find("3000 ms"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("rank 0"), std::string::npos) << st.message();
  EXPECT_GE(secs, 2.5);
  EXPECT_LT(secs, 20.0) << "the timeout did not bound the initialisation";
  (void)cudaStreamDestroy(stream);
}

} // namespace
} // namespace tpc::cuda::test
#endif // TPC_HAVE_NCCL
