//===- HostDevice.h - Functions for both host and device code ---*- C++ -*-===//
//
// TPC_HOST_DEVICE marks a function that the CPU kernels call and that the
// CUDA kernels call on the device, so that both backends compute one
// formula from one definition.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_HOSTDEVICE_H
#define TPC_KERNELS_HOSTDEVICE_H

#if defined(__CUDACC__)
#define TPC_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TPC_HOST_DEVICE inline
#endif

#endif // TPC_KERNELS_HOSTDEVICE_H
