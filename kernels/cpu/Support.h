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

/// The length of `layout`'s innermost dim: the rows forEachRow hands out.
template <int N> int64_t rowLength(const StridedLayout<N> &layout) {
  return layout.shape[layout.rank - 1];
}

/// Operand `i`'s stride along the rows of `layout`.
template <int N> int64_t rowStride(const StridedLayout<N> &layout, int i) {
  return layout.strides[i][layout.rank - 1];
}

//===----------------------------------------------------------------------===//
// Element-type dispatch
//===----------------------------------------------------------------------===//

template <class T> struct TypeTag { using type = T; };

/// The integer dtypes by signedness, then by log2 of their width in bytes.
inline constexpr DType kIntegerDTypes[2][4] = {
    {DType::U8, DType::U16, DType::U32, DType::U64},
    {DType::I8, DType::I16, DType::I32, DType::I64}};

/// The dtype whose elements a kernel holds as T (DType(0) for none): the
/// integers (not bool) by width and signedness, the floats below; a
/// kernel's own tag types specialize it too.
template <class T>
inline constexpr DType
    kDTypeOf = std::is_integral_v<T> && !std::is_same_v<T, bool>
                   ? kIntegerDTypes[std::is_signed_v<T>][sizeof(T) == 1   ? 0
                                                         : sizeof(T) == 2 ? 1
                                                         : sizeof(T) == 4 ? 2
                                                                          : 3]
                   : DType(0);
template <> inline constexpr DType kDTypeOf<float> = DType::F32;
template <> inline constexpr DType kDTypeOf<double> = DType::F64;
template <> inline constexpr DType kDTypeOf<Half> = DType::F16;
template <> inline constexpr DType kDTypeOf<BFloat16> = DType::BF16;

/// Calls `f(TypeTag<T>{})` for the one of `Ts` that holds `t`
/// (kDTypeOf); returns false when none does. Kernels dispatch once per
/// call, outside their loops.
template <class... Ts, class F> bool visitTypes(DType t, F &&f) {
  static_assert(((kDTypeOf<Ts> != DType(0)) && ...),
                "every type visited must hold a dtype (kDTypeOf)");
  return ((t == kDTypeOf<Ts> ? (f(TypeTag<Ts>{}), true) : false) || ...);
}

/// visitTypes over f32, f64, i64 and i32.
template <class F> bool visitNumeric(DType t, F &&f) {
  return visitTypes<float, double, int64_t, int32_t>(t, f);
}

/// visitTypes over f32 and f64.
template <class F> bool visitFloat(DType t, F &&f) {
  return visitTypes<float, double>(t, f);
}

/// Calls `f(TypeTag<U>{})` with the unsigned type of `size` bytes (1, 2 or
/// 4; uint64_t for any other size).
template <class F> void visitBySize(size_t size, F &&f) {
  if (size == 1)
    f(TypeTag<uint8_t>{});
  else if (size == 2)
    f(TypeTag<uint16_t>{});
  else if (size == 4)
    f(TypeTag<uint32_t>{});
  else
    f(TypeTag<uint64_t>{});
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
