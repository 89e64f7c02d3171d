//===- Copy.h - Conversions, copies and generators, for every backend -*- C++
//-*-===//
//
// Kernels that convert or copy elements one to one, or write values that do
// not depend on the input's values: Cast, the reshape-like copies (Reshape,
// Copy, BitCast), Shape, Size, Range and ConstantOfShape. This header holds
// the params both backends run from and their builders, which validate the
// operand descriptions and read the attributes. Attributes the onnx dialect
// gives a default reach the kernels from the plan; the optional ones
// (Cast's saturate, Shape's start and end) mean what ONNX says their
// absence means.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_COPY_H
#define TPC_KERNELS_COPY_H

#include "kernels/Family.h"
#include "kernels/Layout.h"

#include <vector>

namespace tpc {

// X(Name, summary): the copy kernels, in the order both kernel tables list
// them; Name is the kernel and its CopyOp.
#define TPC_COPY_KERNELS(X)                                                    \
  X(Cast, "element type conversion (attrs to, saturate)")                      \
  X(Reshape, "copy under a new shape (may run in place)")                      \
  X(Copy, "copy into a buffer of the same size (may run in place)")            \
  X(BitCast, "the same bytes as a dtype of the same width (attr to)")          \
  X(Shape, "dims of the input as i64 (attrs start, end)")                      \
  X(Size, "element count of the input as an i64 scalar")                       \
  X(Range, "start + i * delta for the output's length")                        \
  X(ConstantOfShape, "output filled with attr value")

TPC_DECLARE_KERNEL_FAMILY(CopyOp, kCopyKernels, TPC_COPY_KERNELS);

struct CastParams {
  DType from = DType::F32;
  DType to = DType::F32;
  int64_t numel = 0;
  /// float8 targets only: clamp out-of-range values to the largest finite
  /// one (ONNX's `saturate`, 1 when absent) instead of giving inf or NaN.
  bool saturate = true;
};

/// Cast (input -> output of dtype `to`); attributes to and, optionally,
/// saturate.
Status makeCastParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      CastParams &p);

/// Reshape (data, optional shape input the compiler resolved), Copy and
/// BitCast (attribute to: the output's dtype, of the input's width): the
/// same bytes under another description. `bytes` is how many to copy; the
/// copy is skipped when input and output share a buffer.
Status makeCopyParams(CopyOp op, const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      size_t &bytes);

/// Shape (data -> i64 dims [start, end), clamped as ONNX says) and Size
/// (data -> i64 scalar): their values are known at prepare time.
Status makeShapeParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, const Attrs &attrs,
                       std::vector<int64_t> &values);
Status makeSizeParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out,
                      std::vector<int64_t> &values);

/// Range: out[i] = start + i * delta for the output's length (the compiler
/// computed it from start, limit and delta); f16/bf16 in float.
struct RangeParams {
  DType dtype = DType::F32;
  int64_t numel = 0;
};

/// Range (scalar start, limit, delta of one dtype -> 1-D output).
Status makeRangeParams(const std::vector<TensorDesc> &in,
                       const std::vector<TensorDesc> &out, RangeParams &p);

/// A fill of `numel` elements of `dtype` with `value`; an i64 output takes
/// `intValue` exactly when `exactInt` (integers beyond 2^53 would round
/// through double).
struct FillParams {
  DType dtype = DType::F32;
  int64_t numel = 0;
  double value = 0;
  bool exactInt = false;
  int64_t intValue = 0;
};

/// ConstantOfShape (optional i64 shape input -> output); attribute value
/// (one element; the importer writes ONNX's 0.0f when the model has none).
Status makeConstantOfShapeParams(const std::vector<TensorDesc> &in,
                                 const std::vector<TensorDesc> &out,
                                 const Attrs &attrs, FillParams &p);

} // namespace tpc

#endif // TPC_KERNELS_COPY_H
