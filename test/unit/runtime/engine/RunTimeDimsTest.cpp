//===- RunTimeDimsTest.cpp - Plans with run-time dimensions ---------------===//
//
// A hand-written plan whose row count is the symbol `rows` (1..8): a MatMul
// by a weight (packed once at load, shared by every binding), plus a
// constant that is the leading block of its value at the maxima. The
// engine runs at several row counts in any order against a float64
// reference; bad values, bad expressions and bad bindings are refused.
//
//===----------------------------------------------------------------------===//
#include "EngineBuilder.h"

#include "../StatusAssert.h"
#include "../TempDir.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using namespace tpc;
using namespace tpc::runtime;
using namespace tpc::test;

namespace {

constexpr int64_t kMaxRows = 8, kK = 4, kN = 3;

/// `rows` times `coeff` plus `constant`, as a plan expression.
plan::Expr expr(int64_t coeff, int64_t constant) {
  plan::Expr e;
  if (coeff) {
    e.add_coeffs(coeff);
    e.add_masks(1);
  }
  if (constant || !coeff) {
    e.add_coeffs(constant);
    e.add_masks(0);
  }
  return e;
}

float weightAt(int64_t k, int64_t n) {
  return 0.25f * float(k) - 0.5f * float(n);
}
float blockAt(int64_t r, int64_t n) { return float(r * 10 + n); }

struct Engine {
  /// Edits the plan before it is written (for the refusal tests).
  std::function<void(plan::Plan &)> edit;

  Status write(const std::string &dir) {
    EngineBuilder b(1);
    RankBuilder &r = b.rank(0);
    uint32_t x = r.arena("x", DType::F32, {kMaxRows, kK});
    std::vector<float> w, c;
    for (int64_t k = 0; k < kK; ++k)
      for (int64_t n = 0; n < kN; ++n)
        w.push_back(weightAt(k, n));
    for (int64_t i = 0; i < kMaxRows; ++i)
      for (int64_t n = 0; n < kN; ++n)
        c.push_back(blockAt(i, n));
    uint32_t wb = r.weight("w", w, {kK, kN});
    uint32_t cb = r.weight("c", c, {kMaxRows, kN});
    uint32_t xw = r.arena("xw", DType::F32, {kMaxRows, kN});
    uint32_t y = r.arena("y", DType::F32, {kMaxRows, kN});
    r.step("MatMul", {x, wb}, {xw});
    r.step("Add", {xw, cb}, {y});
    r.bindInput("x", x);
    r.bindOutput("y", y);
    plan::Plan &p = r.plan();
    p.set_format_version(2);
    plan::Symbol *s = p.add_symbols();
    s->set_name("rows");
    s->set_min(1);
    s->set_max(kMaxRows);
    for (uint32_t id : {x, xw, y, cb}) {
      plan::Buffer *buf = p.mutable_buffers(int(id));
      *buf->add_dims() = expr(1, 0);
      *buf->add_dims() = expr(0, buf->shape(1));
    }
    p.mutable_buffers(int(cb))->set_leading_block(true);
    if (edit)
      edit(p);
    b.addInput("x", {DType::F32, {kMaxRows, kK}});
    b.addOutput("y", {DType::F32, {kMaxRows, kN}});
    return b.write(dir, [](std::string &text) {
      nlohmann::json m = nlohmann::json::parse(text);
      m["symbols"] = {{{"name", "rows"}, {"min", 1}, {"max", kMaxRows}}};
      m["inputs"][0]["dims"] = {"rows", std::to_string(kK)};
      m["outputs"][0]["dims"] = {"rows", std::to_string(kN)};
      text = m.dump(2);
    });
  }
};

/// Runs `session` on `rows` rows of x and checks y against float64.
void runAndCheck(Session &session, int64_t rows) {
  std::vector<float> x;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < kK; ++k)
      x.push_back(float((i + 1) * (k - 1)) + 0.5f);
  ASSERT_OK(session.setInput("x", {DType::F32, {rows, kK}}, x.data()));
  ASSERT_OK(session.run());
  TensorDesc desc;
  const void *data = nullptr;
  ASSERT_TRUE(session.output("y", desc, data));
  ASSERT_EQ(desc.shape, (Shape{rows, kN}));
  const float *y = static_cast<const float *>(data);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t n = 0; n < kN; ++n) {
      double want = blockAt(i, n);
      for (int64_t k = 0; k < kK; ++k)
        want += double(x[size_t(i * kK + k)]) * weightAt(k, n);
      EXPECT_NEAR(y[i * kN + n], want, 1e-4)
          << "rows " << rows << " at " << i << "," << n;
    }
}

TEST(RunTimeDims, RunsEveryRowCountInAnyOrder) {
  TempDir dir;
  ASSERT_OK(Engine().write(dir.path()));
  std::unique_ptr<RankEngine> engine;
  ASSERT_OK(RankEngine::load(dir.path(), 0, engine));
  EXPECT_EQ(engine->plan().symbols.size(), 1u);
  EXPECT_EQ(engine->manifest().inputs[0].str(), "f32[rows x 4]");
  std::unique_ptr<Session> session;
  ASSERT_OK(Session::create(*engine, nullptr, {}, session));
  // More distinct values than the engine keeps prepared, then back.
  for (int64_t rows : {8, 3, 1, 3, 8, 2, 4, 5, 6, 7, 1, 2, 3})
    runAndCheck(*session, rows);
  EXPECT_EQ(engine->symbolValues(), (SymbolValues{3}));
}

TEST(RunTimeDims, ValuesOutsideTheRangeAreRefused) {
  TempDir dir;
  ASSERT_OK(Engine().write(dir.path()));
  std::unique_ptr<RankEngine> engine;
  ASSERT_OK(RankEngine::load(dir.path(), 0, engine));
  std::unique_ptr<Session> session;
  ASSERT_OK(Session::create(*engine, nullptr, {}, session));
  std::vector<float> x(9 * kK, 1.0f);
  Status st = session->setInput("x", {DType::F32, {9, kK}}, x.data());
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "input 'x' has shape 9x4, but the "
                                     "engine takes [rows, 4] with rows in "
                                     "1..8"))
      << st.message();
  st = session->setInput("x", {DType::F32, {2, 5}}, x.data());
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "dimension 1 must be 4")) << st.message();
  st = engine->bindSymbols({0});
  ASSERT_FALSE(st);
  EXPECT_TRUE(contains(st.message(), "'rows' is 0, outside the range 1..8"))
      << st.message();
  // A refused value leaves the engine as it was.
  runAndCheck(*session, 5);
}

TEST(RunTimeDims, BadPlansAreRefusedAtLoad) {
  struct Case {
    const char *what;
    std::function<void(plan::Plan &)> edit;
    const char *message;
  };
  std::vector<Case> cases = {
      {"version", [](plan::Plan &p) { p.set_format_version(1); },
       "a plan of format version 1 cannot have run-time dimensions"},
      {"range", [](plan::Plan &p) { p.mutable_symbols(0)->set_min(9); },
       "run-time dimension 'rows' has range 9..8"},
      {"mask",
       [](plan::Plan &p) {
         p.mutable_buffers(0)->mutable_dims(0)->set_masks(0, 2);
       },
       "names symbol bits 2, but the plan has 1 symbols"},
      {"not at max",
       [](plan::Plan &p) {
         *p.mutable_buffers(0)->mutable_dims(0) = expr(2, 0);
       },
       "expression 2*rows is 16 at the maxima, not 8"},
      {"beyond the arena",
       [](plan::Plan &p) {
         *p.mutable_buffers(0)->mutable_dims(0) = expr(-1, 16);
       },
       "dimension -rows + 16 leaves [0, 8] within the symbols' ranges"},
      {"weight",
       [](plan::Plan &p) {
         for (plan::Buffer &b : *p.mutable_buffers())
           b.set_leading_block(false);
       },
       "is a weight with a symbolic shape that is not a leading block"},
      {"values of a float weight",
       [](plan::Plan &p) {
         for (plan::Buffer &b : *p.mutable_buffers())
           if (b.tensor() == "w")
             *b.add_values() = expr(1, 0);
       },
       "has 1 value expressions, but only an i64 or i32 weight of a static "
       "shape can have them, one per element (it has 12)"},
  };
  for (const Case &c : cases) {
    TempDir dir;
    Engine e;
    e.edit = c.edit;
    ASSERT_OK(e.write(dir.path()));
    std::unique_ptr<RankEngine> engine;
    Status st = RankEngine::load(dir.path(), 0, engine);
    ASSERT_FALSE(st) << c.what;
    EXPECT_TRUE(contains(st.message(), c.message))
        << c.what << ": " << st.message();
  }
}

} // namespace
