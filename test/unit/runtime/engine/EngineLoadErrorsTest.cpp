//===- EngineLoadErrorsTest.cpp - Broken engines are refused at load ------===//
//
// One case per way an engine folder can be wrong. Each checks that loading
// fails and that the message names what is wrong.
//
//===----------------------------------------------------------------------===//
#include "TestEngines.h"

#include "../TempDir.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

using namespace tpc;
using namespace tpc::runtime;
using namespace tpc::test;

namespace {

/// A folder for one broken engine, and the checks that loading it fails.
class BrokenEngineFolder {
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

class EngineLoadErrors : public ::testing::Test,
                         protected BrokenEngineFolder {};

/// A broken engine case of one kind: its test name, what breaks the engine
/// and what the load error must say.
template <class Break> struct BrokenCase {
  const char *name;
  Break breakIt;
  std::vector<std::string> parts;
};

template <class Case>
std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return info.param.name;
}

template <class Break>
void PrintTo(const BrokenCase<Break> &c, std::ostream *os) {
  *os << c.name;
}

//===----------------------------------------------------------------------===//
// engine.json says something wrong
//===----------------------------------------------------------------------===//

using ManifestEdit = BrokenCase<std::function<void(std::string &)>>;

/// An edit of the engine.json text that replaces the first `from` (the last
/// where `last`) with `to`.
std::function<void(std::string &)> replacing(std::string from, std::string to,
                                             bool last = false) {
  return [=](std::string &t) {
    t.replace(last ? t.rfind(from) : t.find(from), from.size(), to);
  };
}

class ManifestErrors : public ::testing::TestWithParam<ManifestEdit>,
                       protected BrokenEngineFolder {};

TEST_P(ManifestErrors, AreRefused) {
  ASSERT_TRUE(
      rowParallelEngine(c, 2).write(dir.path(), GetParam().breakIt).isOk());
  expectError(GetParam().parts);
}

const ManifestEdit kManifestEdits[] = {
    {"ManifestNotJson", [](std::string &t) { t.pop_back(); },
     {"engine.json", "not valid JSON"}},
    {"NotATpcEngine", replacing("tpc-engine", "other-thing"),
     {"engine.json", "'other-thing'", "tpc-engine"}},
    {"NewerFormatVersion",
     replacing("\"format_version\": 1", "\"format_version\": 7"),
     {"engine.json", "version 7", "newer", "version 1"}},
    // The last "tp" is the top-level one ("options" holds one too).
    {"RanksDoNotMatchTp", replacing("\"tp\": 2", "\"tp\": 3", /*last=*/true),
     {"engine.json", "\"ranks\" has 2 entries but tp is 3"}},
    {"UnknownInputDType", replacing("\"f32\"", "\"f99\""),
     {"engine.json", "'x'", "unknown dtype 'f99'"}},
    {"FileOutsideFolder", replacing("\"rank1.plan\"", "\"../rank1.plan\""),
     {"engine.json", "'../rank1.plan'", "not a plain file name"}},
};

INSTANTIATE_TEST_SUITE_P(EngineLoadErrors, ManifestErrors,
                         ::testing::ValuesIn(kManifestEdits),
                         caseName<ManifestEdit>);

//===----------------------------------------------------------------------===//
// A file of the folder is missing or altered after it was written
//===----------------------------------------------------------------------===//

using FileDamage = BrokenCase<std::function<void(const TempDir &)>>;

std::function<void(const TempDir &)> removing(std::string name) {
  return [=](const TempDir &d) { std::filesystem::remove(d.file(name)); };
}

class FileErrors : public ::testing::TestWithParam<FileDamage>,
                   protected BrokenEngineFolder {};

TEST_P(FileErrors, AreRefused) {
  ASSERT_TRUE(rowParallelEngine(c, 2).write(dir.path()).isOk());
  GetParam().breakIt(dir);
  expectError(GetParam().parts);
}

const FileDamage kFileDamages[] = {
    {"MissingManifest", removing("engine.json"), {"engine.json", "missing"}},
    {"MissingPlanFile", removing("rank1.plan"), {"rank1.plan: missing"}},
    {"MissingWeightsFile", removing("rank0.safetensors"),
     {"rank0.safetensors: missing"}},
    {"AlteredPlanByte",
     [](const TempDir &d) { flipByte(d.file("rank1.plan"), 3); },
     {"rank1.plan: sha256 mismatch", "engine.json says", "file has"}},
    {"AlteredSafetensors",
     [](const TempDir &d) { flipByte(d.file("rank1.safetensors"), -1); },
     {"rank1.safetensors: sha256 mismatch (engine.json says "}},
    {"SizeMismatch",
     [](const TempDir &d) {
       std::ofstream(d.file("rank0.safetensors"), std::ios::app) << "x";
     },
     {"rank0.safetensors: size mismatch"}},
};

INSTANTIATE_TEST_SUITE_P(EngineLoadErrors, FileErrors,
                         ::testing::ValuesIn(kFileDamages),
                         caseName<FileDamage>);

//===----------------------------------------------------------------------===//
// One rank's plan is wrong
//===----------------------------------------------------------------------===//

/// Which of the test engines a plan edit starts from.
enum class Engine { Mlp, RowParallel, ColumnParallel };

EngineBuilder build(Engine e, const MlpCase &c) {
  switch (e) {
  case Engine::Mlp:
    return mlpEngine(c);
  case Engine::RowParallel:
    return rowParallelEngine(c, 2);
  case Engine::ColumnParallel:
    break;
  }
  return columnParallelEngine(c, 3);
}

/// An edit of rank `rank`'s plan in `engine`.
struct PlanEdit {
  Engine engine;
  int rank;
  std::function<void(plan::Plan &)> edit;
};

using PlanEditCase = BrokenCase<PlanEdit>;

class PlanErrors : public ::testing::TestWithParam<PlanEditCase>,
                   protected BrokenEngineFolder {};

TEST_P(PlanErrors, AreRefused) {
  const PlanEdit &e = GetParam().breakIt;
  EngineBuilder eb = build(e.engine, c);
  e.edit(eb.rank(e.rank).plan());
  expectLoadError(eb, GetParam().parts);
}

/// Rank r's AllGather (step 2 of the column-parallel engine) with the
/// integer-list attributes `attrs` instead of its own.
PlanEdit allGatherAttrs(
    int r, std::vector<std::pair<std::string, std::vector<int64_t>>> attrs) {
  return {Engine::ColumnParallel, r, [=](plan::Plan &p) {
            plan::Step *s = p.mutable_steps(2);
            s->clear_attrs();
            for (const auto &[name, values] : attrs)
              *s->add_attrs() = intsAttr(name, values);
          }};
}

/// An edit of rank 0's plan in the one-rank engine.
PlanEdit mlpPlan(std::function<void(plan::Plan &)> edit) {
  return {Engine::Mlp, 0, std::move(edit)};
}

const PlanEditCase kPlanEdits[] = {
    {"NewerPlanVersion",
     mlpPlan([](plan::Plan &p) {
       p.set_format_version(kPlanFormatVersion + 1);
     }),
     {"rank0.plan",
      "plan format version " + std::to_string(kPlanFormatVersion + 1),
      "version " + std::to_string(kPlanFormatVersion)}},
    {"PlanForAnotherRank",
     {Engine::RowParallel, 1, [](plan::Plan &p) { p.set_rank(0); }},
     {"rank1.plan", "for rank 0 of 2", "lists it for rank 1"}},
    {"StepBufferIdOutOfRange",
     mlpPlan([](plan::Plan &p) { p.mutable_steps(1)->set_inputs(1, 99); }),
     {"rank0.plan", "step 1 (Add, node 'add')", "refers to buffer 99"}},
    {"BufferIdsNotDense",
     mlpPlan([](plan::Plan &p) { p.mutable_buffers(2)->set_id(17); }),
     {"rank0.plan", "buffer id 17 is out of range"}},
    {"DuplicateBufferId",
     mlpPlan([](plan::Plan &p) { p.mutable_buffers(2)->set_id(1); }),
     {"rank0.plan", "buffer id 1 is used twice"}},
    {"InvalidDType",
     mlpPlan([](plan::Plan &p) { p.mutable_buffers(3)->set_dtype(42); }),
     {"rank0.plan", "buffer 3 ('xw')", "invalid dtype 42"}},
    {"NegativeDimension",
     mlpPlan([](plan::Plan &p) { p.mutable_buffers(3)->set_shape(0, -2); }),
     {"rank0.plan", "buffer 3 ('xw')", "negative dimension"}},
    {"ArenaOffsetBeyondArena",
     mlpPlan([](plan::Plan &p) {
       p.mutable_buffers(4)->set_offset(p.arena_bytes() - 4);
     }),
     {"rank0.plan", "buffer 4 ('a')", "outside the arena"}},
    // A damaged arena size (found by fuzzing: 4 GiB for a few bytes of
    // buffers) is refused before anything is allocated.
    {"ArenaFarLargerThanItsBuffers",
     mlpPlan([](plan::Plan &p) { p.set_arena_bytes(uint64_t(1) << 32); }),
     {"rank0.plan", "arena_bytes 4294967296", "bytes its buffers use"}},
    // An output that partly overlaps an input in the arena (found by
    // fuzzing: a copy then read what it had already written, and memcpy's
    // ranges overlapped) is refused; an exact overlap (in place) is not.
    // Step 1 (Add) reads buffer 3 ('xw') and writes buffer 4 ('a').
    {"OutputPartlyOverlapsInput",
     mlpPlan([](plan::Plan &p) {
       p.mutable_buffers(4)->set_offset(p.buffers(3).offset() + 4);
     }),
     {"rank0.plan", "step 1 (Add, node 'add')", "output 0 (buffer 4 ('a'",
      "partly overlaps input 0", "buffer 3 ('xw'"}},
    {"WeightTensorMissing",
     mlpPlan([](plan::Plan &p) { p.mutable_buffers(1)->set_tensor("nope"); }),
     {"rank0.plan", "buffer 1", "'nope'", "rank0.safetensors does not have"}},
    {"StepWritesWeight",
     mlpPlan([](plan::Plan &p) { p.mutable_steps(2)->set_outputs(0, 2); }),
     {"step 2 (Relu, node 'relu')", "read-only weight"}},
    {"UnknownKernel",
     mlpPlan([](plan::Plan &p) {
       p.mutable_steps(2)->set_kernel("FancyRelu");
     }),
     {"rank0.plan", "step 2 (FancyRelu, node 'relu')",
      "unknown kernel 'FancyRelu'"}},
    // MatMul(x, b): inner dims disagree.
    {"KernelRejectsOperands",
     mlpPlan([](plan::Plan &p) { p.mutable_steps(0)->set_inputs(1, 2); }),
     {"rank0.plan", "step 0 (MatMul, node 'mm')",
      "MatMul rejected its operands", "f32[2x4]", "f32[5]"}},
    // Rank 1's AllGather claims an even split of 5 columns.
    {"CollectiveShapesDisagree", allGatherAttrs(1, {{"axis", {1}}}),
     {"rank1.plan", "step 2 (AllGather, node 'allgather')", "give 'sizes'"}},
    {"CollectiveWithoutAxis", allGatherAttrs(0, {}),
     {"rank0.plan", "step 2 (AllGather",
      "needs an integer attribute 'axis'"}},
    {"CollectiveWithSeveralParts",
     allGatherAttrs(0, {{"axis", {1}}, {"sizes", {3, 2}}, {"parts", {2, 3}}}),
     {"rank0.plan", "step 2 (AllGather", "'parts' lists 2 parts"}},
    {"BindingNotInManifest",
     mlpPlan([](plan::Plan &p) { p.mutable_inputs(0)->set_name("z"); }),
     {"rank0.plan", "engine.json lists input 'x'", "does not bind"}},
};

INSTANTIATE_TEST_SUITE_P(EngineLoadErrors, PlanErrors,
                         ::testing::ValuesIn(kPlanEdits),
                         caseName<PlanEditCase>);

//===----------------------------------------------------------------------===//
// The rest
//===----------------------------------------------------------------------===//

TEST_F(EngineLoadErrors, MissingFolder) {
  std::unique_ptr<LocalEngine> engine;
  Status st = LocalEngine::load(dir.file("nothing-here"), {}, engine);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("nothing-here"), std::string::npos)
      << st.message();
}

TEST_F(EngineLoadErrors, PlanNotProtobuf) {
  ASSERT_TRUE(mlpEngine(c).write(dir.path()).isOk());
  // Garbage with a manifest that vouches for it.
  std::ofstream(file("rank0.plan"), std::ios::binary | std::ios::trunc)
      << "\xff\xff\xff\xff garbage";
  ASSERT_TRUE(resealManifest(dir.path()).isOk());
  expectError({"rank0.plan", "not a valid tpc.plan.Plan"});
}

TEST_F(EngineLoadErrors, WeightTensorWrongShape) {
  EngineBuilder eb = mlpEngine(c);
  // The file holds w as 5x4 while the plan says 4x5.
  eb.rank(0).tensors()[0].desc.shape = {c.n, c.k};
  expectLoadError(eb, {"rank0.plan", "buffer 1", "'w'", "f32[5x4]"});
}

TEST_F(EngineLoadErrors, BindingShapeDiffersFromManifest) {
  EngineBuilder eb = mlpEngine(c);
  eb.addOutput("extra", {DType::F32, {1}});
  eb.rank(0).bindOutput("extra", 3);
  expectLoadError(eb, {"rank0.plan", "output 'extra'", "f32[2x5] in the plan",
                       "f32[1] in engine.json"});
}

} // namespace
