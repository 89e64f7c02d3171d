//===- ParityTest.cpp - Every CUDA kernel against its CPU twin ------------===//
//
// One test per CUDA kernel, running all of its parity cases (see the
// *Cases.cpp tables): the CUDA kernel's eager and graph-replayed outputs
// against the CPU kernel's. One test per kernel rather than per case keeps
// ctest to a process per kernel (each loads cuBLASLt). Skipped, with the
// reason, where no GPU can run them.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include "kernels/cuda/Registry.h"

namespace tpc::cuda::test {
namespace {

std::vector<std::string> kernelNames() {
  std::vector<std::string> names;
  for (const KernelDef &d : allCudaKernels())
    names.push_back(d.name);
  return names;
}

class CudaParity : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaParity, MatchesCpu) {
  TPC_REQUIRE_GPU();
  int cases = 0;
  for (const ParityCase &c : allParityCases()) {
    if (c.kernel != GetParam())
      continue;
    SCOPED_TRACE(c.name);
    runParity(c);
    ++cases;
  }
  EXPECT_GT(cases, 0) << "no parity case for " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Kernels, CudaParity,
                         ::testing::ValuesIn(kernelNames()),
                         [](const ::testing::TestParamInfo<std::string> &i) {
                           return i.param;
                         });

} // namespace
} // namespace tpc::cuda::test
