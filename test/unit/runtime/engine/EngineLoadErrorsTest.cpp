//===- EngineLoadErrorsTest.cpp - Broken engines are refused at load ------===//
//
// One test per way an engine folder can be wrong. Each checks that loading
// fails and that the message names what is wrong.
//
//===----------------------------------------------------------------------===//
#include "TestEngines.h"

#include "../TempDir.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace tpc;
using namespace tpc::runtime;
using namespace tpc::test;

namespace {

class EngineLoadErrors : public ::testing::Test {
protected:
  /// Loads every rank of dir; returns the error message ("" on success).
  std::string loadError() {
    std::unique_ptr<LocalEngine> engine;
    Status st = LocalEngine::load(dir.path(), {}, engine);
    return st ? std::string() : st.message();
  }
  /// Writes `eb` and expects loading to fail with a message containing
  /// every string of `parts`.
  void expectLoadError(EngineBuilder eb, std::vector<std::string> parts) {
    ASSERT_TRUE(eb.write(dir.path()).isOk());
    expectError(parts);
  }
  void expectError(const std::vector<std::string> &parts) {
    std::string msg = loadError();
    ASSERT_FALSE(msg.empty()) << "the engine loaded";
    for (const std::string &p : parts)
      EXPECT_NE(msg.find(p), std::string::npos)
          << "message lacks \"" << p << "\": " << msg;
  }
  std::string file(const std::string &name) { return dir.file(name); }

  TempDir dir;
  MlpCase c = mlpCase();
};

TEST_F(EngineLoadErrors, MissingManifest) {
  ASSERT_TRUE(rowParallelEngine(c, 2).write(dir.path()).isOk());
  std::filesystem::remove(file("engine.json"));
  expectError({"engine.json", "missing"});
}

TEST_F(EngineLoadErrors, MissingFolder) {
  std::unique_ptr<LocalEngine> engine;
  Status st = LocalEngine::load(dir.file("nothing-here"), {}, engine);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("nothing-here"), std::string::npos)
      << st.message();
}

TEST_F(EngineLoadErrors, ManifestNotJson) {
  ASSERT_TRUE(rowParallelEngine(c, 2)
                  .write(dir.path(), [](std::string &t) { t.pop_back(); })
                  .isOk());
  expectError({"engine.json", "not valid JSON"});
}

TEST_F(EngineLoadErrors, NotATpcEngine) {
  ASSERT_TRUE(rowParallelEngine(c, 2)
                  .write(dir.path(),
                         [](std::string &t) {
                           t.replace(t.find("tpc-engine"), 10, "other-thing");
                         })
                  .isOk());
  expectError({"engine.json", "'other-thing'", "tpc-engine"});
}

TEST_F(EngineLoadErrors, NewerFormatVersion) {
  ASSERT_TRUE(rowParallelEngine(c, 2)
                  .write(dir.path(),
                         [](std::string &t) {
                           size_t at = t.find("\"format_version\": 1");
                           t.replace(at, 19, "\"format_version\": 7");
                         })
                  .isOk());
  expectError({"engine.json", "version 7", "newer", "version 1"});
}

TEST_F(EngineLoadErrors, RanksDoNotMatchTp) {
  ASSERT_TRUE(rowParallelEngine(c, 2)
                  .write(dir.path(),
                         [](std::string &t) {
                           // The last "tp" is the top-level one
                           // ("options" holds one too).
                           size_t at = t.rfind("\"tp\": 2");
                           t.replace(at, 7, "\"tp\": 3");
                         })
                  .isOk());
  expectError({"engine.json", "\"ranks\" has 2 entries but tp is 3"});
}

TEST_F(EngineLoadErrors, UnknownInputDType) {
  ASSERT_TRUE(rowParallelEngine(c, 2)
                  .write(dir.path(),
                         [](std::string &t) {
                           size_t at = t.find("\"f32\"");
                           t.replace(at, 5, "\"f99\"");
                         })
                  .isOk());
  expectError({"engine.json", "'x'", "unknown dtype 'f99'"});
}

TEST_F(EngineLoadErrors, FileOutsideFolder) {
  ASSERT_TRUE(rowParallelEngine(c, 2)
                  .write(dir.path(),
                         [](std::string &t) {
                           size_t at = t.find("\"rank1.plan\"");
                           t.replace(at, 12, "\"../rank1.plan\"");
                         })
                  .isOk());
  expectError({"engine.json", "'../rank1.plan'", "not a plain file name"});
}

TEST_F(EngineLoadErrors, MissingPlanFile) {
  ASSERT_TRUE(rowParallelEngine(c, 2).write(dir.path()).isOk());
  std::filesystem::remove(file("rank1.plan"));
  expectError({"rank1.plan: missing"});
}

TEST_F(EngineLoadErrors, MissingWeightsFile) {
  ASSERT_TRUE(rowParallelEngine(c, 2).write(dir.path()).isOk());
  std::filesystem::remove(file("rank0.safetensors"));
  expectError({"rank0.safetensors: missing"});
}

TEST_F(EngineLoadErrors, AlteredPlanByte) {
  ASSERT_TRUE(rowParallelEngine(c, 2).write(dir.path()).isOk());
  flipByte(file("rank1.plan"), 3);
  expectError({"rank1.plan: sha256 mismatch", "engine.json says",
               "file has"});
}

TEST_F(EngineLoadErrors, AlteredSafetensors) {
  ASSERT_TRUE(rowParallelEngine(c, 2).write(dir.path()).isOk());
  flipByte(file("rank1.safetensors"), -1);
  expectError({"rank1.safetensors: sha256 mismatch (engine.json says "});
}

TEST_F(EngineLoadErrors, SizeMismatch) {
  ASSERT_TRUE(rowParallelEngine(c, 2).write(dir.path()).isOk());
  std::ofstream(file("rank0.safetensors"), std::ios::app) << "x";
  expectError({"rank0.safetensors: size mismatch"});
}

TEST_F(EngineLoadErrors, PlanNotProtobuf) {
  ASSERT_TRUE(mlpEngine(c).write(dir.path()).isOk());
  // Garbage with a manifest that vouches for it.
  std::ofstream(file("rank0.plan"), std::ios::binary | std::ios::trunc)
      << "\xff\xff\xff\xff garbage";
  ASSERT_TRUE(resealManifest(dir.path()).isOk());
  expectError({"rank0.plan", "not a valid tpc.plan.Plan"});
}

TEST_F(EngineLoadErrors, NewerPlanVersion) {
  EngineBuilder eb = mlpEngine(c);
  eb.rank(0).plan().set_format_version(kPlanFormatVersion + 1);
  expectLoadError(
      eb, {"rank0.plan",
           "plan format version " + std::to_string(kPlanFormatVersion + 1),
           "version " + std::to_string(kPlanFormatVersion)});
}

TEST_F(EngineLoadErrors, PlanForAnotherRank) {
  EngineBuilder eb = rowParallelEngine(c, 2);
  eb.rank(1).plan().set_rank(0);
  expectLoadError(eb, {"rank1.plan", "for rank 0 of 2", "lists it for rank 1"});
}

TEST_F(EngineLoadErrors, StepBufferIdOutOfRange) {
  EngineBuilder eb = mlpEngine(c);
  eb.rank(0).plan().mutable_steps(1)->set_inputs(1, 99);
  expectLoadError(eb, {"rank0.plan", "step 1 (Add, node 'add')",
                       "refers to buffer 99"});
}

TEST_F(EngineLoadErrors, BufferIdsNotDense) {
  EngineBuilder eb = mlpEngine(c);
  eb.rank(0).plan().mutable_buffers(2)->set_id(17);
  expectLoadError(eb, {"rank0.plan", "buffer id 17 is out of range"});
}

TEST_F(EngineLoadErrors, DuplicateBufferId) {
  EngineBuilder eb = mlpEngine(c);
  eb.rank(0).plan().mutable_buffers(2)->set_id(1);
  expectLoadError(eb, {"rank0.plan", "buffer id 1 is used twice"});
}

TEST_F(EngineLoadErrors, InvalidDType) {
  EngineBuilder eb = mlpEngine(c);
  eb.rank(0).plan().mutable_buffers(3)->set_dtype(42);
  expectLoadError(eb, {"rank0.plan", "buffer 3 ('xw')", "invalid dtype 42"});
}

TEST_F(EngineLoadErrors, NegativeDimension) {
  EngineBuilder eb = mlpEngine(c);
  eb.rank(0).plan().mutable_buffers(3)->set_shape(0, -2);
  expectLoadError(eb, {"rank0.plan", "buffer 3 ('xw')", "negative dimension"});
}

TEST_F(EngineLoadErrors, ArenaOffsetBeyondArena) {
  EngineBuilder eb = mlpEngine(c);
  plan::Plan &p = eb.rank(0).plan();
  p.mutable_buffers(4)->set_offset(p.arena_bytes() - 4);
  expectLoadError(eb, {"rank0.plan", "buffer 4 ('a')", "outside the arena"});
}

// A damaged arena size (found by fuzzing: 4 GiB for a few bytes of
// buffers) is refused before anything is allocated.
TEST_F(EngineLoadErrors, ArenaFarLargerThanItsBuffers) {
  EngineBuilder eb = mlpEngine(c);
  eb.rank(0).plan().set_arena_bytes(uint64_t(1) << 32);
  expectLoadError(eb, {"rank0.plan", "arena_bytes 4294967296",
                       "bytes its buffers use"});
}

// An output that partly overlaps an input in the arena (found by fuzzing:
// a copy then read what it had already written, and memcpy's ranges
// overlapped) is refused; an exact overlap (in place) is not.
TEST_F(EngineLoadErrors, OutputPartlyOverlapsInput) {
  EngineBuilder eb = mlpEngine(c);
  plan::Plan &p = eb.rank(0).plan();
  // Step 1 (Add) reads buffer 3 ('xw') and writes buffer 4 ('a').
  p.mutable_buffers(4)->set_offset(p.buffers(3).offset() + 4);
  expectLoadError(eb, {"rank0.plan", "step 1 (Add, node 'add')",
                       "output 0 (buffer 4 ('a'", "partly overlaps input 0",
                       "buffer 3 ('xw'"});
}

TEST_F(EngineLoadErrors, WeightTensorMissing) {
  EngineBuilder eb = mlpEngine(c);
  eb.rank(0).plan().mutable_buffers(1)->set_tensor("nope");
  expectLoadError(eb, {"rank0.plan", "buffer 1", "'nope'",
                       "rank0.safetensors does not have"});
}

TEST_F(EngineLoadErrors, WeightTensorWrongShape) {
  EngineBuilder eb = mlpEngine(c);
  // The file holds w as 5x4 while the plan says 4x5.
  eb.rank(0).tensors()[0].desc.shape = {c.n, c.k};
  expectLoadError(eb, {"rank0.plan", "buffer 1", "'w'", "f32[5x4]"});
}

TEST_F(EngineLoadErrors, StepWritesWeight) {
  EngineBuilder eb = mlpEngine(c);
  eb.rank(0).plan().mutable_steps(2)->set_outputs(0, 2);
  expectLoadError(eb, {"step 2 (Relu, node 'relu')", "read-only weight"});
}

TEST_F(EngineLoadErrors, UnknownKernel) {
  EngineBuilder eb = mlpEngine(c);
  eb.rank(0).plan().mutable_steps(2)->set_kernel("FancyRelu");
  expectLoadError(eb, {"rank0.plan", "step 2 (FancyRelu, node 'relu')",
                       "unknown kernel 'FancyRelu'"});
}

TEST_F(EngineLoadErrors, KernelRejectsOperands) {
  EngineBuilder eb = mlpEngine(c);
  // MatMul(x, b): inner dims disagree.
  eb.rank(0).plan().mutable_steps(0)->set_inputs(1, 2);
  expectLoadError(eb, {"rank0.plan", "step 0 (MatMul, node 'mm')",
                       "MatMul rejected its operands", "f32[2x4]",
                       "f32[5]"});
}

TEST_F(EngineLoadErrors, CollectiveShapesDisagree) {
  EngineBuilder eb = columnParallelEngine(c, 3);
  // Rank 1's AllGather claims an even split of 5 columns.
  plan::Step *s = eb.rank(1).plan().mutable_steps(2);
  s->clear_attrs();
  *s->add_attrs() = intsAttr("axis", {1});
  expectLoadError(eb, {"rank1.plan", "step 2 (AllGather, node 'allgather')",
                       "give 'sizes'"});
}

TEST_F(EngineLoadErrors, CollectiveWithoutAxis) {
  EngineBuilder eb = columnParallelEngine(c, 3);
  eb.rank(0).plan().mutable_steps(2)->clear_attrs();
  expectLoadError(eb, {"rank0.plan", "step 2 (AllGather",
                       "needs an integer attribute 'axis'"});
}

TEST_F(EngineLoadErrors, CollectiveWithSeveralParts) {
  EngineBuilder eb = columnParallelEngine(c, 3);
  plan::Step *s = eb.rank(0).plan().mutable_steps(2);
  s->clear_attrs();
  *s->add_attrs() = intsAttr("axis", {1});
  *s->add_attrs() = intsAttr("sizes", {3, 2});
  *s->add_attrs() = intsAttr("parts", {2, 3});
  expectLoadError(eb, {"rank0.plan", "step 2 (AllGather",
                       "'parts' lists 2 parts"});
}

TEST_F(EngineLoadErrors, BindingNotInManifest) {
  EngineBuilder eb = mlpEngine(c);
  eb.rank(0).plan().mutable_inputs(0)->set_name("z");
  expectLoadError(eb, {"rank0.plan", "engine.json lists input 'x'",
                       "does not bind"});
}

TEST_F(EngineLoadErrors, BindingShapeDiffersFromManifest) {
  EngineBuilder eb = mlpEngine(c);
  eb.addOutput("extra", {DType::F32, {1}});
  eb.rank(0).bindOutput("extra", 3);
  expectLoadError(eb, {"rank0.plan", "output 'extra'", "f32[2x5] in the plan",
                       "f32[1] in engine.json"});
}

} // namespace
