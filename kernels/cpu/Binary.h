//===- Binary.h - Broadcasting elementwise kernels --------------*- C++ -*-===//
//
// Binary arithmetic, comparison and logical kernels with numpy broadcasting,
// and Where. The broadcast is resolved once into a StridedLayout whose
// innermost dim every kernel walks as a contiguous (or stride-0) row.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_BINARY_H
#define TPC_KERNELS_CPU_BINARY_H

#include "kernels/cpu/Support.h"

namespace tpc::cpu {

enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,   ///< Integer division truncates; x / 0 is 0 for integers.
  Pow,   ///< Exponent may have a different dtype than the base.
  Max,   ///< NaN in either operand gives NaN.
  Min,   ///< NaN in either operand gives NaN.
  Mod,   ///< Integer remainder with the divisor's sign (Python); x % 0 is 0.
  FMod,  ///< C fmod / remainder with the dividend's sign; x % 0 is 0 for ints.
  PRelu, ///< lhs < 0 ? rhs * lhs : lhs.
  Equal,
  Less,
  Greater,
  LessOrEqual,
  GreaterOrEqual,
  And,
  Or,
  Xor,
  BitAnd, ///< Integers only, like the shifts.
  BitOr,
  BitXor,
  ShiftLeft, ///< See kernels/Bitwise.h for out-of-range amounts.
  ShiftRight,
};

/// Whether `op` produces bool regardless of its operand dtype.
bool isComparison(BinaryOp op);
/// Whether `op` takes and produces bool.
bool isLogical(BinaryOp op);
/// Whether `op` works on the bits of integers (BitwiseAnd/Or/Xor, BitShift).
bool isBitwise(BinaryOp op);

struct BinaryParams {
  BinaryOp op = BinaryOp::Add;
  /// Dtype of the left operand; also the output's unless op is a comparison.
  DType lhsType = DType::F32;
  /// Dtype of the right operand; differs from lhsType only for Pow.
  DType rhsType = DType::F32;
  /// Operands: 0 output, 1 lhs, 2 rhs.
  StridedLayout<3> layout;
};

/// out = op(lhs, rhs) elementwise. `out` may alias `lhs` when both use the
/// same offsets (variadic kernels accumulate that way).
void binaryKernel(const BinaryParams &p, const void *lhs, const void *rhs,
                  void *out);

/// Builds BinaryParams for dense operands of the given shapes broadcast to
/// `outShape`.
Status makeBinaryParams(BinaryOp op, DType lhsType, DType rhsType,
                        const Shape &lhsShape, const Shape &rhsShape,
                        const Shape &outShape, BinaryParams &p);

struct WhereParams {
  size_t elemSize = 4;
  /// Operands: 0 output, 1 condition, 2 x, 3 y.
  StridedLayout<4> layout;
};

/// out = cond ? x : y elementwise, byte-wise on elements of elemSize.
void whereKernel(const WhereParams &p, const uint8_t *cond, const void *x,
                 const void *y, void *out);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_BINARY_H
