//===- Registry.cpp - The table of CPU kernels ----------------------------===//
#include "kernels/cpu/Registry.h"
#include "kernels/NamedTable.h"
#include "kernels/cpu/KernelTable.h"

namespace tpc::cpu {

static KernelTable buildTable() {
  KernelTable table;
  addBinaryKernels(table);
  addUnaryKernels(table);
  addCopyKernels(table);
  addMovementKernels(table);
  addReduceKernels(table);
  addNormKernels(table);
  addMatMulKernels(table);
  addFusedKernels(table);
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
