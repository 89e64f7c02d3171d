//===- Passes.h - Compiler passes -------------------------------*- C++ -*-===//
#ifndef TPC_COMPILER_TRANSFORMS_PASSES_H
#define TPC_COMPILER_TRANSFORMS_PASSES_H

#include "compiler/Dialect/ONNX/IR/KernelBridge.h"
#include "compiler/Dialect/Plan/IR/PlanOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tpc {

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"


} // namespace tpc

#endif
