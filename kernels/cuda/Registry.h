//===- Registry.h - The table of CUDA kernels -------------------*- C++ -*-===//
//
// The CUDA twin of kernels/cpu/Registry.h: a kernel name maps to a prepare()
// that validates operand descriptions and attributes once, at load, and binds
// them into a kernel that run() enqueues on a stream. Validation is the CPU
// kernel's own (its prepare() runs first), so both backends accept exactly
// the same plans; f16 and bf16 operands, which most CPU kernels refuse, are
// validated as f32 and computed here with f32 accumulation.
//
// run() never allocates, never synchronises and never changes the device:
// the runtime may capture it into a CUDA graph. Device pointers must be
// aligned to their element size; 16-byte alignment enables vector paths.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CUDA_REGISTRY_H
#define TPC_KERNELS_CUDA_REGISTRY_H

#include "kernels/Types.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <string_view>
#include <vector>

#include "kernels/cuda/IndexCheck.h"

namespace tpc::cuda {

/// Resources of one stream that prepared kernels may use: a cuBLASLt handle
/// and one GEMM workspace (kernels of one stream run one at a time, so they
/// share it). Created on the current device; must outlive the kernels
/// prepared with it.
class KernelContext {
public:
  static constexpr size_t kDefaultWorkspaceBytes = size_t(32) << 20;

  /// Creates the handle and allocates the workspace on the current device.
  static Status create(size_t workspaceBytes, bool allowTf32,
                       std::unique_ptr<KernelContext> &out);
  ~KernelContext();
  KernelContext(const KernelContext &) = delete;
  KernelContext &operator=(const KernelContext &) = delete;

  cublasLtHandle_t lt() const { return lt_; }
  void *workspace() const { return workspace_; }
  size_t workspaceBytes() const { return workspaceBytes_; }
  /// Whether f32 GEMMs may use TF32 tensor cores (off: exact f32 parity).
  bool allowTf32() const { return allowTf32_; }
  int device() const { return device_; }

  /// Where kernels that read indices record the first one out of range:
  /// kIndexRecordWords int64 on the device, {slot + 1 of the first kernel
  /// that found one (0: none), the smallest bad element of that kernel, its
  /// value}. The runtime reads it after each forward (readIndexRecord).
  int64_t *indexRecord() const { return indexRecord_; }
  static constexpr int kIndexRecordWords = 3;
  /// A new slot number for a kernel that checks indices.
  int64_t newIndexSlot() const { return nextIndexSlot_++; }
  /// Copies the record to `out` and, when it holds a finding, clears it.
  Status readIndexRecord(int64_t out[kIndexRecordWords]) const;

private:
  KernelContext() = default;
  cublasLtHandle_t lt_ = nullptr;
  void *workspace_ = nullptr;
  size_t workspaceBytes_ = 0;
  bool allowTf32_ = false;
  int device_ = 0;
  int64_t *indexRecord_ = nullptr;
  mutable int64_t nextIndexSlot_ = 0;
};

/// A kernel bound to fixed operand shapes and attributes.
class PreparedKernel {
public:
  virtual ~PreparedKernel() = default;
  /// Enqueues the kernel on `stream`. `inputs[i]` / `outputs[i]` are device
  /// pointers to dense row-major data of the prepared descriptions (nullptr
  /// for absent optional operands). Reports launch errors; errors that
  /// happen while the kernel runs surface at the next synchronisation.
  virtual Status run(const void *const *inputs, void *const *outputs,
                     cudaStream_t stream) = 0;
  /// For kernels that read indices: what they check into the context's
  /// index record; nullptr otherwise.
  virtual const IndexCheck *indexCheck() const { return nullptr; }
};

struct KernelDef {
  const char *name;
  const char *summary;
  Status (*prepare)(const KernelContext &ctx,
                    const std::vector<TensorDesc> &inputs,
                    const std::vector<TensorDesc> &outputs, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &out);
};

/// Every CUDA kernel, sorted by name.
const std::vector<KernelDef> &allCudaKernels();
/// nullptr when there is no CUDA kernel of that name.
const KernelDef *lookupCudaKernel(std::string_view name);

} // namespace tpc::cuda

#endif // TPC_KERNELS_CUDA_REGISTRY_H
