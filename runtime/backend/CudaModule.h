//===- CudaModule.h - The entry point of the CUDA backend module -*- C++ -*-===//
//
// The CUDA backend is a shared module (libtpc_backend_cuda.so) that `tpc`
// opens only when a run asks for --backend cuda: a CPU run, a compile and an
// import never load cuBLASLt, the CUDA runtime or NCCL (cuBLASLt alone maps
// half a gigabyte), and a `tpc` built with CUDA still starts on a machine
// without the CUDA libraries. The module exports one C function returning a
// table of the Backend.h factories.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_BACKEND_CUDAMODULE_H
#define TPC_RUNTIME_BACKEND_CUDAMODULE_H

#include "runtime/backend/Backend.h"

#include <cstdint>

namespace tpc::runtime {

/// Bumped whenever a type crossing the module boundary changes.
constexpr uint32_t kCudaModuleAbi = 2;

struct CudaModuleApi {
  uint32_t abi;
  /// sizeof of the option and manifest types the module was built with, so
  /// that a module from another build is refused rather than misread.
  uint32_t optionsSize;
  uint32_t manifestSize;
  Status (*createRunner)(const std::string &dir, const GpuRunOptions &options,
                         std::unique_ptr<EngineRunner> &out);
  Status (*newNcclId)(std::vector<uint8_t> &bytes);
  Status (*createRankRunner)(const EngineManifest &manifest, int rank,
                             int device, const std::vector<uint8_t> &ncclId,
                             const GpuRunOptions &options,
                             std::unique_ptr<EngineRunner> &out);
};

} // namespace tpc::runtime

/// The module's one exported symbol.
#define TPC_CUDA_MODULE_ENTRY "tpcCudaModuleApi"
extern "C" const tpc::runtime::CudaModuleApi *tpcCudaModuleApi();

#endif // TPC_RUNTIME_BACKEND_CUDAMODULE_H
