//===- PlanOps.h - plan dialect ---------------------------------*- C++ -*-===//
#ifndef TPC_DIALECT_PLAN_IR_PLANOPS_H
#define TPC_DIALECT_PLAN_IR_PLANOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/Dialect/Plan/IR/PlanOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "compiler/Dialect/Plan/IR/PlanOps.h.inc"

#endif
