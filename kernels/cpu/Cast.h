//===- Cast.h - Element type conversion -------------------------*- C++ -*-===//
#ifndef TPC_KERNELS_CPU_CAST_H
#define TPC_KERNELS_CPU_CAST_H

#include "kernels/cpu/Support.h"

namespace tpc::cpu {

struct CastParams {
  DType from = DType::F32;
  DType to = DType::F32;
  int64_t numel = 0;
  /// float8 targets only: clamp out-of-range values to the largest finite
  /// one (ONNX's `saturate`, default 1) instead of giving inf or NaN.
  bool saturate = true;
};

/// Converts `numel` elements of dtype `from` to dtype `to`; see Cast.cpp for
/// the rounding and out-of-range rules.
void castKernel(const CastParams &p, const void *in, void *out);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_CAST_H
