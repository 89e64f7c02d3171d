//===- tpc-opt.cpp - MlirOptMain with every tpc dialect and pass ----------===//
#include "compiler/Registration.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tpc::registerAllDialects(registry);
  tpc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tpc optimizer driver\n", registry));
}
