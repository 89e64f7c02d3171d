//===- KernelTable.h - Per-family kernel registration -----------*- C++ -*-===//
//
// Each kernel family's file appends its KernelDefs to the table that
// Registry.cpp sorts once. Internal to the CPU kernel library.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_KERNELS_CPU_KERNELTABLE_H
#define TPC_KERNELS_CPU_KERNELTABLE_H

#include "kernels/cpu/Registry.h"

#include <vector>

namespace tpc::cpu {

using KernelTable = std::vector<KernelDef>;

void addBinaryKernels(KernelTable &table);
void addUnaryKernels(KernelTable &table);
void addCopyKernels(KernelTable &table);
void addMovementKernels(KernelTable &table);
void addReduceKernels(KernelTable &table);
void addNormKernels(KernelTable &table);
void addMatMulKernels(KernelTable &table);
void addFusedKernels(KernelTable &table);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_KERNELTABLE_H
