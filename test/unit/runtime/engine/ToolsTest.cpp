//===- ToolsTest.cpp - tpc run and tpc inspect ----------------------------===//
#include "TestEngines.h"

#include "../StatusAssert.h"
#include "../TempDir.h"
#include "base/Cores.h"
#include "tools/run/RunToolSupport.h"
#include "kernels/cpu/Bgemm.h"
#include "kernels/cpu/Sgemm.h"
#include "kernels/cpu/VectorMath.h"
#include "tools/run/Tools.h"
#include "runtime/io/Npy.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace tpc;
using namespace tpc::runtime;
using namespace tpc::test;

namespace {

size_t countLines(const std::string &s) {
  size_t n = 0;
  for (char ch : s)
    n += ch == '\n';
  return n;
}

class RunToolTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_OK(columnParallelEngine(c, 3).write(engineDir()));
    ASSERT_OK(writeNpy(xPath(), c.xDesc(), c.x.data()));
    options.engineDir = engineDir();
    options.inputs = {{"x", xPath()}};
    options.outputDir = dir.file("out");
    options.comm = CommMode::InProcess;
  }
  std::string engineDir() const { return dir.file("engine"); }
  std::string xPath() const { return dir.file("x.npy"); }
  int run() {
    out.str("");
    err.str("");
    return runTool(options, out, err);
  }
  /// Runs and expects exit status 1 with one error line containing `part`.
  void expectFailure(const std::string &part) {
    EXPECT_EQ(run(), 1);
    EXPECT_EQ(countLines(err.str()), 1u) << err.str();
    EXPECT_TRUE(contains(err.str(), "tpc run: error: ")) << err.str();
    EXPECT_TRUE(contains(err.str(), part)) << err.str();
  }

  TempDir dir;
  MlpCase c = mlpCase(2, 4, 5);
  RunToolOptions options;
  std::ostringstream out, err;
};

TEST_F(RunToolTest, WritesOutputsAndPrintsLatency) {
  options.warmup = 1;
  options.iterations = 3;
  ASSERT_EQ(run(), 0) << err.str();
  EXPECT_TRUE(contains(out.str(), "latency: mean ")) << out.str();
  for (const char *field : {"median ", "p90 ", "p99 ", "forwards/s", "load "})
    EXPECT_TRUE(contains(out.str(), field)) << field << " in " << out.str();
  EXPECT_TRUE(contains(out.str(), "wrote ")) << out.str();
  NpyArray y;
  ASSERT_OK(readNpy(dir.file("out/y.npy"), y));
  EXPECT_EQ(y.desc.str(), c.yDesc().str());
  expectClose(reinterpret_cast<const float *>(y.data.data()), c.expected);
}

TEST_F(RunToolTest, JsonIsTheOnlyStdout) {
  options.json = true;
  options.iterations = 4;
  ASSERT_EQ(run(), 0) << err.str();
  nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(countLines(out.str()), 1u);
  EXPECT_EQ(j["tp"], 2);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_EQ(j["iterations"], 4);
  // The GEMM path that ran: the fastest this CPU has.
  EXPECT_EQ(j["gemm_kernel"], tpc::cpu::sgemmAvailableKernels().front());
  // The bf16 product's kernel: the best this CPU and OS allow.
  EXPECT_EQ(j["bf16_gemm_kernel"],
            tpc::cpu::bgemmKernelName(tpc::cpu::bgemmAvailableKernels().front()));
  // And the vector math's instruction set: the widest this CPU has.
  EXPECT_EQ(j["vector_math"],
            tpc::cpu::vectorIsaName(tpc::cpu::vectorMathIsa()));
  EXPECT_NE(j["vector_math"], "scalar");
  const nlohmann::json &lat = j["latency_ms"];
  EXPECT_LE(lat["min"].get<double>(), lat["median"].get<double>());
  EXPECT_LE(lat["median"].get<double>(), lat["p90"].get<double>());
  EXPECT_LE(lat["p90"].get<double>(), lat["p99"].get<double>());
  EXPECT_LE(lat["p99"].get<double>(), lat["max"].get<double>());
  EXPECT_LE(lat["min"].get<double>(), lat["mean"].get<double>());
  EXPECT_GT(lat["max"].get<double>(), 0.0);
  EXPECT_NEAR(j["throughput_per_s"].get<double>(),
              1000.0 / lat["mean"].get<double>(), 1e-6);
  EXPECT_GT(j["load_ms"].get<double>(), 0.0);
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/y.npy")));
}

TEST_F(RunToolTest, MissingInput) {
  options.inputs.clear();
  expectFailure("input 'x' (f32[2x4]) is missing");
}

TEST_F(RunToolTest, ExtraInput) {
  options.inputs.push_back({"mask", xPath()});
  expectFailure("the engine has no input 'mask'");
}

TEST_F(RunToolTest, WrongInputDType) {
  std::vector<int64_t> ids(8, 1);
  ASSERT_OK(writeNpy(xPath(), {DType::I64, {2, 4}}, ids.data()));
  expectFailure("holds i64[2x4], but the engine expects f32[2x4]");
}

TEST_F(RunToolTest, WrongInputShape) {
  ASSERT_OK(writeNpy(xPath(), {DType::F32, {4, 2}}, c.x.data()));
  expectFailure("holds f32[4x2], but the engine expects f32[2x4]");
}

TEST_F(RunToolTest, UnreadableNpy) {
  dir.write("x.npy", "not an npy file");
  expectFailure("input 'x': ");
}

TEST_F(RunToolTest, AlteredEngine) {
  flipByte(engineDir() + "/rank1.safetensors", -2);
  expectFailure("rank1.safetensors: sha256 mismatch");
}

TEST_F(RunToolTest, MissingEngineFile) {
  std::filesystem::remove(engineDir() + "/rank0.plan");
  expectFailure("rank0.plan: missing");
}

TEST_F(RunToolTest, NewerFormatVersion) {
  std::string text = readAll(engineDir() + "/engine.json");
  text.replace(text.find("\"format_version\": 1"), 19,
               "\"format_version\": 2");
  std::ofstream(engineDir() + "/engine.json", std::ios::trunc) << text;
  expectFailure("engine format version 2 is newer than this runtime supports "
                "(version 1)");
}

TEST_F(RunToolTest, RefusesOversubscription) {
  options.threadsPerRank = 4096;
  expectFailure("--oversubscribe");
  options.threadsPerRank = usableCores() + 1;
  options.oversubscribe = true;
  EXPECT_EQ(run(), 0) << err.str();
}

TEST_F(RunToolTest, NoOutputDirWritesNothing) {
  options.outputDir.clear();
  ASSERT_EQ(run(), 0) << err.str();
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
}

TEST(ToolFlags, ParseHelpers) {
  std::string name, file;
  ASSERT_OK(parseInputSpec("input_ids=/tmp/a=b.npy", name, file));
  EXPECT_EQ(name, "input_ids");
  EXPECT_EQ(file, "/tmp/a=b.npy");
  EXPECT_FALSE(parseInputSpec("noequals", name, file));
  EXPECT_FALSE(parseInputSpec("=x.npy", name, file));
  CommMode mode;
  ASSERT_OK(parseCommMode("mpi", mode));
  EXPECT_EQ(mode, CommMode::Mpi);
  EXPECT_FALSE(parseCommMode("nccl", mode));
  int v = 0;
  ASSERT_OK(parseIntFlag("--threads", "3", 1, 64, v));
  EXPECT_EQ(v, 3);
  EXPECT_FALSE(parseIntFlag("--threads", "0", 1, 64, v));
  EXPECT_FALSE(parseIntFlag("--threads", "2x", 1, 64, v));
  EXPECT_EQ(outputFileName("a/b"), "a_b");
  EXPECT_EQ(outputFileName(".."), "_.");
}

TEST(LatencyStats, NearestRankPercentiles) {
  std::vector<double> ms;
  for (int i = 100; i >= 1; --i)
    ms.push_back(double(i));
  LatencyStats s = latencyStats(ms);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.median, 50.5);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.p90, 90);
  EXPECT_DOUBLE_EQ(s.p99, 99);
  EXPECT_DOUBLE_EQ(s.throughput, 1000.0 / 50.5);
  LatencyStats one = latencyStats({3.0});
  EXPECT_DOUBLE_EQ(one.p99, 3.0);
  EXPECT_DOUBLE_EQ(one.median, 3.0);
  LatencyStats none = latencyStats({});
  EXPECT_DOUBLE_EQ(none.throughput, 0.0);
}

TEST(InspectTool, TextAndJson) {
  TempDir dir;
  MlpCase c = mlpCase(2, 4, 5);
  ASSERT_OK(rowParallelEngine(c, 2).write(dir.path()));
  std::ostringstream out, err;
  ASSERT_EQ(inspectTool(dir.path(), false, true, out, err), 0) << err.str();
  EXPECT_TRUE(contains(out.str(), "tp       2")) << out.str();
  EXPECT_TRUE(contains(out.str(), std::string("cpu      ") +
                                      tpc::cpu::sgemmKernelName() + " GEMM"))
      << out.str();
  EXPECT_TRUE(contains(out.str(), "AllReduce x1")) << out.str();
  EXPECT_TRUE(contains(out.str(), "weight matmuls:")) << out.str();
  EXPECT_TRUE(contains(out.str(), "  mm    w f32[2x5]      row")) << out.str();

  out.str("");
  ASSERT_EQ(inspectTool(dir.path(), true, true, out, err), 0) << err.str();
  nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["tp"], 2);
  EXPECT_EQ(j["gemm_kernel"], tpc::cpu::sgemmKernelName());
  EXPECT_EQ(j["bf16_gemm_kernel"],
            tpc::cpu::bgemmKernelName(tpc::cpu::bgemmKernel()));
  EXPECT_EQ(j["vector_math"],
            tpc::cpu::vectorIsaName(tpc::cpu::vectorMathIsa()));
  ASSERT_EQ(j["ranks"].size(), 2u);
  const nlohmann::json &r1 = j["ranks"][1];
  EXPECT_EQ(r1["steps"], 5);
  EXPECT_EQ(r1["weight_bytes"], (2 * 5 + 5) * 4);
  EXPECT_GT(r1["arena_bytes"].get<int>(), 0);
  EXPECT_GE(r1["unplanned_bytes"].get<int>(), 0);
  EXPECT_EQ(r1["collectives"][0]["kind"], "AllReduce");
  EXPECT_EQ(r1["collectives"][0]["count"], 1);
  EXPECT_EQ(r1["collectives"][0]["bytes"], 2 * 5 * 4);
  EXPECT_EQ(r1["kernels"]["MatMul"], 1);
  EXPECT_EQ(r1["kernels"]["AllReduce"], 1);
  ASSERT_EQ(r1["weight_matmuls"].size(), 1u);
  EXPECT_EQ(r1["weight_matmuls"][0]["node"], "mm");
  EXPECT_EQ(r1["weight_matmuls"][0]["tp_role"], "row");
  EXPECT_EQ(r1["weight_matmuls"][0]["weight_shape"],
            nlohmann::json::array({2, 5}));
}

TEST(InspectTool, BrokenEngine) {
  TempDir dir;
  ASSERT_OK(mlpEngine(mlpCase()).write(dir.path()));
  flipByte(dir.file("rank0.plan"), 0);
  std::ostringstream out, err;
  EXPECT_EQ(inspectTool(dir.path(), true, true, out, err), 1);
  EXPECT_TRUE(contains(err.str(), "tpc inspect: error: rank0.plan: sha256"))
      << err.str();
  EXPECT_TRUE(out.str().empty());
}

// A weight byte changed in place (same size): inspect reports the digest
// mismatch, and --no-verify, which skips the weights' digests, says so.
TEST(InspectTool, CorruptWeights) {
  TempDir dir;
  ASSERT_OK(mlpEngine(mlpCase()).write(dir.path()));
  flipByte(dir.file("rank0.safetensors"), -1);
  std::ostringstream out, err;
  EXPECT_EQ(inspectTool(dir.path(), false, true, out, err), 1);
  EXPECT_TRUE(
      contains(err.str(), "tpc inspect: error: rank0.safetensors: sha256"))
      << err.str();
  err.str("");
  ASSERT_EQ(inspectTool(dir.path(), false, false, out, err), 0) << err.str();
  EXPECT_TRUE(contains(out.str(), "weight digests not checked (--no-verify)"))
      << out.str();
}

} // namespace
