//===- TPCOps.h - tpc dialect: tpc's own ops --------------------*- C++ -*-===//
#ifndef TPC_DIALECT_TPC_IR_TPCOPS_H
#define TPC_DIALECT_TPC_IR_TPCOPS_H

// The ops fold through onnx::foldOp and use the onnx dialect's types.
#include "compiler/Dialect/ONNX/IR/ONNXOps.h"

#include "compiler/Dialect/TPC/IR/TPCOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "compiler/Dialect/TPC/IR/TPCOps.h.inc"

#endif // TPC_DIALECT_TPC_IR_TPCOPS_H
