//===- MpiCommTest.cpp - Run under mpirun with several ranks --------------===//
//
// Every rank runs every test in the same order, so the collectives inside
// them line up across processes. Only rank 0 prints progress; other ranks
// print failures only.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/MpiComm.h"
#include "test/unit/runtime/CommTestUtil.h"
#include "test/unit/runtime/StatusAssert.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace tpc;
using namespace tpc::test;

namespace {

std::unique_ptr<MpiCommunicator> makeComm(bool validate = false) {
  MpiOptions options;
  options.validateCalls = validate;
  std::unique_ptr<MpiCommunicator> comm;
  Status st = MpiCommunicator::createWorld(comm, options);
  EXPECT_OK(st);
  return comm;
}

const DType kReducible[] = {DType::F32, DType::F64, DType::I64,
                            DType::I32, DType::F16, DType::BF16};

} // namespace

TEST(MpiComm, AllReduce) {
  auto c = makeComm();
  const int n = c->size();
  for (DType t : kReducible)
    for (size_t count : kCounts)
      for (bool inPlace : {false, true}) {
        std::vector<uint8_t> send = makeContribution(t, c->rank(), count);
        std::vector<uint8_t> recv =
            inPlace ? send : std::vector<uint8_t>(send.size(), 0xcd);
        ASSERT_OK(c->allReduce(inPlace ? recv.data() : send.data(), recv.data(),
                               count, t));
        EXPECT_EQ(firstDifference(recv, expectedSum(t, n, count)), -1)
            << dtypeName(t) << " count " << count << " in place " << inPlace;
      }
}

TEST(MpiComm, AllGatherAndAllGatherV) {
  auto c = makeComm();
  const int n = c->size();
  for (DType t : {DType::F32, DType::F64, DType::I64, DType::F16, DType::BF16,
                  DType::U8, DType::F8E4M3FN, DType::I4})
    for (size_t count : kCounts) {
      if (count > 1000)
        count /= size_t(n);
      size_t elem = dtypeSize(t);
      std::vector<uint8_t> expected;
      for (int r = 0; r < n; ++r) {
        std::vector<uint8_t> part = makeContribution(t, r, count);
        expected.insert(expected.end(), part.begin(), part.end());
      }
      for (bool inPlace : {false, true}) {
        std::vector<uint8_t> send = makeContribution(t, c->rank(), count);
        std::vector<uint8_t> recv(expected.size(), 0xcd);
        const void *src = send.data();
        if (inPlace) {
          std::copy(send.begin(), send.end(),
                    recv.begin() + ptrdiff_t(size_t(c->rank()) * count * elem));
          src = recv.data() + size_t(c->rank()) * count * elem;
        }
        ASSERT_OK(c->allGather(src, recv.data(), count, t));
        EXPECT_EQ(firstDifference(recv, expected), -1)
            << dtypeName(t) << " count " << count;
      }
    }

  // Uneven shards: 172 over n ranks.
  std::vector<size_t> counts;
  for (int r = 0; r < n; ++r)
    counts.push_back(172 / size_t(n) + (size_t(r) < 172 % size_t(n)));
  size_t before = 0;
  for (int r = 0; r < c->rank(); ++r)
    before += counts[size_t(r)];
  for (bool inPlace : {false, true}) {
    std::vector<uint8_t> send = makeContribution(
        DType::F32, c->rank(), counts[size_t(c->rank())], before);
    std::vector<uint8_t> recv(172 * 4, 0xcd);
    const void *src = send.data();
    if (inPlace) {
      std::copy(send.begin(), send.end(), recv.begin() + ptrdiff_t(before * 4));
      src = recv.data() + before * 4;
    }
    ASSERT_OK(c->allGatherV(src, recv.data(), counts, DType::F32));
    std::vector<uint8_t> expected;
    size_t offset = 0;
    for (int r = 0; r < n; ++r) {
      std::vector<uint8_t> part =
          makeContribution(DType::F32, r, counts[size_t(r)], offset);
      expected.insert(expected.end(), part.begin(), part.end());
      offset += counts[size_t(r)];
    }
    EXPECT_EQ(firstDifference(recv, expected), -1);
  }
}

TEST(MpiComm, ReduceScatter) {
  auto c = makeComm();
  const int n = c->size();
  for (DType t : kReducible)
    for (size_t count : kCounts) {
      if (count > 1000)
        count /= size_t(n);
      size_t elem = dtypeSize(t);
      std::vector<uint8_t> expected =
          expectedSum(t, n, count, size_t(c->rank()) * count);
      for (bool inPlace : {false, true}) {
        std::vector<uint8_t> send =
            makeContribution(t, c->rank(), size_t(n) * count);
        std::vector<uint8_t> out(count * elem, 0xcd);
        uint8_t *dst = inPlace ? send.data() + size_t(c->rank()) * count * elem
                               : out.data();
        ASSERT_OK(c->reduceScatter(send.data(), dst, count, t));
        EXPECT_EQ(firstDifference(std::vector<uint8_t>(dst, dst + count * elem),
                                  expected),
                  -1)
            << dtypeName(t) << " count " << count << " in place " << inPlace;
      }
    }
}

TEST(MpiComm, Barrier) {
  auto c = makeComm();
  for (int i = 0; i < 10; ++i)
    ASSERT_OK(c->barrier());
}

TEST(MpiComm, HalfSumsAreIdenticalOnEveryRank) {
  auto c = makeComm();
  std::vector<uint16_t> v(4096);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = floatToHalf(float(i % 97) * 0.37f + float(c->rank()) * 0.011f);
  ASSERT_OK(c->allReduce(v.data(), v.data(), v.size(), DType::F16));
  // Rank 0's result, broadcast through an all-gather, must equal ours.
  std::vector<uint16_t> all(v.size() * size_t(c->size()));
  ASSERT_OK(c->allGather(v.data(), all.data(), v.size(), DType::F16));
  for (int r = 0; r < c->size(); ++r)
    EXPECT_EQ(
        std::memcmp(all.data() + size_t(r) * v.size(), v.data(), v.size() * 2),
        0)
        << "rank " << r << " got different bits";
}

TEST(MpiComm, ValidationCatchesMismatches) {
  auto c = makeComm(/*validate=*/true);
  std::vector<float> buf(300, 1.0f);
  // Matching calls pass through validation unharmed.
  ASSERT_OK(c->allReduce(buf.data(), buf.data(), 10, DType::F32));
  EXPECT_EQ(buf[0], float(c->size()));

  size_t count = c->rank() == 0 ? 100 : 200;
  Status st = c->allReduce(buf.data(), buf.data(), count, DType::F32);
  if (c->size() > 1) {
    EXPECT_EQ(contains(st, "mismatched collectives: rank 0 "
                           "allReduce(count=100, f32), rank 1 "
                           "allReduce(count=200, f32)"),
              "");
  }
  st = c->rank() == 0
           ? c->barrier()
           : c->allGather(buf.data(), buf.data() + 150, 1, DType::F32);
  if (c->size() > 1)
    EXPECT_EQ(contains(st, "rank 1 allGather(count=1, f32)"), "");

  // Invalid arguments on one rank fail the call on all ranks.
  st = c->allReduce(buf.data(), buf.data(), 4,
                    c->rank() == 0 ? DType::Bool : DType::F32);
  EXPECT_EQ(contains(st, "rank 0 allReduce(count=4, bool) with invalid "
                         "arguments"),
            "");
  if (c->rank() == 0)
    EXPECT_EQ(contains(st, "cannot sum-reduce bool"), "");
  // Same call everywhere, invalid on rank 0 only (null buffer).
  st = c->allReduce(c->rank() == 0 ? nullptr : buf.data(), buf.data(), 4,
                    DType::F32);
  if (c->rank() == 0)
    EXPECT_EQ(contains(st, "invalid arguments: null buffer"), "");
  else
    EXPECT_EQ(contains(st, "another rank passed invalid arguments"), "");

  // The communicator still works afterwards.
  ASSERT_OK(c->barrier());
}

TEST(MpiComm, LocalErrorsWithoutValidation) {
  auto c = makeComm();
  int8_t x = 0;
  EXPECT_EQ(
      contains(c->allReduce(&x, &x, 1, DType::I8), "cannot sum-reduce i8"), "");
  float buf[4] = {};
  EXPECT_EQ(contains(c->allReduce(buf, buf + 1, 2, DType::F32), "overlap"), "");
  if (c->size() > 1)
    EXPECT_EQ(contains(c->allGatherV(buf, buf, {1}, DType::F32),
                       "counts has 1 entries"),
              "");
}

int main(int argc, char **argv) {
  Status st = initMpi(&argc, &argv);
  if (!st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Set before InitGoogleTest, which picks the result printer.
  if (rank != 0)
    GTEST_FLAG_SET(brief, true);
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  // Every rank must agree on the outcome; report the worst.
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  (void)finalizeMpi();
  return worst;
}
