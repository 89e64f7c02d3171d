//===- Registry.cpp - The table of CPU kernels ----------------------------===//
#include "kernels/cpu/Registry.h"
#include "kernels/cpu/KernelTable.h"

#include <algorithm>
#include <cstring>

namespace tpc::cpu {

static KernelTable buildTable() {
  KernelTable table;
  addBinaryKernels(table);
  addUnaryKernels(table);
  addCastKernels(table);
  addCopyKernels(table);
  addLayoutKernels(table);
  addConcatKernels(table);
  addSliceKernels(table);
  addGatherKernels(table);
  addGenerateKernels(table);
  addReduceKernels(table);
  addNormKernels(table);
  addMatMulKernels(table);
  addFusedKernels(table);
  std::sort(table.begin(), table.end(),
            [](const KernelDef &a, const KernelDef &b) {
              return std::strcmp(a.name, b.name) < 0;
            });
  return table;
}

const std::vector<KernelDef> &allKernels() {
  static const KernelTable table = buildTable();
  return table;
}

const KernelDef *lookupKernel(std::string_view name) {
  const KernelTable &table = allKernels();
  auto it = std::lower_bound(table.begin(), table.end(), name,
                             [](const KernelDef &d, std::string_view n) {
                               return std::string_view(d.name) < n;
                             });
  if (it == table.end() || std::string_view(it->name) != name)
    return nullptr;
  return &*it;
}

} // namespace tpc::cpu
