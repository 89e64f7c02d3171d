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
void addCastKernels(KernelTable &table);
void addCopyKernels(KernelTable &table);
void addLayoutKernels(KernelTable &table);
void addConcatKernels(KernelTable &table);
void addSliceKernels(KernelTable &table);
void addGatherKernels(KernelTable &table);
void addGenerateKernels(KernelTable &table);
void addReduceKernels(KernelTable &table);
void addNormKernels(KernelTable &table);
void addMatMulKernels(KernelTable &table);
void addFusedKernels(KernelTable &table);
void addStateKernels(KernelTable &table);

} // namespace tpc::cpu

#endif // TPC_KERNELS_CPU_KERNELTABLE_H
