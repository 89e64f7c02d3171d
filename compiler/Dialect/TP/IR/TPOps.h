//===- TPOps.h - tp dialect -------------------------------------*- C++ -*-===//
#ifndef TPC_DIALECT_TP_IR_TPOPS_H
#define TPC_DIALECT_TP_IR_TPOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/Dialect/TP/IR/TPOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "compiler/Dialect/TP/IR/TPOpsAttrs.h.inc"

#define GET_OP_CLASSES
#include "compiler/Dialect/TP/IR/TPOps.h.inc"

#endif
