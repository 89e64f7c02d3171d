//===- IndexCheckTest.cpp - CUDA index-reading kernels report bad indices -===//
//
// A Gather with indices outside [-dim, dim) records the smallest bad
// element and its value in the KernelContext's index record (which the
// runtime turns into the CPU's error message); in-range indices leave it
// empty, and reading a finding clears it. Skipped where no GPU can run it.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include "kernels/cuda/Registry.h"

#include <cuda_runtime_api.h>

namespace tpc::cuda::test {
namespace {

struct DeviceArray {
  void *p = nullptr;
  explicit DeviceArray(size_t bytes) { (void)cudaMalloc(&p, bytes); }
  ~DeviceArray() { (void)cudaFree(p); }
};

TEST(CudaIndexCheck, GatherRecordsTheSmallestBadElement) {
  TPC_REQUIRE_GPU();
  std::unique_ptr<KernelContext> ctx;
  ASSERT_TRUE(KernelContext::create(0, false, ctx).isOk());
  const KernelDef *def = lookupCudaKernel("Gather");
  ASSERT_NE(def, nullptr);
  std::vector<TensorDesc> in = {{DType::F32, {5, 3}}, {DType::I64, {4}}};
  std::vector<TensorDesc> out = {{DType::F32, {4, 3}}};
  std::unique_ptr<PreparedKernel> k;
  Attrs attrs;
  attrs.setInt("axis", 0);
  ASSERT_TRUE(def->prepare(*ctx, in, out, attrs, k).isOk());
  ASSERT_NE(k->indexCheck(), nullptr);
  const int64_t slot = k->indexCheck()->slot;

  std::vector<float> data(15, 1.0f);
  DeviceArray d(15 * sizeof(float)), ids(4 * sizeof(int64_t)),
      y(12 * sizeof(float));
  ASSERT_EQ(cudaMemcpy(d.p, data.data(), 15 * sizeof(float),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  auto runWith = [&](std::vector<int64_t> v, int64_t record[3]) {
    ASSERT_EQ(cudaMemcpy(ids.p, v.data(), 4 * sizeof(int64_t),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    const void *inputs[] = {d.p, ids.p};
    void *outputs[] = {y.p};
    ASSERT_TRUE(k->run(inputs, outputs, nullptr).isOk());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_TRUE(ctx->readIndexRecord(record).isOk());
  };
  int64_t record[KernelContext::kIndexRecordWords];
  runWith({4, -5, 0, 2}, record);
  EXPECT_EQ(record[0], 0) << "in-range indices recorded a finding";
  runWith({1, 7, -6, 2}, record);
  EXPECT_EQ(record[0], slot + 1);
  EXPECT_EQ(record[1], 1); // the smallest bad element, not the last
  EXPECT_EQ(record[2], 7);
  ASSERT_TRUE(ctx->readIndexRecord(record).isOk());
  EXPECT_EQ(record[0], 0) << "reading a finding must clear it";
}

} // namespace
} // namespace tpc::cuda::test
