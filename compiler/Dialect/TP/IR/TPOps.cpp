//===- TPOps.cpp - tp dialect ---------------------------------------------===//
#include "compiler/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tpc::tp;

#include "compiler/Dialect/TP/IR/TPOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "compiler/Dialect/TP/IR/TPOpsAttrs.cpp.inc"

void TPDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "compiler/Dialect/TP/IR/TPOpsAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "compiler/Dialect/TP/IR/TPOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "compiler/Dialect/TP/IR/TPOps.cpp.inc"
