//===- RunnerTest.cpp - The CPU runners behind EngineRunner ---------------===//
//
// The two CPU runners (every rank in process; one rank with the caller's
// communicator) compute the reference result through the one interface
// that tpc run, tpc generate and the Python API drive.
//
//===----------------------------------------------------------------------===//
#include "TestEngines.h"

#include "../StatusAssert.h"
#include "../TempDir.h"
#include "runtime/Runtime.h"
#include "runtime/comm/InProcessComm.h"
#include "runtime/engine/Profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

using namespace tpc;
using namespace tpc::runtime;
using namespace tpc::test;

namespace {

/// Runs `runner` once on c.x and checks its y against the reference.
void runAndCheck(EngineRunner &runner, const MlpCase &c) {
  ASSERT_OK(runner.setInput("x", c.xDesc(), c.x.data()));
  ASSERT_OK(runner.run());
  TensorDesc desc;
  const void *data = nullptr;
  ASSERT_TRUE(runner.output("y", desc, data));
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(desc.str(), c.yDesc().str());
  expectClose(static_cast<const float *>(data), c.expected);
  EXPECT_GE(runner.lastRunMillis(), 0.0);
  EXPECT_EQ(runner.lastDeviceMillis(), runner.lastRunMillis());
}

/// A test's engine folder and what is loaded from it.
class CpuRunner : public ::testing::Test {
protected:
  /// Writes `eb` and loads every rank of it in process.
  void loadInProcess(EngineBuilder eb, const CpuRunOptions &o = {}) {
    ASSERT_OK(eb.write(dir.path()));
    ASSERT_OK(createCpuRunner(dir.path(), o, runner));
  }
  /// Writes `eb` and loads its manifest (for runners of one rank each).
  void loadManifest(EngineBuilder eb) {
    ASSERT_OK(eb.write(dir.path()));
    ASSERT_OK(EngineManifest::load(dir.path(), manifest));
  }

  TempDir dir;
  std::unique_ptr<EngineRunner> runner;
  EngineManifest manifest;
};

TEST_F(CpuRunner, EveryRankInProcess) {
  MlpCase c = mlpCase(2, 4, 5);
  CpuRunOptions o;
  o.alignStarts = true;
  ASSERT_NO_FATAL_FAILURE(loadInProcess(rowParallelEngine(c, 2), o));
  EXPECT_EQ(runner->tp(), 2);
  EXPECT_EQ(runner->outputNames(), std::vector<std::string>{"y"});
  TensorDesc desc;
  const void *data = nullptr;
  ASSERT_TRUE(runner->output("y", desc, data));
  EXPECT_EQ(data, nullptr) << "no output before the first run";
  EXPECT_FALSE(runner->output("nope", desc, data));
  for (int i = 0; i < 3; ++i)
    runAndCheck(*runner, c);
  // Not profiled: no step times; a plain engine has no state to reset.
  EXPECT_TRUE(runner->lastStepTimes().empty());
  EXPECT_OK(runner->resetState());
  EXPECT_FALSE(runner->abandoned());
  EXPECT_NE(runner->describe().find("2 rank(s)"), std::string::npos);
}

// Outputs are handed out where the forward leaves them: each run's
// output() shows that run's values, never an earlier one's.
TEST_F(CpuRunner, OutputsAreTheLastRunsValues) {
  MlpCase c = mlpCase(2, 4, 5);
  ASSERT_NO_FATAL_FAILURE(loadInProcess(rowParallelEngine(c, 2)));
  runAndCheck(*runner, c);
  std::vector<float> other(c.x.size());
  for (size_t i = 0; i < other.size(); ++i)
    other[i] = -2.0f * c.x[i] + 1.0f;
  ASSERT_OK(runner->setInput("x", c.xDesc(), other.data()));
  ASSERT_OK(runner->run());
  TensorDesc desc;
  const void *data = nullptr;
  ASSERT_TRUE(runner->output("y", desc, data));
  const float *y = static_cast<const float *>(data);
  bool differs = false;
  for (size_t i = 0; i < c.expected.size(); ++i)
    differs |= std::abs(y[i] - c.expected[i]) > 1e-3f;
  EXPECT_TRUE(differs) << "the second run's output shows the first run's";
  runAndCheck(*runner, c);
}

TEST_F(CpuRunner, ProfiledRunsReportEveryRanksSteps) {
  MlpCase c = mlpCase(3, 5, 4);
  CpuRunOptions o;
  o.profile = true;
  ASSERT_NO_FATAL_FAILURE(loadInProcess(rowParallelEngine(c, 3), o));
  runAndCheck(*runner, c);
  std::vector<RankStepTimes> ranks = runner->lastStepTimes();
  ASSERT_EQ(ranks.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(ranks[size_t(r)].rank, r);
    ASSERT_NE(ranks[size_t(r)].plan, nullptr);
    ASSERT_NE(ranks[size_t(r)].steps, nullptr);
    EXPECT_EQ(ranks[size_t(r)].steps->size(),
              ranks[size_t(r)].plan->steps.size());
  }
}

TEST_F(CpuRunner, OneRankPerCommunicator) {
  MlpCase c = mlpCase(2, 4, 5);
  ASSERT_NO_FATAL_FAILURE(loadManifest(columnParallelEngine(c, 2)));
  InProcessGroup group;
  ASSERT_OK(InProcessGroup::create(2, group));
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < 2; ++r)
    comms.push_back(group.take(r));
  // As under MPI: each rank's runner on a thread of its own (its peer is
  // another "process"), each starting after a barrier.
  std::vector<Status> made(2), ran(2);
  std::vector<std::unique_ptr<EngineRunner>> runners(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      CpuRunOptions o;
      o.alignStarts = true;
      made[size_t(r)] = createCpuRankRunner(manifest, *comms[size_t(r)], o,
                                            runners[size_t(r)]);
      if (!made[size_t(r)])
        return;
      ran[size_t(r)] = runners[size_t(r)]->setInput("x", c.xDesc(), c.x.data());
      if (ran[size_t(r)])
        ran[size_t(r)] = runners[size_t(r)]->run();
    });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_OK(made[size_t(r)]);
    ASSERT_OK(ran[size_t(r)]);
    EXPECT_EQ(runners[size_t(r)]->tp(), 2);
    TensorDesc desc;
    const void *data = nullptr;
    ASSERT_TRUE(runners[size_t(r)]->output("y", desc, data));
    expectClose(static_cast<const float *>(data), c.expected);
  }
}

TEST_F(CpuRunner, RankRunnerNeedsTheEnginesWorldSize) {
  MlpCase c = mlpCase(2, 4, 5);
  ASSERT_NO_FATAL_FAILURE(loadManifest(rowParallelEngine(c, 2)));
  InProcessGroup group;
  ASSERT_OK(InProcessGroup::create(3, group));
  std::unique_ptr<Communicator> comm = group.take(0);
  Status st = createCpuRankRunner(manifest, *comm, {}, runner);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("the communicator has 3 rank(s), but the "
                              "engine has tp 2"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(runner, nullptr);
}

TEST_F(CpuRunner, MissingEngineFolderIsNamed) {
  Status st = createCpuRunner("/nonexistent/engine", {}, runner);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("/nonexistent/engine"), std::string::npos)
      << st.message();
}

} // namespace
