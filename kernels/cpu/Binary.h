//===- Binary.h - Broadcasting elementwise kernels --------------*- C++ -*-===//
//
// Binary arithmetic, comparison and logical kernels with numpy broadcasting,
// and Where. The broadcast is resolved once into a StridedLayout whose
// innermost dim every kernel walks as a contiguous (or stride-0) row.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_BINARY_H
#define TPC_KERNELS_CPU_BINARY_H

#include "kernels/Binary.h"
#include "kernels/cpu/Support.h"

namespace tpc::cpu {

// The ops, params and their builders are backend-neutral
// (kernels/Binary.h).
using tpc::BinaryOp;
using tpc::BinaryParams;
using tpc::isBitwise;
using tpc::isComparison;
using tpc::isLogical;
using tpc::makeBinaryParams;
using tpc::WhereParams;

/// out = op(lhs, rhs) elementwise. `out` may alias `lhs` when both use the
/// same offsets (variadic kernels accumulate that way).
void binaryKernel(const BinaryParams &p, const void *lhs, const void *rhs,
                  void *out);

/// out = cond ? x : y elementwise, byte-wise on elements of elemSize.
void whereKernel(const WhereParams &p, const uint8_t *cond, const void *x,
                 const void *y, void *out);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_BINARY_H
