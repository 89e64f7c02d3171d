//===- Passes.h - Fusion passes ---------------------------------*- C++ -*-===//
#ifndef TPC_PASSES_FUSION_PASSES_H
#define TPC_PASSES_FUSION_PASSES_H

#include "compiler/Dialect/TPC/IR/TPCOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tpc {

#define GEN_PASS_DECL
#include "passes/fusion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/fusion/Passes.h.inc"

} // namespace tpc

#endif // TPC_PASSES_FUSION_PASSES_H
