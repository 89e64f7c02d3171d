//===- MatMul.cpp - Params of the matrix products, for every backend ------===//
#include "kernels/MatMul.h"
#include "kernels/Checks.h"

#include <climits>

namespace tpc {

namespace {

/// OpenBLAS takes int dimensions.
Status checkBlasDims(int64_t m, int64_t n, int64_t k) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    return Status::error("matrix dims m=" + std::to_string(m) +
                         " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                         " exceed the BLAS int range");
  return Status::ok();
}

} // namespace

/// numpy matmul: 1-D A is a row vector and 1-D B a column vector (their
/// unit dim is dropped from the result); other leading dims broadcast.
Status makeMatMulParams(const std::vector<TensorDesc> &in,
                        const std::vector<TensorDesc> &out, MatMulParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 2, 2, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(in[0], "input 0 (A)",
                                 {DType::F32, DType::F64, DType::I64,
                                  DType::I32, DType::F16, DType::BF16}));
  TPC_RETURN_IF_ERROR(
      checkSameDType(in[1], "input 1 (B)", in[0], "input 0 (A)"));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0 (A)"));
  Shape a = in[0].shape, b = in[1].shape;
  if (a.empty() || b.empty())
    return Status::error("MatMul operands must have rank >= 1, got shapes " +
                         fmtShape(a) + " and " + fmtShape(b));
  const bool vecA = a.size() == 1, vecB = b.size() == 1;
  if (vecA)
    a.insert(a.begin(), 1);
  if (vecB)
    b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  if (b[b.size() - 2] != k)
    return Status::error("inner dims differ: A shape " + fmtShape(in[0].shape) +
                         " and B shape " + fmtShape(in[1].shape));
  TPC_RETURN_IF_ERROR(checkBlasDims(m, n, k));
  const Shape aBatch(a.begin(), a.end() - 2), bBatch(b.begin(), b.end() - 2);
  Shape batch;
  TPC_RETURN_IF_ERROR(broadcastShapes({aBatch, bBatch}, batch));
  Shape expected = batch;
  if (!vecA)
    expected.push_back(m);
  if (!vecB)
    expected.push_back(n);
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], expected));

  p.dtype = in[0].dtype;
  p.m = m;
  p.n = n;
  p.k = k;
  auto scaled = [](std::vector<int64_t> s, int64_t f) {
    for (int64_t &v : s)
      v *= f;
    return s;
  };
  TPC_RETURN_IF_ERROR(
      makeLayout<3>(batch,
                    {scaled(denseStrides(batch), m * n),
                     scaled(broadcastStrides(aBatch, batch), m * k),
                     scaled(broadcastStrides(bBatch, batch), k * n)},
                    p.batch));
  // After collapsing, a shared B and a dense A leave one batch dim with B
  // stride 0 and A stride m * k (or no batch at all).
  p.foldBatch = p.batch.rank == 1 && p.batch.strides[2][0] == 0 &&
                (p.batch.shape[0] == 1 || p.batch.strides[1][0] == m * k);
  return Status::ok();
}

Status makeGemmParams(const std::vector<TensorDesc> &in,
                      const std::vector<TensorDesc> &out, const Attrs &attrs,
                      GemmParams &p) {
  TPC_RETURN_IF_ERROR(checkOperands(in, out, 2, 3, 1, 1));
  TPC_RETURN_IF_ERROR(checkDType(
      in[0], "input 0 (A)", {DType::F32, DType::F64, DType::F16, DType::BF16}));
  TPC_RETURN_IF_ERROR(
      checkSameDType(in[1], "input 1 (B)", in[0], "input 0 (A)"));
  TPC_RETURN_IF_ERROR(checkSameDType(out[0], "output 0", in[0], "input 0 (A)"));
  const Shape &a = in[0].shape, &b = in[1].shape;
  if (a.size() != 2 || b.size() != 2)
    return Status::error("Gemm operands must be 2-D, got shapes " +
                         fmtShape(a) + " and " + fmtShape(b));
  p = GemmParams();
  p.dtype = in[0].dtype;
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "transA", p.transA));
  TPC_RETURN_IF_ERROR(requireFlag(attrs, "transB", p.transB));
  TPC_RETURN_IF_ERROR(requireFloat(attrs, "alpha", p.alpha));
  TPC_RETURN_IF_ERROR(requireFloat(attrs, "beta", p.beta));
  p.m = p.transA ? a[1] : a[0];
  p.k = p.transA ? a[0] : a[1];
  const int64_t kb = p.transB ? b[1] : b[0];
  p.n = p.transB ? b[0] : b[1];
  if (kb != p.k)
    return Status::error("inner dims differ: op(A) is " + fmtShape({p.m, p.k}) +
                         " and op(B) is " + fmtShape({kb, p.n}));
  TPC_RETURN_IF_ERROR(checkBlasDims(p.m, p.n, p.k));
  TPC_RETURN_IF_ERROR(checkOutputShape(out[0], {p.m, p.n}));
  if (in.size() == 3 && !isAbsent(in[2])) {
    const Shape &c = in[2].shape;
    TPC_RETURN_IF_ERROR(
        checkSameDType(in[2], "input 2 (C)", in[0], "input 0 (A)"));
    if (!broadcastsTo(c, {p.m, p.n}))
      return Status::error("input 2 (C) shape " + fmtShape(c) +
                           " does not broadcast to " + fmtShape({p.m, p.n}));
    std::vector<int64_t> s = broadcastStrides(c, {p.m, p.n});
    p.hasC = true;
    p.cRowStride = s[0];
    p.cColStride = s[1];
  }
  return Status::ok();
}

} // namespace tpc
