//===- EngineRunTest.cpp - Engines compute what their plans say -----------===//
#include "TestEngines.h"

#include "../StatusAssert.h"
#include "../TempDir.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <thread>

using namespace tpc;
using namespace tpc::runtime;
using namespace tpc::test;

namespace {

/// Loads `dir` on every rank, runs it with input x and checks y.
void runAndCheck(const std::string &dir, const MlpCase &c, int iterations = 1) {
  std::unique_ptr<LocalEngine> engine;
  ASSERT_OK(LocalEngine::load(dir, {}, engine));
  ASSERT_OK(engine->setInput("x", c.xDesc(), c.x.data()));
  for (int i = 0; i < iterations; ++i) {
    ASSERT_OK(engine->run());
    for (int r = 0; r < engine->tp(); ++r) {
      TensorDesc desc;
      const void *data = nullptr;
      ASSERT_TRUE(engine->session(r).output("y", desc, data));
      EXPECT_EQ(desc.str(), c.yDesc().str());
      SCOPED_TRACE("rank " + std::to_string(r));
      expectClose(static_cast<const float *>(data), c.expected);
    }
  }
}

/// Writes the engine `eb` to a temporary folder, then runAndCheck.
void writeAndCheck(EngineBuilder eb, const MlpCase &c, int iterations = 1) {
  TempDir dir;
  ASSERT_OK(eb.write(dir.path()));
  runAndCheck(dir.path(), c, iterations);
}

TEST(EngineRun, SingleRankMlpMatchesReference) {
  TempDir dir;
  MlpCase c = mlpCase(2, 3, 4);
  ASSERT_OK(mlpEngine(c).write(dir.path()));

  std::unique_ptr<RankEngine> engine;
  ASSERT_OK(RankEngine::load(dir.path(), 0, engine));
  EXPECT_EQ(engine->plan().steps.size(), 3u);
  EXPECT_EQ(engine->weightBytes(), (3 * 4 + 4) * sizeof(float));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(engine->bufferData(0)) % 64, 0u);

  std::unique_ptr<Session> session;
  ASSERT_OK(Session::create(*engine, nullptr, {}, session));
  TensorDesc desc;
  const void *data = nullptr;
  ASSERT_TRUE(session->output("y", desc, data));
  EXPECT_EQ(data, nullptr) << "no output before the first run";
  ASSERT_OK(session->setInput("x", c.xDesc(), c.x.data()));
  ASSERT_OK(session->run());
  EXPECT_GE(session->lastRunMillis(), 0.0);
  ASSERT_TRUE(session->output("y", desc, data));
  expectClose(static_cast<const float *>(data), c.expected);
  EXPECT_FALSE(session->output("nope", desc, data));
}

TEST(EngineRun, SingleRankRunsRepeatedly) {
  MlpCase c = mlpCase(3, 4, 5);
  writeAndCheck(mlpEngine(c), c, 3);
}

TEST(EngineRun, RowParallelAllReduce) {
  MlpCase c = mlpCase(2, 4, 5);
  writeAndCheck(rowParallelEngine(c, 2), c, 2);
}

// Each rank runs on one thread for the engine's life (what a rank keeps per
// thread, its kernel pool and packing buffers, is made once), and a lone
// rank runs on the caller's thread.
TEST(EngineRun, RankThreadsPersistAcrossForwards) {
  MlpCase c = mlpCase(2, 4, 5);
  TempDir dir;
  ASSERT_OK(rowParallelEngine(c, 2).write(dir.path()));
  std::unique_ptr<LocalEngine> engine;
  ASSERT_OK(LocalEngine::load(dir.path(), {}, engine));
  ASSERT_OK(engine->setInput("x", c.xDesc(), c.x.data()));
  std::vector<std::vector<std::thread::id>> ids(3);
  for (auto &forward : ids) {
    forward.resize(2);
    ASSERT_OK(engine->forEachRank([&](int r) {
      forward[size_t(r)] = std::this_thread::get_id();
      return engine->session(r).run();
    }));
    TensorDesc desc;
    const void *data = nullptr;
    ASSERT_TRUE(engine->session(1).output("y", desc, data));
    expectClose(static_cast<const float *>(data), c.expected);
  }
  EXPECT_NE(ids[0][0], ids[0][1]);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(ids[0][size_t(r)], std::this_thread::get_id());
    EXPECT_EQ(ids[1][size_t(r)], ids[0][size_t(r)]) << "rank " << r;
    EXPECT_EQ(ids[2][size_t(r)], ids[0][size_t(r)]) << "rank " << r;
  }

  TempDir one;
  ASSERT_OK(mlpEngine(c).write(one.path()));
  std::unique_ptr<LocalEngine> single;
  ASSERT_OK(LocalEngine::load(one.path(), {}, single));
  std::thread::id lone;
  ASSERT_OK(single->forEachRank([&](int) {
    lone = std::this_thread::get_id();
    return Status::ok();
  }));
  EXPECT_EQ(lone, std::this_thread::get_id());
}

TEST(EngineRun, RowParallelUnevenSplit) {
  MlpCase c = mlpCase(3, 5, 4);
  writeAndCheck(rowParallelEngine(c, 3), c);
}

TEST(EngineRun, AllReduceInPlace) {
  MlpCase c = mlpCase(2, 4, 5);
  EngineBuilder eb = rowParallelEngine(c, 2);
  for (int r = 0; r < 2; ++r) {
    // AllReduce part -> part, and Add reads part.
    plan::Plan &p = eb.rank(r).plan();
    uint32_t part = p.steps(2).inputs(0);
    p.mutable_steps(2)->set_outputs(0, part);
    p.mutable_steps(3)->set_inputs(0, part);
  }
  writeAndCheck(eb, c);
}

TEST(EngineRun, AllReducePartlyOverlapping) {
  MlpCase c = mlpCase(2, 4, 16);
  EngineBuilder eb = rowParallelEngine(c, 2);
  for (int r = 0; r < 2; ++r) {
    // Move the AllReduce output 64 bytes into its input: the operands
    // overlap without being the same buffer.
    plan::Plan &p = eb.rank(r).plan();
    uint32_t part = p.steps(2).inputs(0), sum = p.steps(2).outputs(0);
    p.mutable_buffers(int(sum))->set_offset(p.buffers(int(part)).offset() + 64);
  }
  writeAndCheck(eb, c);
}

TEST(EngineRun, ColumnParallelAllGatherEqualShards) {
  MlpCase c = mlpCase(2, 3, 6);
  writeAndCheck(columnParallelEngine(c, 3), c);
}

TEST(EngineRun, ColumnParallelAllGatherUnequalShards) {
  MlpCase c = mlpCase(3, 4, 5);
  writeAndCheck(columnParallelEngine(c, 3), c, 2);
}

TEST(EngineRun, ReduceScatterInnerAxisUnequal) {
  MlpCase c = mlpCase(3, 4, 5);
  writeAndCheck(reduceScatterEngine(c, 2, /*axis=*/1, /*split=*/3), c, 2);
}

TEST(EngineRun, ReduceScatterInnerAxisEqual) {
  MlpCase c = mlpCase(3, 4, 6);
  writeAndCheck(reduceScatterEngine(c, 1, 1, 3), c);
}

TEST(EngineRun, ReduceScatterOuterAxisEqual) {
  MlpCase c = mlpCase(4, 4, 5);
  writeAndCheck(reduceScatterEngine(c, 2, 0, 2), c);
}

TEST(EngineRun, ReduceScatterOuterAxisUnequal) {
  MlpCase c = mlpCase(3, 4, 5);
  writeAndCheck(reduceScatterEngine(c, 2, 0, 1), c);
}

TEST(EngineRun, CollectivesOfOneRankCopy) {
  // A tp-1 engine may still contain collectives; with one rank they are
  // copies and need no communicator.
  MlpCase c = mlpCase(2, 3, 4);
  EngineBuilder eb = mlpEngine(c);
  RankBuilder &r = eb.rank(0);
  plan::Plan &p = r.plan();
  uint32_t relu = p.steps(2).outputs(0);
  uint32_t gathered = r.arena("gathered", DType::F32, {c.m, c.n});
  uint32_t reduced = r.arena("reduced", DType::F32, {c.m, c.n});
  r.step("AllGather", {relu}, {gathered}, {intsAttr("axis", {0})});
  r.step("AllReduce", {gathered}, {reduced});
  p.mutable_outputs(0)->set_buffer(reduced);
  writeAndCheck(eb, c);
}

TEST(EngineRun, ManifestIsParsed) {
  TempDir dir;
  MlpCase c = mlpCase();
  ASSERT_OK(rowParallelEngine(c, 2).write(dir.path()));
  EngineManifest m;
  ASSERT_OK(EngineManifest::load(dir.path(), m));
  EXPECT_EQ(m.formatVersion, 1);
  EXPECT_EQ(m.tp, 2);
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.inputs[0].desc.str(), c.xDesc().str());
  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_EQ(m.ranks[1].plan.file, "rank1.plan");
  EXPECT_EQ(m.producerName, "tpc");
  EXPECT_NE(m.optionsJson.find("\"tp\""), std::string::npos);
}

} // namespace
