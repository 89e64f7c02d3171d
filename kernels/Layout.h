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
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpc {

/// One kernel of a family's list (kBinaryKernels, kReduceKernels): its name
/// in the kernel tables, its summary and the op it computes. Both backends'
/// tables follow a family's list.
template <class Op> struct FamilyKernel {
  const char *name;
  const char *summary;
  Op op;
};

/// A row of a family list before its op is attached: name and summary.
struct KernelDoc {
  const char *name;
  const char *summary;
};

/// The family list of `Op` whose enumerators are, in order, the kernels
/// `docs` describes (see TPC_DECLARE_KERNEL_FAMILY).
template <class Op, size_t N>
constexpr std::array<FamilyKernel<Op>, N>
familyList(const KernelDoc (&docs)[N]) {
  std::array<FamilyKernel<Op>, N> list{};
  for (size_t i = 0; i < N; ++i)
    list[i] = {docs[i].name, docs[i].summary, static_cast<Op>(i)};
  return list;
}

#define TPC_FAMILY_ENUMERATOR(NAME, SUMMARY) NAME,
#define TPC_FAMILY_DOC(NAME, SUMMARY) {#NAME, SUMMARY},

/// Declares `enum class Op` and its family list `List` from an X-macro list
/// `LIST(X)` of rows `X(Name, summary)`: each kernel is named once, as its
/// enumerator and its name in the kernel tables.
#define TPC_DECLARE_KERNEL_FAMILY(Op, List, LIST)                              \
  enum class Op { LIST(TPC_FAMILY_ENUMERATOR) };                               \
  inline constexpr auto List = familyList<Op>({LIST(TPC_FAMILY_DOC)})

namespace detail {
template <class Fn, size_t... I>
void forEachIndex(Fn &&fn, std::index_sequence<I...>) {
  (fn(std::integral_constant<int, int(I)>()), ...);
}
} // namespace detail

/// Appends to a kernel table one entry per kernel of the family list `List`:
/// its name and summary and the adapter `adapterAt(i)` returns for its index
/// (a std::integral_constant<int, I>, so that adapters can be templates
/// over the index).
template <const auto &List, class Table, class AdapterAt>
void addListed(Table &table, AdapterAt adapterAt) {
  detail::forEachIndex(
      [&](auto i) {
        table.push_back({List[decltype(i)::value].name,
                         List[decltype(i)::value].summary, adapterAt(i)});
      },
      std::make_index_sequence<std::size(List)>());
}

/// Defines `void Fn(Table &)` that appends every kernel of a family list
/// whose adapters are a template over the op: `Adapter<List[i].op>`.
#define TPC_DEFINE_LISTED_KERNELS(Fn, Table, List, Adapter)                    \
  void Fn(Table &table) {                                                      \
    ::tpc::addListed<List>(                                                    \
        table, [](auto i) { return Adapter<List[decltype(i)::value].op>; });   \
  }

/// A kernel's adapter, named by the kernel's op (see addFamily).
template <class Op, class Adapter> struct OpAdapter {
  Op op;
  Adapter adapter;
};

/// Appends every kernel of a declared family's list `list` (see
/// TPC_DECLARE_KERNEL_FAMILY) with the adapter `adapters` names for its op.
/// Each op must be named exactly once: a table that names one twice, or
/// none for a kernel, is a programming error that aborts when the table is
/// built (on the first kernel lookup), naming the kernel.
template <class Table, class List, size_t N>
void addFamily(
    Table &table, const List &list,
    const OpAdapter<decltype(std::declval<typename List::value_type>().op),
                    decltype(Table::value_type::prepare)> (&adapters)[N]) {
  static_assert(N == std::tuple_size<List>::value, "one adapter per kernel");
  for (const auto &k : list) {
    const auto *found = &adapters[0];
    int named = 0;
    for (const auto &a : adapters)
      if (a.op == k.op) {
        found = &a;
        ++named;
      }
    if (named != 1) {
      std::fprintf(stderr, "tpc: kernel %s has %d adapters in its table\n",
                   k.name, named);
      std::abort();
    }
    table.push_back({k.name, k.summary, found->adapter});
  }
}

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
