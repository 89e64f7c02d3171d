//===- ParityTableTest.cpp - The parity table covers the CUDA registry ----===//
//
// Runs without a GPU: every CUDA kernel has at least one parity case, the
// case names are unique test names, and the CPU reference accepts every
// case (so a GPU run fails only on the GPU's results).
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include "kernels/cuda/Registry.h"

#include <cctype>
#include <map>
#include <set>

namespace tpc::cuda::test {
namespace {

TEST(ParityTable, EveryCudaKernelHasACase) {
  std::map<std::string, int> count;
  for (const ParityCase &c : allParityCases())
    ++count[c.kernel];
  for (const KernelDef &d : allCudaKernels())
    EXPECT_GT(count[d.name], 0)
        << "CUDA kernel " << d.name
        << " has no parity case: add one to test/unit/cuda/*Cases.cpp";
  for (const auto &[name, n] : count)
    EXPECT_NE(lookupCudaKernel(name), nullptr)
        << n << " parity cases name " << name << ", which is no CUDA kernel";
}

TEST(ParityTable, NamesAreUniqueTestNames) {
  std::set<std::string> seen;
  for (const ParityCase &c : allParityCases()) {
    EXPECT_TRUE(seen.insert(c.name).second) << "duplicate case " << c.name;
    for (char ch : c.name)
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')
          << "case name " << c.name;
  }
}

TEST(ParityTable, InputsAreNotAllZero) {
  for (const ParityCase &c : allParityCases()) {
    bool any = c.inputs.empty();
    int64_t elems = 0;
    for (const Tensor &t : c.inputs) {
      if (cpu::isAbsent(t.desc))
        continue;
      elems += t.numel();
      for (int64_t i = 0; i < t.numel() && !any; ++i)
        any = t.at(i) != 0;
    }
    EXPECT_TRUE(any || elems == 0) << c.name << " has only zero inputs";
  }
}

TEST(ParityTable, CpuReferenceRunsEveryCase) {
  for (const ParityCase &c : allParityCases()) {
    std::vector<Tensor> outs;
    Status st = cpuReference(c, outs);
    EXPECT_TRUE(st.isOk()) << c.name << ": " << st.message();
  }
}

} // namespace
} // namespace tpc::cuda::test
