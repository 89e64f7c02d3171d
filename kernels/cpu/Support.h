//===- Support.h - Helpers shared by the CPU kernels ------------*- C++ -*-===//
//
// Validation helpers used by every prepare() function, element-type
// dispatch, and the strided-iteration layout that elementwise and
// data-movement kernels share. Kept free of any kernel so that each kernel
// file stays small.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_SUPPORT_H
#define TPC_KERNELS_CPU_SUPPORT_H

#include "kernels/Checks.h"
#include "kernels/Layout.h"
#include "kernels/Types.h"
#include "kernels/cpu/Registry.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace tpc::cpu {

/// Storage of the 16-bit float types; conversions live in Float16.h.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
/// Booleans are stored one byte each; any non-zero byte reads as true.
using BoolByte = uint8_t;

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

// The operand checks every backend shares (kernels/Checks.h), under the
// names the CPU kernels have always used.
using tpc::broadcastShapes;
using tpc::broadcastsTo;
using tpc::broadcastStrides;
using tpc::checkDType;
using tpc::checkOperands;
using tpc::checkOutputShape;
using tpc::checkSameDType;
using tpc::collapseLayout;
using tpc::denseStrides;
using tpc::fmtShape;
using tpc::kMaxDims;
using tpc::makeLayout;
using tpc::normalizeAxis;
using tpc::product;
using tpc::requireFloat;
using tpc::requireInt;
using tpc::requireString;
using tpc::StridedLayout;

//===----------------------------------------------------------------------===//
// Strided layouts
//===----------------------------------------------------------------------===//

/// Calls `row(offsets)` once per innermost row of `layout`, where
/// offsets[i] is operand i's element offset of the row's first element. No
/// division: offsets advance like an odometer.
template <int N, class RowFn>
void forEachRow(const StridedLayout<N> &layout, RowFn &&row) {
  if (layout.numel == 0)
    return;
  int64_t offs[N] = {};
  int64_t idx[kMaxDims] = {};
  const int outer = layout.rank - 1;
  while (true) {
    row(static_cast<const int64_t *>(offs));
    int d = outer - 1;
    for (; d >= 0; --d) {
      ++idx[d];
      for (int i = 0; i < N; ++i)
        offs[i] += layout.strides[i][d];
      if (idx[d] < layout.shape[d])
        break;
      for (int i = 0; i < N; ++i)
        offs[i] -= layout.strides[i][d] * layout.shape[d];
      idx[d] = 0;
    }
    if (d < 0)
      return;
  }
}

//===----------------------------------------------------------------------===//
// Element-type dispatch
//===----------------------------------------------------------------------===//

template <class T> struct TypeTag { using type = T; };

/// Calls `f(TypeTag<T>{})` for the C++ type of `t` among f32, f64, i64 and
/// i32; returns false for other dtypes.
template <class F> bool visitNumeric(DType t, F &&f) {
  switch (t) {
  case DType::F32:
    f(TypeTag<float>{});
    return true;
  case DType::F64:
    f(TypeTag<double>{});
    return true;
  case DType::I64:
    f(TypeTag<int64_t>{});
    return true;
  case DType::I32:
    f(TypeTag<int32_t>{});
    return true;
  default:
    return false;
  }
}

/// Like visitNumeric for f32 and f64 only.
template <class F> bool visitFloat(DType t, F &&f) {
  switch (t) {
  case DType::F32:
    f(TypeTag<float>{});
    return true;
  case DType::F64:
    f(TypeTag<double>{});
    return true;
  default:
    return false;
  }
}

/// An unsigned integer type of `Size` bytes, for byte-wise data movement.
template <size_t Size> struct UIntOfSize;
template <> struct UIntOfSize<1> { using type = uint8_t; };
template <> struct UIntOfSize<2> { using type = uint16_t; };
template <> struct UIntOfSize<4> { using type = uint32_t; };
template <> struct UIntOfSize<8> { using type = uint64_t; };

/// Calls `f(TypeTag<U>{})` with the unsigned type of `size` bytes.
template <class F> void visitBySize(size_t size, F &&f) {
  switch (size) {
  case 1:
    f(TypeTag<uint8_t>{});
    break;
  case 2:
    f(TypeTag<uint16_t>{});
    break;
  case 4:
    f(TypeTag<uint32_t>{});
    break;
  default:
    f(TypeTag<uint64_t>{});
    break;
  }
}

/// A PreparedKernel that forwards to a callable holding its params.
template <class Fn> class LambdaKernel final : public PreparedKernel {
public:
  explicit LambdaKernel(Fn fn) : fn_(std::move(fn)) {}
  void run(const void *const *inputs, void *const *outputs,
           const ExecContext &ctx) override {
    fn_(inputs, outputs, ctx);
  }

private:
  Fn fn_;
};

/// Wraps `fn(inputs, outputs, ctx)` as a PreparedKernel.
template <class Fn> std::unique_ptr<PreparedKernel> makeKernel(Fn fn) {
  return std::make_unique<LambdaKernel<Fn>>(std::move(fn));
}

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_SUPPORT_H
