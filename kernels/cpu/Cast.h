//===- Cast.h - Element type conversion -------------------------*- C++ -*-===//
#ifndef TPC_KERNELS_CPU_CAST_H
#define TPC_KERNELS_CPU_CAST_H

#include "kernels/Copy.h"
#include "kernels/cpu/Support.h"

namespace tpc::cpu {

/// Converts `numel` elements of dtype `from` to dtype `to`; see Cast.cpp for
/// the rounding and out-of-range rules.
void castKernel(const CastParams &p, const void *in, void *out);

/// `value` converted to `dtype` as Cast converts a double: the bit pattern
/// of one element, for fills (Pad's value).
uint64_t scalarPattern(double value, DType dtype);

/// The bit pattern of one element of the fill `p` (ConstantOfShape).
uint64_t fillPattern(const FillParams &p);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_CAST_H
