//===- Check.h - CUDA and cuBLASLt errors as tpc::Status --------*- C++ -*-===//
//
// Every CUDA runtime and cuBLASLt call in the CUDA backend goes through one
// of these macros, which turn a failure into a Status naming the call and
// return it. Nothing here exits or aborts the process.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CUDA_CHECK_H
#define TPC_KERNELS_CUDA_CHECK_H

#include "kernels/Types.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>

namespace tpc::cuda {

/// "WHAT: cudaErrorInvalidValue (invalid argument)".
Status cudaStatus(cudaError_t err, const std::string &what);
/// OK for cudaSuccess, else cudaStatus(err, what).
Status cudaResult(cudaError_t err, const std::string &what);
/// "WHAT: CUBLAS_STATUS_NOT_SUPPORTED (...)".
Status cublasStatus(cublasStatus_t st, const std::string &what);

/// The error of the last kernel launch on this thread, if any (clears it).
Status lastLaunchStatus(const std::string &what);

} // namespace tpc::cuda

#define TPC_CUDA_CHECK(expr)                                                   \
  do {                                                                         \
    cudaError_t _tpcCudaErr = (expr);                                          \
    if (_tpcCudaErr != cudaSuccess)                                            \
      return ::tpc::cuda::cudaStatus(_tpcCudaErr, #expr);                      \
  } while (0)

#define TPC_CUBLAS_CHECK(expr)                                                 \
  do {                                                                         \
    cublasStatus_t _tpcCublasSt = (expr);                                      \
    if (_tpcCublasSt != CUBLAS_STATUS_SUCCESS)                                 \
      return ::tpc::cuda::cublasStatus(_tpcCublasSt, #expr);                   \
  } while (0)

#endif // TPC_KERNELS_CUDA_CHECK_H
