//===- RegistryTest.cpp - The kernel table itself -------------------------===//
#include "KernelTestUtil.h"
#include "kernels/Norm.h"
#include "kernels/Unary.h"
#include "kernels/cpu/KernelTable.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <set>

namespace tpc::cpu::test {
namespace {

/// Every kernel that some test in this directory exercises. A kernel added
/// to the table must get a test and an entry here.
// clang-format off
const std::set<std::string> kTested = {
    // BinaryTest.cpp
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "PRelu", "Equal", "Less",
    "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Max",
    "Min", "Sum", "Mean", "Where", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
    "BitShift",
    // UnaryTest.cpp tests every kernel of kUnaryKernels (see
    // Unary.EveryListedKernelHasAReference).
    // CastTest.cpp
    "Cast",
    // MovementTest.cpp
    "Reshape", "Copy",
    "Transpose", "Expand", "Tile", "Trilu", "Concat", "Split", "BitCast",
    // SliceGatherTest.cpp
    "Slice", "Pad", "Gather", "GatherElements", "GatherND", "ScatterND",
    "ScatterElements",
    // GenerateTest.cpp
    "Shape", "Size", "Range", "ConstantOfShape",
    // ReduceTest.cpp
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
    "ReduceL2", "ReduceSumSquare", "ArgMax", "ArgMin", "TopK", "CumSum",
    // NormTest.cpp
    "Softmax", "LogSoftmax", "LayerNormalization", "RMSNormalization",
    // MatMulTest.cpp
    "MatMul", "Gemm",
    // FusedTest.cpp
    "Attention", "SwiGLU", "AddNormalization", "MatMulBias",
    // StateTest.cpp
    "CacheWrite",
    // QuantMatMulTest.cpp
    "MatMulNBits",
};
// clang-format on

TEST(Registry, EveryKernelHasATest) {
  std::set<std::string> tested = kTested;
  for (const UnaryKernelInfo &k : kUnaryKernels)
    tested.insert(k.name);
  for (const KernelDef &d : allKernels())
    EXPECT_TRUE(tested.count(d.name)) << d.name << " has no test";
  for (const std::string &name : kTested)
    EXPECT_NE(lookupKernel(name), nullptr) << name << " is not in the table";
}

TEST(Registry, SortedUniqueAndDescribed) {
  const std::vector<KernelDef> &all = allKernels();
  ASSERT_FALSE(all.empty());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_NE(all[i].prepare, nullptr) << all[i].name;
    EXPECT_GT(std::strlen(all[i].summary), 0u) << all[i].name;
    if (i > 0)
      EXPECT_LT(std::strcmp(all[i - 1].name, all[i].name), 0)
          << all[i - 1].name << " / " << all[i].name;
  }
}

TEST(Registry, Lookup) {
  const KernelDef *d = lookupKernel("Softmax");
  ASSERT_NE(d, nullptr);
  EXPECT_STREQ(d->name, "Softmax");
  EXPECT_EQ(lookupKernel("softmax"), nullptr);
  EXPECT_EQ(lookupKernel(""), nullptr);
  EXPECT_EQ(lookupKernel("Zzz"), nullptr);
}

TEST(Registry, EveryKernelRejectsMissingOperands) {
  // No kernel may crash on nonsense arity; each returns an error.
  for (const KernelDef &d : allKernels()) {
    if (std::string(d.name) == "ConstantOfShape")
      continue; // its only input is optional
    std::unique_ptr<PreparedKernel> k;
    Status s = d.prepare({}, {}, Attrs(), k);
    EXPECT_FALSE(s.isOk()) << d.name;
    EXPECT_FALSE(s.message().empty()) << d.name;
  }
}

Status refuse(const std::vector<TensorDesc> &, const std::vector<TensorDesc> &,
              const Attrs &, std::unique_ptr<PreparedKernel> &) {
  return Status::error("refused");
}
Status accept(const std::vector<TensorDesc> &, const std::vector<TensorDesc> &,
              const Attrs &, std::unique_ptr<PreparedKernel> &) {
  return Status::ok();
}

TEST(Registry, FamilyAdaptersGoByOpNotPosition) {
  // Named out of the list's order: each kernel still gets its own adapter.
  KernelTable t;
  addFamily(t, kNormKernels,
            {{NormOp::RMSNormalization, refuse},
             {NormOp::Softmax, accept},
             {NormOp::LayerNormalization, refuse},
             {NormOp::LogSoftmax, refuse}});
  ASSERT_EQ(t.size(), std::size(kNormKernels));
  for (const KernelDef &d : t) {
    std::unique_ptr<PreparedKernel> k;
    EXPECT_EQ(d.prepare({}, {}, Attrs(), k).isOk(),
              std::string(d.name) == "Softmax")
        << d.name;
  }
}

TEST(RegistryDeathTest, FamilyTableNamingAnOpTwiceAborts) {
  KernelTable t;
  EXPECT_DEATH(addFamily(t, kNormKernels,
                         {{NormOp::Softmax, accept},
                          {NormOp::Softmax, accept},
                          {NormOp::LayerNormalization, accept},
                          {NormOp::RMSNormalization, accept}}),
               "kernel Softmax has 2 adapters");
}

} // namespace
} // namespace tpc::cpu::test
