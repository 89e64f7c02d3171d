//===- Binary.h - Broadcasting kernels, for every backend ------*- C++ -*-===//
//
// The binary arithmetic, comparison, logical and bitwise kernels (one list
// for both kernel tables), the variadic Max / Min / Sum / Mean and Where:
// the params both backends run from and their builders, which validate the
// operand descriptions, resolve the broadcast into a strided layout and
// read the attributes from the plan (no kernel defaults).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_BINARY_H
#define TPC_KERNELS_BINARY_H

#include "kernels/Family.h"
#include "kernels/Layout.h"

#include <vector>

namespace tpc {

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

/// The binary kernels (Mod and BitShift pick FMod and ShiftRight from
/// their attributes).
using BinaryKernelInfo = FamilyKernel<BinaryOp>;

inline constexpr BinaryKernelInfo kBinaryKernels[] = {
    {"Add", "a + b with broadcasting", BinaryOp::Add},
    {"Sub", "a - b with broadcasting", BinaryOp::Sub},
    {"Mul", "a * b with broadcasting", BinaryOp::Mul},
    {"Div", "a / b with broadcasting; integers truncate", BinaryOp::Div},
    {"Pow", "a ^ b with broadcasting", BinaryOp::Pow},
    {"Mod", "remainder (attr fmod) with broadcasting", BinaryOp::Mod},
    {"PRelu", "x < 0 ? slope * x : x", BinaryOp::PRelu},
    {"Equal", "a == b -> bool", BinaryOp::Equal},
    {"Less", "a < b -> bool", BinaryOp::Less},
    {"Greater", "a > b -> bool", BinaryOp::Greater},
    {"LessOrEqual", "a <= b -> bool", BinaryOp::LessOrEqual},
    {"GreaterOrEqual", "a >= b -> bool", BinaryOp::GreaterOrEqual},
    {"And", "logical and of bools", BinaryOp::And},
    {"Or", "logical or of bools", BinaryOp::Or},
    {"Xor", "logical xor of bools", BinaryOp::Xor},
    {"BitwiseAnd", "a & b of integers", BinaryOp::BitAnd},
    {"BitwiseOr", "a | b of integers", BinaryOp::BitOr},
    {"BitwiseXor", "a ^ b of integers", BinaryOp::BitXor},
    {"BitShift", "a << b or a >> b of integers (attr direction)",
     BinaryOp::ShiftLeft},
};

struct BinaryParams {
  BinaryOp op = BinaryOp::Add;
  /// Dtype of the left operand; also the output's unless op is a comparison.
  DType lhsType = DType::F32;
  /// Dtype of the right operand; differs from lhsType only for Pow.
  DType rhsType = DType::F32;
  /// Operands: 0 output, 1 lhs, 2 rhs.
  StridedLayout<3> layout;
};

/// Builds BinaryParams for dense operands of the given shapes broadcast to
/// `outShape`.
Status makeBinaryParams(BinaryOp op, DType lhsType, DType rhsType,
                        const Shape &lhsShape, const Shape &rhsShape,
                        const Shape &outShape, BinaryParams &p);

/// The binary kernel `op` (a kBinaryKernels entry) on two inputs and one
/// output: dtypes, the broadcast (PRelu's slope broadcasts to X only) and
/// the attributes fmod (Mod) and direction (BitShift).
Status makeBinaryOpParams(BinaryOp op, const std::vector<TensorDesc> &in,
                          const std::vector<TensorDesc> &out,
                          const Attrs &attrs, BinaryParams &p);

// X(Name, summary): the variadic kernels, Max, Min, Sum and Mean of N
// inputs broadcast together; Name is the kernel and its VariadicOp.
#define TPC_VARIADIC_KERNELS(X)                                                \
  X(Max, "elementwise max of N inputs (NaN propagates)")                       \
  X(Min, "elementwise min of N inputs (NaN propagates)")                       \
  X(Sum, "elementwise sum of N inputs")                                        \
  X(Mean, "elementwise mean of N inputs")

TPC_DECLARE_KERNEL_FAMILY(VariadicOp, kVariadicKernels,
                          TPC_VARIADIC_KERNELS);

/// Folds the inputs into the output: out = op(in0, in1), then
/// out = op(out, in_i); Mean scales by 1/N at the end. One input is a copy.
struct VariadicParams {
  VariadicOp op = VariadicOp::Sum;
  DType dtype = DType::F32;
  /// One binary step per input after the first.
  std::vector<BinaryParams> steps;
  size_t bytes = 0;
  int64_t numel = 0;
  /// 1 / N, for Mean.
  double scale = 1;
};

Status makeVariadicParams(VariadicOp op, const std::vector<TensorDesc> &in,
                          const std::vector<TensorDesc> &out,
                          VariadicParams &p);

struct WhereParams {
  size_t elemSize = 4;
  /// Operands: 0 output, 1 condition, 2 x, 3 y.
  StridedLayout<4> layout;
};

/// Where (bool condition, x, y of one dtype, broadcast together).
Status makeWhereParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, WhereParams &p);

} // namespace tpc

#endif // TPC_KERNELS_BINARY_H
