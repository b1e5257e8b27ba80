//===- gs-opt.cpp - GradScale optimizer driver ------------------*- C++ -*-===//
//
// mlir-opt for GradScale: the gs dialect and passes plus the upstream
// dialects and passes its pipelines use.
//
//===----------------------------------------------------------------------===//

#include "gs/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::gs::registerAllDialects(registry);
  mlir::gs::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "GradScale optimizer driver\n", registry));
}
