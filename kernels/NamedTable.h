//===- NamedTable.h - Tables of kernels looked up by name -------*- C++ -*-===//
//
// The CPU and CUDA kernel registries are each a vector of definitions with a
// `const char *name`, sorted once and searched by binary search.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_NAMEDTABLE_H
#define TPC_KERNELS_NAMEDTABLE_H

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

namespace tpc {

template <class Def> void sortByName(std::vector<Def> &table) {
  std::sort(table.begin(), table.end(), [](const Def &a, const Def &b) {
    return std::strcmp(a.name, b.name) < 0;
  });
}

/// The definition named `name` in a table sorted by sortByName, or nullptr.
template <class Def>
const Def *findByName(const std::vector<Def> &table, std::string_view name) {
  auto it = std::lower_bound(table.begin(), table.end(), name,
                             [](const Def &d, std::string_view n) {
                               return std::string_view(d.name) < n;
                             });
  if (it == table.end() || std::string_view(it->name) != name)
    return nullptr;
  return &*it;
}

} // namespace tpc

#endif // TPC_KERNELS_NAMEDTABLE_H
