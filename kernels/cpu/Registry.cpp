//===- Registry.cpp - The table of CPU kernels ----------------------------===//
#include "kernels/cpu/Registry.h"
#include "kernels/NamedTable.h"
#include "kernels/cpu/KernelTable.h"

namespace tpc::cpu {

static KernelTable buildTable() {
  KernelTable table;
#define TPC_ADD_KERNELS(Family) add##Family##Kernels(table);
  TPC_CPU_KERNEL_FAMILIES(TPC_ADD_KERNELS)
#undef TPC_ADD_KERNELS
  sortByName(table);
  return table;
}

const std::vector<KernelDef> &allKernels() {
  static const KernelTable table = buildTable();
  return table;
}

const KernelDef *lookupKernel(std::string_view name) {
  return findByName(allKernels(), name);
}

} // namespace tpc::cpu
