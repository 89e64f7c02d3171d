//===- Adapters.h - Helpers of the CUDA registry adapters -------*- C++ -*-===//
//
// Internal to the CUDA kernel library: wrapping a launch lambda as a
// PreparedKernel, the index check, and the per-family functions that fill
// the table. Operands and attributes are validated by each family's
// backend-neutral params builder (kernels/<Family>.h), as on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CUDA_ADAPTERS_H
#define TPC_KERNELS_CUDA_ADAPTERS_H

#include "kernels/Family.h"
#include "kernels/cpu/Support.h"
#include "kernels/cuda/Check.h"
#include "kernels/cuda/Registry.h"

#include <memory>
#include <string>
#include <vector>

namespace tpc::cuda {

using KernelTable = std::vector<KernelDef>;

void addElementwiseKernels(KernelTable &table);
void addCopyKernels(KernelTable &table);
void addNormKernels(KernelTable &table);
void addMovementKernels(KernelTable &table);
void addMatMulKernels(KernelTable &table);
void addFusedKernels(KernelTable &table);

/// The arithmetic kernels compute f32, f64, f16, bf16, i32 and i64 (and
/// bool for the logical ops); i8/u8 arithmetic is refused at load.
Status checkCudaArith(DType t, const std::string &what);

/// A PreparedKernel calling `fn(inputs, outputs, stream)`, which returns a
/// cudaError_t; a failure is reported naming `name`.
template <class Fn> class LaunchKernel final : public PreparedKernel {
public:
  LaunchKernel(const char *name, Fn fn) : name_(name), fn_(std::move(fn)) {}
  Status run(const void *const *inputs, void *const *outputs,
             cudaStream_t stream) override {
    cudaError_t err = fn_(inputs, outputs, stream);
    if (err != cudaSuccess)
      return cudaStatus(err, std::string(name_) + " launch");
    return Status::ok();
  }

private:
  const char *name_;
  Fn fn_;
};

template <class Fn>
std::unique_ptr<PreparedKernel> makeLaunch(const char *name, Fn fn) {
  return std::make_unique<LaunchKernel<Fn>>(name, std::move(fn));
}

/// `inner` followed by the scan of its indices (input `input`, `indices`
/// describing them) into `ctx`'s index record, with bounds `dims` cycling
/// per element (one for Gather, GatherElements and ScatterElements, the
/// tuple's for GatherND and ScatterND).
std::unique_ptr<PreparedKernel>
indexChecked(const KernelContext &ctx, std::unique_ptr<PreparedKernel> inner,
             size_t input, const TensorDesc &indices,
             const std::vector<int64_t> &dims);

} // namespace tpc::cuda

#endif // TPC_KERNELS_CUDA_ADAPTERS_H
