//===- SessionErrorsTest.cpp - Failures while running ---------------------===//
#include "TestEngines.h"

#include "../StatusAssert.h"
#include "../TempDir.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace tpc;
using namespace tpc::runtime;
using namespace tpc::test;

namespace {

class SessionErrors : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_OK(mlpEngine(c).write(dir.path()));
    ASSERT_OK(RankEngine::load(dir.path(), 0, engine));
    ASSERT_OK(Session::create(*engine, nullptr, {}, session));
  }
  TempDir dir;
  MlpCase c = mlpCase();
  std::unique_ptr<RankEngine> engine;
  std::unique_ptr<Session> session;
};

TEST_F(SessionErrors, WrongInputDType) {
  std::vector<int64_t> ids(8, 0);
  Status st = session->setInput("x", {DType::I64, {2, 4}}, ids.data());
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "input 'x' has dtype i64")) << st.message();
  EXPECT_TRUE(contains(st.message(), "expects f32")) << st.message();
}

TEST_F(SessionErrors, WrongInputShape) {
  Status st = session->setInput("x", {DType::F32, {4, 2}}, c.x.data());
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "input 'x' has shape 4x2")) << st.message();
  EXPECT_TRUE(contains(st.message(), "compiled for 2x4")) << st.message();
}

TEST_F(SessionErrors, UnknownInput) {
  Status st = session->setInput("ids", c.xDesc(), c.x.data());
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "no input 'ids'")) << st.message();
  EXPECT_TRUE(contains(st.message(), "'x'")) << st.message();
}

TEST_F(SessionErrors, MissingInputAtRun) {
  Status st = session->run();
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "rank 0: input 'x' not set before run"))
      << st.message();
  EXPECT_EQ(session->lastFailureOrigin(), Session::FailureOrigin::Local);
  // Without a communicator the session is still usable.
  ASSERT_OK(session->setInput("x", c.xDesc(), c.x.data()));
  ASSERT_OK(session->run());
}

TEST(SessionCreate, MultiRankNeedsCommunicator) {
  TempDir dir;
  ASSERT_OK(rowParallelEngine(mlpCase(), 2).write(dir.path()));
  std::unique_ptr<RankEngine> engine;
  ASSERT_OK(RankEngine::load(dir.path(), 1, engine));
  std::unique_ptr<Session> session;
  Status st = Session::create(*engine, nullptr, {}, session);
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "needs a communicator")) << st.message();

  InProcessGroup group;
  ASSERT_OK(InProcessGroup::create(2, group));
  std::unique_ptr<Communicator> comm0 = group.take(0);
  st = Session::create(*engine, comm0.get(), {}, session);
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "communicator is rank 0 of 2"))
      << st.message();
}

/// Seconds since construction.
struct Stopwatch {
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }
};

/// Expects `st` to be an error containing `part` that came less than
/// `limit` seconds after `watch` started.
void expectPromptError(const Status &st, const Stopwatch &watch, double limit,
                       const std::string &part) {
  EXPECT_LT(watch.seconds(), limit);
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), part)) << st.message();
}

/// Ranks of one engine in this process, where one of them fails.
class RankFailure : public ::testing::Test {
protected:
  /// Writes `eb` and loads every rank of it.
  void load(EngineBuilder eb, const LocalEngineOptions &options = {}) {
    ASSERT_OK(eb.write(dir.path()));
    ASSERT_OK(LocalEngine::load(dir.path(), options, engine));
  }

  TempDir dir;
  MlpCase c = mlpCase();
  std::unique_ptr<LocalEngine> engine;
};

TEST_F(RankFailure, PeerStopsPromptlyInsteadOfHanging) {
  LocalEngineOptions options;
  // A hang would show as this timeout; the abort must come much sooner.
  options.commTimeout = std::chrono::seconds(60);
  ASSERT_NO_FATAL_FAILURE(load(rowParallelEngine(c, 2), options));
  // Rank 1 never gets its input, so it fails before its AllReduce while
  // rank 0 waits there.
  ASSERT_OK(engine->session(0).setInput("x", c.xDesc(), c.x.data()));

  Status rank0;
  Stopwatch watch;
  Status st = engine->forEachRank([&](int r) {
    Status s = engine->session(r).run();
    if (r == 0)
      rank0 = s;
    return s;
  });
  ASSERT_NO_FATAL_FAILURE(
      expectPromptError(st, watch, 5.0, "rank 1: input 'x' not set"));
  ASSERT_FALSE(rank0);
  EXPECT_TRUE(contains(rank0.message(), "rank 0: step 2 (AllReduce"))
      << rank0.message();
  EXPECT_TRUE(contains(rank0.message(), "rank 1 aborted")) << rank0.message();
  EXPECT_EQ(engine->session(0).lastFailureOrigin(),
            Session::FailureOrigin::Collective);
}

// A rank stuck outside any collective (here: in its own code, forever)
// must not keep the others, or the caller, waiting: its peer times out in
// the collective, and forEachRank returns within the stop grace after that,
// naming the stuck rank and marking the engine abandoned.
TEST_F(RankFailure, StuckRankIsLeftBehindWithinTheGrace) {
  LocalEngineOptions options;
  options.commTimeout = std::chrono::milliseconds(1000);
  options.stopGrace = std::chrono::milliseconds(500);
  ASSERT_NO_FATAL_FAILURE(load(rowParallelEngine(c, 2), options));
  ASSERT_OK(engine->setInput("x", c.xDesc(), c.x.data()));
  Stopwatch watch;
  Status st = engine->forEachRank([&](int r) -> Status {
    if (r == 1)
      for (;;)
        std::this_thread::sleep_for(std::chrono::hours(1));
    return engine->session(r).run();
  });
  ASSERT_NO_FATAL_FAILURE(
      expectPromptError(st, watch, 4.0, "rank 0: step 2 (AllReduce"));
  EXPECT_TRUE(contains(st.message(), "rank(s) 1 did not stop within 500 ms"))
      << st.message();
  EXPECT_TRUE(engine->abandoned());
  // The stuck thread still refers to the engine: it must never be freed.
  (void)engine.release();
}

TEST_F(RankFailure, MismatchedCollectivesFailOnEveryRank) {
  EngineBuilder eb = rowParallelEngine(c, 2);
  // Rank 1's AllReduce sums a 1-row buffer while rank 0's sums 2 rows.
  RankBuilder &r1 = eb.rank(1);
  uint32_t row = r1.arena("row", DType::F32, {1, c.n});
  uint32_t rowSum = r1.arena("rowsum", DType::F32, {1, c.n});
  r1.plan().mutable_steps(2)->set_inputs(0, row);
  r1.plan().mutable_steps(2)->set_outputs(0, rowSum);
  ASSERT_NO_FATAL_FAILURE(load(eb));

  ASSERT_OK(engine->setInput("x", c.xDesc(), c.x.data()));
  Stopwatch watch;
  Status st = engine->run();
  ASSERT_NO_FATAL_FAILURE(expectPromptError(st, watch, 5.0, "AllReduce"));
  // The communicator is unusable afterwards: every later run fails too.
  EXPECT_FALSE(engine->run());
}

} // namespace
