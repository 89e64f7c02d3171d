//===- Family.h - Kernel families and their registration -------*- C++ -*-===//
//
// A kernel family's list (name, summary and op of each kernel), declared
// once per family in its header (kernels/<Family>.h) and followed by both
// backends' kernel tables, and the helpers that append a family's kernels
// to a table with each backend's adapters.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_FAMILY_H
#define TPC_KERNELS_FAMILY_H

#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <tuple>
#include <type_traits>
#include <utility>

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

} // namespace tpc

#endif // TPC_KERNELS_FAMILY_H
