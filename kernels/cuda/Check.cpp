//===- Check.cpp ----------------------------------------------------------===//
#include "kernels/cuda/Check.h"

namespace tpc::cuda {

Status cudaStatus(cudaError_t err, const std::string &what) {
  return Status::error(what + ": " + cudaGetErrorName(err) + " (" +
                       cudaGetErrorString(err) + ")");
}

Status cudaResult(cudaError_t err, const std::string &what) {
  return err == cudaSuccess ? Status::ok() : cudaStatus(err, what);
}

Status cublasStatus(cublasStatus_t st, const std::string &what) {
  return Status::error(what + ": " + cublasLtGetStatusName(st) + " (" +
                       cublasLtGetStatusString(st) + ")");
}

Status lastLaunchStatus(const std::string &what) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess)
    return Status::ok();
  return cudaStatus(err, what);
}

} // namespace tpc::cuda
