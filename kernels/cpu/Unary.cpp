//===- Unary.cpp - The unary kernels on the CPU ---------------------------===//
//
// Loops over kernels/Unary.h: each op's formula is the shared one, inlined
// per op so that the loop over elements has no switch; the activations
// transformers spend time in (exp, erf, tanh, sigmoid, gelu) take the
// vectorized f32 paths of VectorMath.h.
//
//===----------------------------------------------------------------------===//
#include "kernels/Unary.h"
#include "kernels/cpu/Convert.h"
#include "kernels/cpu/KernelTable.h"
#include "kernels/cpu/Parallel.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <type_traits>
#include <utility>

namespace tpc::cpu {
namespace {

template <class T, class Fn>
void mapLoop(const void *in, void *out, int64_t n, Fn fn) {
  const T *x = static_cast<const T *>(in);
  T *y = static_cast<T *>(out);
  for (int64_t i = 0; i < n; ++i)
    y[i] = fn(x[i]);
}

/// `Op` of every element, with the op fixed at compile time.
template <UnaryOp Op, class T>
void opLoop(const UnaryParams &p, const void *in, void *out) {
  if constexpr (std::is_integral_v<T>) {
    mapLoop<T>(in, out, p.numel, [](T x) { return unaryInt<T>(Op, x); });
  } else {
    const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
    mapLoop<T>(in, out, p.numel,
               [=](T x) { return unaryFloat<T>(Op, x, alpha, beta); });
  }
}

/// The loop of `p.op` over `T`, the op's value dispatched once.
template <class T>
void typedOp(const UnaryParams &p, const void *in, void *out) {
  switch (p.op) {
#define TPC_UNARY_CASE(NAME, ...)                                              \
  case UnaryOp::NAME:                                                          \
    return opLoop<UnaryOp::NAME, T>(p, in, out);
    TPC_UNARY_KERNELS(TPC_UNARY_CASE)
#undef TPC_UNARY_CASE
  case UnaryOp::GeluTanh:
    return opLoop<UnaryOp::GeluTanh, T>(p, in, out);
  }
}

/// The f32 ops with a vectorized path (VectorMath.h).
constexpr std::pair<UnaryOp, void (*)(const float *, float *, int64_t)>
    kVectorPaths[] = {
        {UnaryOp::Exp, vecExp},   {UnaryOp::Erf, vecErf},
        {UnaryOp::Tanh, vecTanh}, {UnaryOp::Sigmoid, vecSigmoid},
        {UnaryOp::Gelu, vecGelu}, {UnaryOp::GeluTanh, vecGeluTanh}};

template <class T>
void floatOp(const UnaryParams &p, const void *in, void *out) {
  const int64_t n = p.numel;
  if (p.op == UnaryOp::IsNaN) {
    const T *x = static_cast<const T *>(in);
    uint8_t *y = static_cast<uint8_t *>(out);
    for (int64_t i = 0; i < n; ++i)
      y[i] = std::isnan(x[i]) ? 1 : 0;
    return;
  }
  if constexpr (std::is_same_v<T, float>)
    for (const auto &[op, vecFn] : kVectorPaths)
      if (op == p.op)
        return vecFn(static_cast<const float *>(in), static_cast<float *>(out),
                     n);
  typedOp<T>(p, in, out);
}

/// A 16-bit float op: blocks of the input are widened to float, computed
/// as float and rounded back (to nearest even).
template <class S>
void float16Op(const UnaryParams &p, const void *in, void *out) {
  const S *x = static_cast<const S *>(in);
  if (p.op == UnaryOp::IsNaN) {
    uint8_t *y = static_cast<uint8_t *>(out);
    for (int64_t i = 0; i < p.numel; ++i)
      y[i] = std::isnan(widen(x[i])) ? 1 : 0;
    return;
  }
  S *y = static_cast<S *>(out);
  constexpr int64_t kBlock = 256;
  float buf[kBlock];
  UnaryParams blockParams = p;
  for (int64_t start = 0; start < p.numel; start += kBlock) {
    int64_t n = std::min(kBlock, p.numel - start);
    for (int64_t i = 0; i < n; ++i)
      buf[i] = widen(x[start + i]);
    blockParams.numel = n;
    floatOp<float>(blockParams, buf, buf);
    for (int64_t i = 0; i < n; ++i)
      y[start + i] = narrowTo<S>(buf[i]);
  }
}

void unaryKernel(const UnaryParams &p, const void *in, void *out) {
  if (p.op == UnaryOp::Not) {
    const uint8_t *x = static_cast<const uint8_t *>(in);
    uint8_t *y = static_cast<uint8_t *>(out);
    for (int64_t i = 0; i < p.numel; ++i)
      y[i] = x[i] ? 0 : 1;
    return;
  }
  visitTypes<float, double, int64_t, int32_t, int8_t, uint8_t, Half, BFloat16>(
      p.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_integral_v<T>)
          typedOp<T>(p, in, out);
        else if constexpr (std::is_floating_point_v<T>)
          floatOp<T>(p, in, out);
        else
          float16Op<T>(p, in, out);
      });
}

/// Elements are independent: each thread maps a slice of them.
void runUnary(const UnaryParams &p, const void *const *i, void *const *o,
              const ExecContext &ctx) {
  const int64_t inBytes = int64_t(dtypeSize(p.dtype));
  const int64_t outBytes = p.op == UnaryOp::IsNaN ? 1 : inBytes;
  parallelRows<&UnaryParams::numel>(ctx.numThreads, p, inBytes + outBytes,
                                    [&](const UnaryParams &q, int64_t begin) {
                                      unaryKernel(
                                          q, byteOffset(i[0], begin * inBytes),
                                          byteOffset(o[0], begin * outBytes));
                                    });
}

template <int I>
Status prepareUnary(const Operands &in, const Operands &out, const Attrs &attrs,
                    std::unique_ptr<PreparedKernel> &kernel) {
  UnaryParams p;
  TPC_RETURN_IF_ERROR(makeUnaryParams(kUnaryKernels[I], in, out, attrs, p));
  kernel = bindRun<runUnary>(p);
  return Status::ok();
}

} // namespace

void addUnaryKernels(KernelTable &t) {
  // y[i] = f(x[i]) in one pass: every unary kernel may run in place.
  addElementwise<kUnaryKernels>(
      t, [](auto i) { return prepareUnary<decltype(i)::value>; });
}

} // namespace tpc::cpu
