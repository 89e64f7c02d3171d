//===- Registration.h - The one place that registers everything -*- C++ -*-===//
#ifndef TPC_COMPILER_REGISTRATION_H
#define TPC_COMPILER_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace tpc {
/// Every dialect a tpc module may contain.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Every tpc pass and pipeline, for tpc-opt and plugins.
void registerAllPasses();
} // namespace tpc

#endif
