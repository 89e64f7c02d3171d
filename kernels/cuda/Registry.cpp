//===- Registry.cpp - The table of CUDA kernels and their context ---------===//
#include "kernels/NamedTable.h"
#include "kernels/cuda/Adapters.h"
#include "kernels/cuda/Kernels.h"

#include "kernels/cpu/Registry.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

namespace tpc::cuda {

int deviceSmCount() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 ||
      device >= kMaxDevices) {
    (void)cudaGetLastError(); // the failed query must not look like a
                              // launch error of the next kernel
    return 132;
  }
  int n = cache[device].load(std::memory_order_relaxed);
  if (n > 0)
    return n;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) !=
          cudaSuccess ||
      n <= 0) {
    (void)cudaGetLastError();
    n = 132;
  }
  cache[device].store(n, std::memory_order_relaxed);
  return n;
}

Status KernelContext::create(size_t workspaceBytes, bool allowTf32,
                             std::unique_ptr<KernelContext> &out) {
  out.reset();
  std::unique_ptr<KernelContext> c(new KernelContext());
  TPC_CUDA_CHECK(cudaGetDevice(&c->device_));
  TPC_CUBLAS_CHECK(cublasLtCreate(&c->lt_));
  if (workspaceBytes) {
    TPC_CUDA_CHECK(cudaMalloc(&c->workspace_, workspaceBytes));
    c->workspaceBytes_ = workspaceBytes;
  }
  c->allowTf32_ = allowTf32;
  TPC_CUDA_CHECK(
      cudaMalloc(reinterpret_cast<void **>(&c->indexRecord_),
                 kIndexRecordWords * sizeof(int64_t)));
  const int64_t clear[kIndexRecordWords] = {0, INT64_MAX, 0};
  TPC_CUDA_CHECK(cudaMemcpy(c->indexRecord_, clear, sizeof(clear),
                            cudaMemcpyHostToDevice));
  out = std::move(c);
  return Status::ok();
}

Status KernelContext::readIndexRecord(int64_t out[kIndexRecordWords]) const {
  TPC_CUDA_CHECK(cudaMemcpy(out, indexRecord_,
                            kIndexRecordWords * sizeof(int64_t),
                            cudaMemcpyDeviceToHost));
  if (out[0] != 0) {
    const int64_t clear[kIndexRecordWords] = {0, INT64_MAX, 0};
    TPC_CUDA_CHECK(cudaMemcpy(indexRecord_, clear, sizeof(clear),
                              cudaMemcpyHostToDevice));
  }
  return Status::ok();
}

KernelContext::~KernelContext() {
  // Destructors cannot report; a failure here leaks at worst.
  if (workspace_)
    (void)cudaFree(workspace_);
  if (indexRecord_)
    (void)cudaFree(indexRecord_);
  if (lt_)
    (void)cublasLtDestroy(lt_);
}

namespace {
class IndexCheckedLaunch final : public PreparedKernel {
public:
  IndexCheckedLaunch(std::unique_ptr<PreparedKernel> inner, IndexCheck check,
                     int64_t *record)
      : inner_(std::move(inner)), check_(check), record_(record) {}
  Status run(const void *const *inputs, void *const *outputs,
             cudaStream_t stream) override {
    TPC_RETURN_IF_ERROR(inner_->run(inputs, outputs, stream));
    cudaError_t err =
        checkIndicesKernel(check_, inputs[check_.input], record_, stream);
    return err == cudaSuccess ? Status::ok()
                              : cudaStatus(err, "index check launch");
  }
  const IndexCheck *indexCheck() const override { return &check_; }

private:
  std::unique_ptr<PreparedKernel> inner_;
  IndexCheck check_;
  int64_t *record_;
};
} // namespace

std::unique_ptr<PreparedKernel>
indexChecked(const KernelContext &ctx, std::unique_ptr<PreparedKernel> inner,
             size_t input, const TensorDesc &indices,
             const std::vector<int64_t> &dims) {
  IndexCheck c;
  c.slot = ctx.newIndexSlot();
  c.input = input;
  c.count = indices.numel();
  c.indexType = indices.dtype;
  c.depth = int(std::min<size_t>(std::max<size_t>(dims.size(), 1),
                                 size_t(kMaxIndexDepth)));
  for (int i = 0; i < c.depth; ++i)
    c.dims[i] = dims.empty() ? 0 : dims[size_t(i)];
  return std::make_unique<IndexCheckedLaunch>(std::move(inner), c,
                                              ctx.indexRecord());
}

Status checkCudaArith(DType t, const std::string &what) {
  if (t == DType::I8 || t == DType::U8 || t == DType::I16 ||
      t == DType::U16 || t == DType::U32 || t == DType::U64 ||
      isStorageOnlyDType(t))
    return Status::error(what + " has dtype " + dtypeName(t) +
                         ", which the CUDA arithmetic kernels do not take");
  return Status::ok();
}

static KernelTable buildTable() {
  KernelTable table;
  addElementwiseKernels(table);
  addCopyKernels(table);
  addNormKernels(table);
  addMovementKernels(table);
  addMatMulKernels(table);
  addFusedKernels(table);
  sortByName(table);
  return table;
}

const std::vector<KernelDef> &allCudaKernels() {
  static const KernelTable table = buildTable();
  return table;
}

const KernelDef *lookupCudaKernel(std::string_view name) {
  return findByName(allCudaKernels(), name);
}

} // namespace tpc::cuda
