//===- CollectiveStepTest.cpp - Collective steps and their scratch --------===//
//
// A plan's AllGather along a middle axis (an LM head's logits split by
// vocabulary) needs scratch for the gathered blocks only when the
// communicator does not place the rows itself: the in-process one does, so
// a Session over it reserves none; the default allGatherRows (MPI) does not.
// Both gather the same bytes.
//
//===----------------------------------------------------------------------===//
#include "../CommTestUtil.h"
#include "../StatusAssert.h"
#include "runtime/comm/InProcessComm.h"
#include "runtime/engine/Collectives.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <thread>

using namespace tpc;
using namespace tpc::runtime;
using namespace tpc::test;

namespace {

/// Forwards every collective to `inner` except allGatherRows, which takes
/// the base class's gather-then-interleave path, as MPI does.
class DefaultRowsComm final : public Communicator {
public:
  explicit DefaultRowsComm(Communicator &inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  Status allReduce(const void *s, void *r, size_t n, DType t) override {
    return inner_.allReduce(s, r, n, t);
  }
  Status allGather(const void *s, void *r, size_t n, DType t) override {
    return inner_.allGather(s, r, n, t);
  }
  Status allGatherV(const void *s, void *r, const std::vector<size_t> &counts,
                    DType t) override {
    return inner_.allGatherV(s, r, counts, t);
  }
  Status reduceScatter(const void *s, void *r, size_t n, DType t) override {
    return inner_.reduceScatter(s, r, n, t);
  }
  Status barrier() override { return inner_.barrier(); }
  void abort(const std::string &reason) override { inner_.abort(reason); }

private:
  Communicator &inner_;
};

constexpr int kRanks = 2;
constexpr int64_t kOuter = 3, kShard = 5;

/// AllGather of f32 [kOuter, kShard] shards along axis `axis` of the
/// [kOuter, kRanks * kShard] (axis 1) or [kRanks * kOuter, kShard] (axis 0)
/// tensor.
Status prepareGather(int axis, int rank, bool overlap, PreparedCollective &c) {
  PlanStep step;
  step.kind = StepKind::AllGather;
  step.attrs.setInt("axis", axis);
  TensorDesc shard{DType::F32, {kOuter, kShard}};
  TensorDesc full = shard;
  full.shape[size_t(axis)] *= kRanks;
  return PreparedCollective::prepare(step, shard, full, overlap, rank, kRanks,
                                     c);
}

TEST(CollectiveStep, MiddleAxisGatherNeedsBlockScratchOnlyByDefault) {
  const size_t fullBytes = kOuter * kRanks * kShard * 4;
  const size_t shardBytes = kOuter * kShard * 4;
  for (bool overlap : {false, true}) {
    PreparedCollective c;
    ASSERT_OK(prepareGather(1, 0, overlap, c));
    const size_t stage = overlap ? shardBytes : 0;
    EXPECT_EQ(c.scratchBytes(), fullBytes + stage) << "overlap " << overlap;
    EXPECT_EQ(c.scratchBytes(/*rowsInPlace=*/true), stage)
        << "overlap " << overlap;
    // Along the leading axis the shards are the output's blocks.
    ASSERT_OK(prepareGather(0, 0, overlap, c));
    EXPECT_EQ(c.scratchBytes(), stage);
    EXPECT_EQ(c.scratchBytes(true), stage);
  }
}

TEST(CollectiveStep, MiddleAxisGatherRunsInTheScratchItAsks) {
  for (bool viaDefault : {false, true})
    for (bool overlap : {false, true}) {
      InProcessGroup group;
      ASSERT_OK(InProcessGroup::create(kRanks, group));
      std::vector<std::thread> threads;
      for (int r = 0; r < kRanks; ++r)
        threads.emplace_back([&, r] {
          std::unique_ptr<Communicator> inProcess = group.take(r);
          ASSERT_NE(inProcess, nullptr);
          DefaultRowsComm fallback(*inProcess);
          Communicator &comm =
              viaDefault ? static_cast<Communicator &>(fallback) : *inProcess;
          PreparedCollective c;
          ASSERT_OK(prepareGather(1, r, overlap, c));
          const size_t shardElems = kOuter * kShard;
          const size_t fullElems = shardElems * kRanks;
          // Exactly the scratch asked for (none: a null pointer), so that a
          // write past it is caught by the sanitizer build.
          const size_t scratchBytes = c.scratchBytes(comm.gathersRowsInPlace());
          std::unique_ptr<uint8_t[]> scratch(
              scratchBytes ? new uint8_t[scratchBytes] : nullptr);
          std::vector<uint8_t> out(fullElems * 4, 0xcd);
          std::vector<uint8_t> in = makeContribution(DType::F32, r, shardElems);
          // Overlapping operands: the shard sits at the start of the output.
          const void *send = in.data();
          if (overlap) {
            std::copy(in.begin(), in.end(), out.begin());
            send = out.data();
          }
          ASSERT_OK(c.run(&comm, send, out.data(), scratch.get()));
          std::vector<uint8_t> expected;
          for (int64_t o = 0; o < kOuter; ++o)
            for (int q = 0; q < kRanks; ++q) {
              std::vector<uint8_t> part =
                  makeContribution(DType::F32, q, shardElems);
              expected.insert(expected.end(),
                              part.begin() + ptrdiff_t(o * kShard * 4),
                              part.begin() + ptrdiff_t((o + 1) * kShard * 4));
            }
          EXPECT_EQ(firstDifference(out, expected), -1)
              << "rank " << r << " default " << viaDefault << " overlap "
              << overlap;
        });
      for (std::thread &t : threads)
        t.join();
    }
}

} // namespace
