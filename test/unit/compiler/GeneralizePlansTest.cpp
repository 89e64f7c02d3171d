//===- GeneralizePlansTest.cpp - One plan from plans at sample points -----===//
//
// generalizePlans() on hand-written plans of one symbol `s` (1..4): the
// plans at the samples are matched through their dataflow, so a sample
// where two constants coincide (one tensor) or a view folds away (one
// buffer) still matches; a sample with other steps, or buffers that meet
// there without being views of one another, is refused by name.
//
//===----------------------------------------------------------------------===//
#include "compiler/Engine/RunTimeDims.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace tpc;

namespace {

constexpr int32_t kI64 = 7; // ONNX's INT64

plan::Buffer *addBuffer(plan::Plan &p, std::vector<int64_t> shape,
                        uint64_t offset) {
  plan::Buffer *b = p.add_buffers();
  b->set_id(uint32_t(p.buffers_size() - 1));
  b->set_dtype(kI64);
  for (int64_t d : shape)
    b->add_shape(d);
  b->set_offset(offset);
  return b;
}

uint32_t addWeight(SerializedRank &r, const std::string &name,
                   std::vector<int64_t> values) {
  plan::Buffer *b =
      addBuffer(r.plan, {1, 1, int64_t(values.size())}, /*offset=*/0);
  b->set_kind(plan::Buffer::WEIGHT);
  b->set_tensor(name);
  WeightSlice w;
  w.tensor = name;
  w.isConstant = true;
  w.desc = {DType::I64, {1, 1, int64_t(values.size())}};
  w.data.resize(values.size() * sizeof(int64_t));
  std::memcpy(w.data.data(), values.data(), w.data.size());
  r.weights.push_back(w);
  return b->id();
}

void addStep(plan::Plan &p, const std::string &kernel,
             std::vector<uint32_t> inputs, uint32_t output) {
  plan::Step *st = p.add_steps();
  st->set_kernel(kernel);
  st->set_node(kernel + std::to_string(p.steps_size()));
  for (uint32_t i : inputs)
    st->add_inputs(i);
  st->add_outputs(output);
}

/// The program at s = n: y = Cast(x) [1, n]; v = y viewed as [1, 1, n];
/// z = v + positions; out = z + zeros. At n = 1 the view is the identity
/// (no buffer of its own) and the two constants are equal (one tensor),
/// as the compiler's folding and CSE leave them.
SerializedRank programAt(int64_t n) {
  SerializedRank r;
  plan::Plan &p = r.plan;
  bool unit = n == 1;
  uint32_t x = addBuffer(p, {1, n}, 0)->id();
  uint32_t y = addBuffer(p, {1, n}, 256)->id();
  uint32_t v = unit ? y : addBuffer(p, {1, 1, n}, 256)->id();
  std::vector<int64_t> positions, zeros(size_t(n), 0);
  for (int64_t i = 0; i < n; ++i)
    positions.push_back(i);
  uint32_t pos = addWeight(r, "const.0", positions);
  uint32_t zero = unit ? pos : addWeight(r, "const.1", zeros);
  uint32_t z = addBuffer(p, {1, 1, n}, 512)->id();
  uint32_t out = addBuffer(p, {1, 1, n}, 768)->id();
  addStep(p, "Cast", {x}, y);
  addStep(p, "Add", {v, pos}, z);
  addStep(p, "Add", {z, zero}, out);
  plan::Binding *in = p.add_inputs();
  in->set_name("x");
  in->set_buffer(x);
  plan::Binding *o = p.add_outputs();
  o->set_name("out");
  o->set_buffer(out);
  return r;
}

RunTimeDims oneSymbol() {
  RunTimeDims dims;
  dims.symbols.push_back({"s", 1, 4});
  dims.inputSymbols["x"] = {-1, 0};
  dims.staticDims["x"] = {1, 0};
  return dims;
}

std::vector<PlanSample> samplesOf(const RunTimeDims &dims,
                                  SerializedRank (*make)(int64_t)) {
  std::vector<PlanSample> samples;
  for (const SymbolValues &v : dims.samplePoints())
    samples.push_back({v, {make(v[0])}});
  return samples;
}

/// The error generalizePlans() gives for the program `make` writes ("" when
/// it accepts it).
std::string refusal(SerializedRank (*make)(int64_t)) {
  RunTimeDims d = oneSymbol();
  std::vector<SerializedRank> ranks = {make(4)};
  std::string error;
  bool ok = generalizePlans(ranks, d, samplesOf(d, make), error);
  EXPECT_EQ(ok, error.empty());
  return error;
}

/// Expects generalizePlans() to refuse the program `make` writes with an
/// error containing `message`.
void expectRefusal(SerializedRank (*make)(int64_t),
                   const std::string &message) {
  std::string error = refusal(make);
  EXPECT_NE(error.find(message), std::string::npos) << error;
}

std::string dims(const plan::Plan &p, int buffer) {
  std::string s;
  for (const plan::Expr &e : p.buffers(buffer).dims())
    s += (s.empty() ? "" : ",") + exprToString(e, p);
  return s;
}

TEST(GeneralizePlans, MatchesThroughTheDataflow) {
  RunTimeDims d = oneSymbol();
  EXPECT_EQ(d.samplePoints(), (std::vector<SymbolValues>{{3}, {1}, {2}}));
  std::vector<SerializedRank> ranks = {programAt(4)};
  std::string error;
  ASSERT_TRUE(generalizePlans(ranks, d, samplesOf(d, programAt), error))
      << error;
  const plan::Plan &p = ranks[0].plan;
  EXPECT_EQ(p.format_version(), kPlanFormatVersion);
  ASSERT_EQ(p.symbols_size(), 1);
  EXPECT_EQ(p.symbols(0).name(), "s");
  // The view keeps its own shape, fitted from the samples where it exists
  // and checked by its element count where it folded away.
  EXPECT_EQ(dims(p, 0), "1,s");
  EXPECT_EQ(dims(p, 2), "1,1,s");
  // Both constants are leading blocks, each checked against the one
  // tensor they are at s = 1.
  EXPECT_EQ(p.buffers(3).tensor(), "const.0");
  EXPECT_TRUE(p.buffers(3).leading_block());
  EXPECT_EQ(p.buffers(4).tensor(), "const.1");
  EXPECT_TRUE(p.buffers(4).leading_block());
  EXPECT_EQ(ranks[0].weights.size(), 2u);
}

/// The program with one more input to the last Add: an i64 scalar that
/// is s - 1 (a past length computed from the token count).
SerializedRank withCount(int64_t n) {
  SerializedRank r = programAt(n);
  uint32_t count = addWeight(r, "count", {n - 1});
  plan::Buffer *b = r.plan.mutable_buffers(int(count));
  b->clear_shape();
  r.weights.back().desc.shape = {};
  r.plan.mutable_steps(2)->add_inputs(count);
  return r;
}

TEST(GeneralizePlans, SmallIntegerConstantsFollowTheSymbols) {
  RunTimeDims d = oneSymbol();
  std::vector<SerializedRank> ranks = {withCount(4)};
  std::string error;
  ASSERT_TRUE(generalizePlans(ranks, d, samplesOf(d, withCount), error))
      << error;
  const plan::Buffer &b =
      ranks[0].plan.buffers(ranks[0].plan.buffers_size() - 1);
  EXPECT_EQ(b.tensor(), "count");
  EXPECT_EQ(b.dims_size(), 0);
  ASSERT_EQ(b.values_size(), 1);
  EXPECT_EQ(exprToString(b.values(0), ranks[0].plan), "-1 + s");
}

SerializedRank withoutLastStep(int64_t n) {
  SerializedRank r = programAt(n);
  if (n == 2)
    r.plan.mutable_steps()->RemoveLast();
  return r;
}

TEST(GeneralizePlans, OtherStepsAreRefused) {
  expectRefusal(withoutLastStep,
                "rank 0: the program at s=2 differs from the one at the "
                "maxima (s=4): 2 steps, not 3");
}

SerializedRank viewsApart(int64_t n) {
  SerializedRank r = programAt(n);
  // At the maxima the "view" lives elsewhere: it is another tensor.
  if (n == 4)
    r.plan.mutable_buffers(2)->set_offset(1024);
  return r;
}

TEST(GeneralizePlans, BuffersThatMeetMustBeViews) {
  expectRefusal(viewsApart,
                "the program at s=1 differs from the one at the maxima "
                "(s=4): buffer 1 and buffer 2 are one buffer there but not "
                "views of one another at the maxima");
}

SerializedRank otherZeros(int64_t n) {
  SerializedRank r = programAt(n);
  // A constant that is not the leading block of its value at the maxima.
  if (n == 2) {
    int64_t one = 1;
    std::memcpy(r.weights[1].data.data(), &one, sizeof(one));
  }
  return r;
}

TEST(GeneralizePlans, ConstantsMustBeLeadingBlocks) {
  expectRefusal(otherZeros,
                "weight 'const.1' (a constant computed from the input shapes) "
                "has shape 1x1x2 and it is not the leading block of its value "
                "at the maxima at s=2");
}

} // namespace
