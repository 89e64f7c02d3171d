//===- Passes.h - Tensor-parallel passes ------------------------*- C++ -*-===//
#ifndef TPC_PASSES_PASSES_H
#define TPC_PASSES_PASSES_H

#include "compiler/Dialect/ONNX/IR/ONNXOps.h"
#include "compiler/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tpc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace tpc

#endif
