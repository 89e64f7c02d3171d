//===- Layout.h - Shapes, broadcasting and strided layouts ------*- C++ -*-===//
//
// The shape arithmetic every backend's params builders share: numpy
// broadcasting, dense and broadcast strides, and the collapsed strided
// iteration space that elementwise, data-movement and reduction kernels
// walk (on the CPU row by row, on the GPU element by element).
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_LAYOUT_H
#define TPC_KERNELS_LAYOUT_H

#include "kernels/Types.h"

#include <array>
#include <cstdint>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpc {

/// Dims that any strided layout can hold after collapsing; plenty for
/// transformer graphs, and fixed so that params structs can be copied by
/// value to a GPU kernel.
constexpr int kMaxDims = 16;

/// Numpy multidirectional broadcast of `shapes`.
Status broadcastShapes(const std::vector<Shape> &shapes, Shape &out);

/// Whether `from` broadcasts unidirectionally to `to` (numpy rules, `from`
/// never grows `to`).
bool broadcastsTo(const Shape &from, const Shape &to);

/// Dense row-major element strides of `shape`.
std::vector<int64_t> denseStrides(const Shape &shape);

/// Strides of `in` (right-aligned) viewed at `outShape`, with 0 where `in`
/// is broadcast. `in` must broadcast to `outShape`.
std::vector<int64_t> broadcastStrides(const Shape &in, const Shape &outShape);

/// An iteration space of `rank` dims walked in row-major order, with per
/// operand element strides. The innermost dim is the "row" that kernels loop
/// over contiguously. Built by makeLayout(), which drops unit dims and merges
/// dims that are contiguous for every operand, so same-shape operands become
/// one row and a trailing-vector broadcast becomes (rows, cols).
template <int N> struct StridedLayout {
  int rank = 1;
  int64_t numel = 0;
  int64_t shape[kMaxDims] = {1};
  int64_t strides[N][kMaxDims] = {};
};

/// Collapses `shape` with one stride vector per operand (each of
/// shape.size()) into `out`. Fails only when more than kMaxDims dims remain.
Status collapseLayout(const Shape &shape,
                      const std::vector<std::vector<int64_t>> &strides,
                      int numOperands, int64_t *outShape,
                      int64_t (*outStrides)[kMaxDims], int &outRank);

template <int N>
Status makeLayout(const Shape &shape,
                  const std::array<std::vector<int64_t>, N> &strides,
                  StridedLayout<N> &out) {
  std::vector<std::vector<int64_t>> s(strides.begin(), strides.end());
  out.numel = numElements(shape);
  return collapseLayout(shape, s, N, out.shape, out.strides, out.rank);
}

} // namespace tpc

#endif // TPC_KERNELS_LAYOUT_H
