//===- InProcessCommTest.cpp ----------------------------------------------===//
#include "runtime/comm/InProcessComm.h"
#include "test/unit/runtime/CommTestUtil.h"

#include "test/unit/runtime/StatusAssert.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <random>
#include <thread>

using namespace tpc;
using namespace tpc::test;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace tpc {
/// Lets GoogleTest print DType parameters by name.
void PrintTo(DType t, std::ostream *os) { *os << dtypeName(t); }
} // namespace tpc

namespace {

/// Runs `fn(comm)` on `n` threads, one per rank of a fresh group.
void runRanks(int n, const std::function<void(Communicator &)> &fn,
              InProcessOptions options = {}) {
  InProcessGroup group;
  ASSERT_OK(InProcessGroup::create(n, group, options));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&group, &fn, r] {
      std::unique_ptr<Communicator> comm = group.take(r);
      ASSERT_NE(comm, nullptr);
      fn(*comm);
    });
  for (std::thread &t : threads)
    t.join();
}

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

} // namespace

//===----------------------------------------------------------------------===//
// Exact results over rank counts x dtypes
//===----------------------------------------------------------------------===//

class CollectiveTest : public ::testing::TestWithParam<std::tuple<int, DType>> {
protected:
  /// The ranks, the dtype and its element size.
  const int n = std::get<0>(GetParam());
  const DType t = std::get<1>(GetParam());
  const size_t elem = dtypeSize(t);
};

TEST_P(CollectiveTest, AllReduce) {
  for (size_t count : kCounts) {
    std::vector<uint8_t> expected = expectedSum(t, n, count);
    for (bool inPlace : {false, true})
      runRanks(n, [&](Communicator &c) {
        std::vector<uint8_t> send = makeContribution(t, c.rank(), count);
        std::vector<uint8_t> recv =
            inPlace ? send : std::vector<uint8_t>(send.size(), 0xcd);
        const void *src = inPlace ? recv.data() : send.data();
        ASSERT_OK(c.allReduce(src, recv.data(), count, t));
        EXPECT_EQ(firstDifference(recv, expected), -1)
            << "rank " << c.rank() << " count " << count << " in place "
            << inPlace;
        if (!inPlace)
          EXPECT_EQ(send, makeContribution(t, c.rank(), count));
      });
  }
}

TEST_P(CollectiveTest, AllGather) {
  for (size_t count : kCounts) {
    // The largest size is that of the gathered tensor, not of each share.
    if (count > 1000)
      count /= size_t(n);
    std::vector<uint8_t> expected;
    for (int r = 0; r < n; ++r) {
      std::vector<uint8_t> part = makeContribution(t, r, count);
      expected.insert(expected.end(), part.begin(), part.end());
    }
    for (bool inPlace : {false, true})
      runRanks(n, [&](Communicator &c) {
        std::vector<uint8_t> send = makeContribution(t, c.rank(), count);
        std::vector<uint8_t> recv(size_t(n) * send.size(), 0xcd);
        const void *src = send.data();
        if (inPlace) {
          std::copy(send.begin(), send.end(),
                    recv.begin() + ptrdiff_t(size_t(c.rank()) * send.size()));
          src = recv.data() + size_t(c.rank()) * count * elem;
        }
        ASSERT_OK(c.allGather(src, recv.data(), count, t));
        EXPECT_EQ(firstDifference(recv, expected), -1)
            << "rank " << c.rank() << " count " << count;
      });
  }
}

TEST_P(CollectiveTest, AllGatherV) {
  // 172 split as evenly as possible, an uneven split with empty shards, and
  // a large one.
  std::vector<std::vector<size_t>> splits(3);
  for (int r = 0; r < n; ++r) {
    splits[0].push_back(172 / size_t(n) + (size_t(r) < 172 % size_t(n)));
    splits[1].push_back(r % 2 ? 0 : size_t(r) * 3 + 1);
    splits[2].push_back((size_t(1) << 20) / size_t(n) + size_t(r));
  }
  for (const std::vector<size_t> &counts : splits)
    for (bool inPlace : {false, true})
      runRanks(n, [&](Communicator &c) {
        size_t before = 0, total = 0;
        for (int r = 0; r < n; ++r) {
          if (r < c.rank())
            before += counts[size_t(r)];
          total += counts[size_t(r)];
        }
        size_t mine = counts[size_t(c.rank())];
        std::vector<uint8_t> send = makeContribution(t, c.rank(), mine, before);
        std::vector<uint8_t> recv(total * elem, 0xcd);
        const void *src = send.data();
        if (inPlace) {
          std::copy(send.begin(), send.end(),
                    recv.begin() + ptrdiff_t(before * elem));
          src = recv.data() + before * elem;
        }
        ASSERT_OK(c.allGatherV(src, recv.data(), counts, t));
        std::vector<uint8_t> expected;
        size_t offset = 0;
        for (int r = 0; r < n; ++r) {
          std::vector<uint8_t> part =
              makeContribution(t, r, counts[size_t(r)], offset);
          expected.insert(expected.end(), part.begin(), part.end());
          offset += counts[size_t(r)];
        }
        EXPECT_EQ(firstDifference(recv, expected), -1)
            << "rank " << c.rank() << " in place " << inPlace;
      });
}

// A tensor split along a middle axis: rank r holds `outer` rows of counts[r]
// elements and every rank receives the rows interleaved. Both the
// in-process form (each row copied from the peer's buffer) and the
// communicator's default (allGatherV into scratch, then interleave).
TEST_P(CollectiveTest, AllGatherRows) {
  struct Layout {
    size_t outer;
    std::vector<size_t> counts;
  };
  std::vector<Layout> layouts(4);
  for (int r = 0; r < n; ++r) {
    layouts[0].counts.push_back(1);                        // one column each
    layouts[1].counts.push_back(13 + size_t(r % 2));       // uneven
    layouts[2].counts.push_back(r % 2 ? 0 : size_t(r) + 2); // empty shards
    layouts[3].counts.push_back(4096 + size_t(r));         // large rows
  }
  layouts[0].outer = 7;
  layouts[1].outer = 128;
  layouts[2].outer = 3;
  layouts[3].outer = 16;
  for (const Layout &l : layouts)
    for (bool viaDefault : {false, true})
      runRanks(n, [&](Communicator &c) {
        size_t row = 0;
        for (size_t v : l.counts)
          row += v;
        const size_t mine = l.counts[size_t(c.rank())];
        std::vector<uint8_t> send = makeContribution(t, c.rank(), l.outer * mine);
        std::vector<uint8_t> recv(l.outer * row * elem, 0xcd);
        std::vector<uint8_t> scratch(l.outer * row * elem, 0xab);
        if (viaDefault)
          ASSERT_OK(c.Communicator::allGatherRows(send.data(), recv.data(),
                                                  l.outer, l.counts, t,
                                                  scratch.data()));
        else
          ASSERT_OK(c.allGatherRows(send.data(), recv.data(), l.outer,
                                    l.counts, t, scratch.data()));
        std::vector<uint8_t> expected;
        for (size_t o = 0; o < l.outer; ++o)
          for (int r = 0; r < n; ++r) {
            const size_t k = l.counts[size_t(r)];
            std::vector<uint8_t> part = makeContribution(t, r, l.outer * k);
            expected.insert(expected.end(),
                            part.begin() + ptrdiff_t(o * k * elem),
                            part.begin() + ptrdiff_t((o + 1) * k * elem));
          }
        EXPECT_EQ(firstDifference(recv, expected), -1)
            << "rank " << c.rank() << " outer " << l.outer << " default "
            << viaDefault;
      });
}

TEST_P(CollectiveTest, ReduceScatter) {
  for (size_t count : kCounts) {
    // The largest size is that of each rank's input, not of its share.
    if (count > 1000)
      count /= size_t(n);
    for (bool inPlace : {false, true})
      runRanks(n, [&](Communicator &c) {
        std::vector<uint8_t> send =
            makeContribution(t, c.rank(), size_t(n) * count);
        std::vector<uint8_t> original = send;
        std::vector<uint8_t> out(count * elem, 0xcd);
        void *dst = inPlace ? send.data() + size_t(c.rank()) * count * elem
                            : out.data();
        ASSERT_OK(c.reduceScatter(send.data(), dst, count, t));
        std::vector<uint8_t> got(static_cast<uint8_t *>(dst),
                                 static_cast<uint8_t *>(dst) + count * elem);
        EXPECT_EQ(firstDifference(
                      got, expectedSum(t, n, count, size_t(c.rank()) * count)),
                  -1)
            << "rank " << c.rank() << " count " << count;
        if (!inPlace)
          EXPECT_EQ(send, original);
      });
  }
}

std::string
paramName(const ::testing::TestParamInfo<std::tuple<int, DType>> &info) {
  return std::to_string(std::get<0>(info.param)) + "ranks_" +
         dtypeName(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    InProcessComm, CollectiveTest,
    ::testing::Combine(::testing::Values(1, 2, 3, 4, 8),
                       ::testing::Values(DType::F32, DType::F64, DType::I64,
                                         DType::I32, DType::F16, DType::BF16)),
    paramName);

//===----------------------------------------------------------------------===//
// Determinism, repetition, mixed sequences
//===----------------------------------------------------------------------===//

TEST(InProcessComm, NonIntegerSumsAreBitIdenticalAndInRankOrder) {
  const int n = 5;
  const size_t count = 10007;
  std::vector<std::vector<float>> inputs(n, std::vector<float>(count));
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
  for (auto &v : inputs)
    for (float &x : v)
      x = dist(rng);
  std::vector<float> expected(count);
  for (size_t i = 0; i < count; ++i) {
    float s = inputs[0][i];
    for (int r = 1; r < n; ++r)
      s += inputs[size_t(r)][i];
    expected[i] = s;
  }
  for (int repeat = 0; repeat < 3; ++repeat)
    runRanks(n, [&](Communicator &c) {
      std::vector<float> out(count);
      ASSERT_OK(c.allReduce(inputs[size_t(c.rank())].data(), out.data(), count,
                            DType::F32));
      EXPECT_EQ(std::memcmp(out.data(), expected.data(), count * 4), 0);
    });
}

TEST(InProcessComm, HalfAccumulatesInFloat) {
  // 2048 + 1 + 1 is 2050 in exact arithmetic; adding pairwise in f16 would
  // give 2048 twice (2049 is not representable and ties to even).
  runRanks(3, [&](Communicator &c) {
    uint16_t v = floatToHalf(c.rank() == 0 ? 2048.0f : 1.0f);
    ASSERT_OK(c.allReduce(&v, &v, 1, DType::F16));
    EXPECT_EQ(halfToFloat(v), 2050.0f);
  });
}

TEST(InProcessComm, ManyMixedCollectives) {
  const int n = 4;
  runRanks(n, [&](Communicator &c) {
    for (int iter = 0; iter < 500; ++iter) {
      size_t count = size_t(iter % 13);
      switch (iter % 5) {
      case 0: {
        std::vector<uint8_t> buf =
            makeContribution(DType::I64, c.rank(), count, size_t(iter));
        ASSERT_OK(c.allReduce(buf.data(), buf.data(), count, DType::I64));
        ASSERT_EQ(buf, expectedSum(DType::I64, n, count, size_t(iter)));
        break;
      }
      case 1: {
        std::vector<uint8_t> send =
            makeContribution(DType::F32, c.rank(), count, size_t(iter));
        std::vector<uint8_t> recv(send.size() * n);
        ASSERT_OK(c.allGather(send.data(), recv.data(), count, DType::F32));
        for (int r = 0; r < n; ++r)
          ASSERT_EQ(std::vector<uint8_t>(
                        recv.begin() + ptrdiff_t(size_t(r) * send.size()),
                        recv.begin() + ptrdiff_t(size_t(r + 1) * send.size())),
                    makeContribution(DType::F32, r, count, size_t(iter)));
        break;
      }
      case 2: {
        std::vector<uint8_t> send =
            makeContribution(DType::BF16, c.rank(), count * n);
        std::vector<uint8_t> recv(count * 2);
        ASSERT_OK(
            c.reduceScatter(send.data(), recv.data(), count, DType::BF16));
        ASSERT_EQ(recv,
                  expectedSum(DType::BF16, n, count, size_t(c.rank()) * count));
        break;
      }
      case 3: ASSERT_OK(c.barrier()); break;
      case 4: {
        std::vector<size_t> counts = {count, 0, 1, count / 2};
        uint8_t send[16] = {};
        std::vector<uint8_t> recv(count * 2 + 1);
        ASSERT_OK(c.allGatherV(send, recv.data(), counts, DType::U8));
        break;
      }
      }
    }
  });
}

TEST(InProcessComm, SingleRankAndGroupApi) {
  InProcessGroup group;
  Status st = InProcessGroup::create(0, group);
  EXPECT_EQ(contains(st, "at least one rank"), "");
  ASSERT_OK(InProcessGroup::create(2, group));
  EXPECT_EQ(group.size(), 2);
  auto c0 = group.take(0);
  ASSERT_NE(c0, nullptr);
  EXPECT_EQ(c0->rank(), 0);
  EXPECT_EQ(c0->size(), 2);
  EXPECT_EQ(group.take(0), nullptr) << "a rank is handed out once";
  EXPECT_EQ(group.take(2), nullptr);
  EXPECT_EQ(group.take(-1), nullptr);
}

//===----------------------------------------------------------------------===//
// Failures
//===----------------------------------------------------------------------===//

TEST(InProcessComm, AbortWakesEveryRankPromptly) {
  InProcessOptions options;
  options.timeout = std::chrono::seconds(60);
  std::atomic<int> failures{0};
  runRanks(
      4,
      [&](Communicator &c) {
        if (c.rank() == 2) {
          std::this_thread::sleep_for(milliseconds(200));
          c.abort("rank 2 hit an out-of-memory error");
          Status st = c.barrier();
          EXPECT_EQ(contains(st, "out-of-memory"), "");
          return;
        }
        std::vector<float> buf(1000, 1.0f);
        auto start = Clock::now();
        Status st = c.allReduce(buf.data(), buf.data(), buf.size(), DType::F32);
        EXPECT_LT(secondsSince(start), 2.0);
        EXPECT_EQ(contains(st, "rank 2 aborted: rank 2 hit an out-of-memory"),
                  "");
        EXPECT_EQ(contains(st, "rank " + std::to_string(c.rank()) + " of 4"),
                  "");
        // The group stays dead: later collectives fail at once.
        start = Clock::now();
        EXPECT_EQ(contains(c.barrier(), "out-of-memory"), "");
        EXPECT_LT(secondsSince(start), 0.5);
        ++failures;
      },
      options);
  EXPECT_EQ(failures, 3);
}

TEST(InProcessComm, AbortFromOutsideTheRanks) {
  InProcessGroup group;
  ASSERT_OK(InProcessGroup::create(3, group));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      auto c = group.take(r);
      for (;;) {
        Status st = c->barrier();
        if (!st) {
          EXPECT_EQ(contains(st, "group aborted: watchdog"), "");
          ++failures;
          return;
        }
      }
    });
  std::this_thread::sleep_for(milliseconds(100));
  group.abort("watchdog");
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(failures, 3);
}

TEST(InProcessComm, TimeoutNamesTheMissingRanks) {
  InProcessOptions options;
  options.timeout = milliseconds(300);
  runRanks(
      4,
      [&](Communicator &c) {
        if (c.rank() >= 2) {
          // Late: arrives after the others timed out, and must fail at once.
          std::this_thread::sleep_for(milliseconds(1000));
          auto start = Clock::now();
          Status late = c.barrier();
          EXPECT_EQ(contains(late, "waiting for rank(s) 2, 3"), "");
          EXPECT_EQ(late.code(), StatusCode::Aborted);
          EXPECT_LT(secondsSince(start), 0.2);
          return;
        }
        auto start = Clock::now();
        float x = 1;
        Status st = c.allReduce(&x, &x, 1, DType::F32);
        double waited = secondsSince(start);
        EXPECT_EQ(
            contains(st, "timed out after 300 ms waiting for rank(s) 2, 3"),
            "");
        EXPECT_EQ(contains(st, "allReduce(count=1, f32)"), "");
        // Ranks 0 and 1 both waited out the timeout themselves, or one of
        // them saw the other's abort first.
        EXPECT_TRUE(st.code() == StatusCode::DeadlineExceeded ||
                    st.code() == StatusCode::Aborted)
            << statusCodeName(st.code());
        EXPECT_GE(waited, 0.25);
        EXPECT_LT(waited, 1.5);
      },
      options);
}

TEST(InProcessComm, MismatchedCountsFailOnAllRanks) {
  runRanks(2, [&](Communicator &c) {
    size_t count = c.rank() == 0 ? 100 : 200;
    std::vector<float> send(count, 1.0f), recv(count, -1.0f);
    Status st = c.allReduce(send.data(), recv.data(), count, DType::F32);
    EXPECT_EQ(contains(st, "mismatched collectives: rank 0 "
                           "allReduce(count=100, f32), rank 1 "
                           "allReduce(count=200, f32)"),
              "");
    // Nothing was written.
    EXPECT_EQ(recv, std::vector<float>(count, -1.0f));
    EXPECT_FALSE(c.barrier());
  });
}

TEST(InProcessComm, MismatchedOperationsAndDTypes) {
  runRanks(3, [&](Communicator &c) {
    float buf[12] = {};
    Status st = c.rank() == 1 ? c.allGather(buf, buf + 4, 4, DType::F32)
                              : c.allReduce(buf, buf, 4, DType::F32);
    EXPECT_EQ(contains(st, "rank 1 allGather(count=4, f32)"), "");
  });
  runRanks(2, [&](Communicator &c) {
    float buf[4] = {};
    Status st = c.allReduce(buf, buf, 2, c.rank() ? DType::F32 : DType::I32);
    EXPECT_EQ(contains(st, "rank 0 allReduce(count=2, i32)"), "");
  });
  runRanks(2, [&](Communicator &c) {
    float buf[4] = {};
    Status st = c.rank() ? c.barrier() : c.allReduce(buf, buf, 2, DType::F32);
    EXPECT_EQ(contains(st, "rank 1 barrier()"), "");
  });
  runRanks(2, [&](Communicator &c) {
    float buf[8] = {};
    std::vector<size_t> counts =
        c.rank() ? std::vector<size_t>{1, 2} : std::vector<size_t>{2, 1};
    Status st = c.allGatherV(buf, buf + 4, counts, DType::F32);
    EXPECT_EQ(contains(st, "allGatherV(counts=[2,1], f32)"), "");
  });
}

TEST(InProcessComm, AllGatherRowsChecksItsArguments) {
  // Rows that disagree between ranks are a mismatch named on every rank.
  runRanks(2, [&](Communicator &c) {
    float send[8] = {}, recv[16] = {};
    Status st = c.allGatherRows(send, recv, c.rank() ? 2 : 4, {2, 2},
                                DType::F32, nullptr);
    EXPECT_EQ(contains(st, "allGatherRows(rows=4, counts=[2,2], f32)"), "");
  });
  // Overlapping send and recv have no in-place form.
  runRanks(2, [&](Communicator &c) {
    float buf[16] = {};
    Status st =
        c.allGatherRows(buf, buf + 2, 2, {2, 2}, DType::F32, nullptr);
    EXPECT_EQ(contains(st, "send and recv overlap"), "");
  });
}

TEST(InProcessComm, InvalidArgumentsFailOnAllRanks) {
  runRanks(3, [&](Communicator &c) {
    uint8_t buf[8] = {};
    Status st =
        c.allReduce(buf, buf, 8, c.rank() == 1 ? DType::Bool : DType::U8);
    EXPECT_EQ(contains(st, "rank 1 called allReduce(count=8, bool) with "
                           "invalid arguments: cannot sum-reduce bool"),
              "");
  });
  runRanks(2, [&](Communicator &c) {
    float x = 0;
    Status st = c.allReduce(&x, c.rank() ? nullptr : &x, 1, DType::F32);
    EXPECT_EQ(contains(st, "recv buffer is null"), "");
  });
  runRanks(2, [&](Communicator &c) {
    float buf[8] = {};
    Status st = c.allReduce(buf, buf + 1, 4, DType::F32);
    EXPECT_EQ(contains(st, "overlap"), "");
  });
  runRanks(2, [&](Communicator &c) {
    float buf[8] = {};
    Status st = c.allGatherV(buf, buf + 4, {1, 1, 1}, DType::F32);
    EXPECT_EQ(contains(st, "counts has 3 entries for 2 ranks"), "");
  });
  runRanks(2, [&](Communicator &c) {
    float buf[8] = {};
    // recv inside send, but not at this rank's block.
    Status st = c.reduceScatter(buf, buf + 1, 2, DType::F32);
    EXPECT_EQ(contains(st, "not this rank's block"), "");
  });
}

TEST(InProcessComm, DestroyedCommunicatorReleasesPeers) {
  InProcessGroup group;
  ASSERT_OK(InProcessGroup::create(2, group));
  auto c1 = group.take(1);
  std::thread t([&] {
    auto c0 = group.take(0);
    auto start = Clock::now();
    EXPECT_EQ(contains(c0->barrier(), "rank 1 left the group"), "");
    EXPECT_LT(secondsSince(start), 2.0);
  });
  std::this_thread::sleep_for(milliseconds(100));
  c1.reset();
  t.join();
}
