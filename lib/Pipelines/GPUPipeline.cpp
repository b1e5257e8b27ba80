//===- GPUPipeline.cpp - A train step's computation in kernels --*- C++ -*-===//

#include "gs/Conversion/Passes.h"
#include "gs/Pipelines/Passes.h"
#include "gs/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::gs;

void mlir::gs::buildGPUKernelPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createInlineBackward());
  pm.addNestedPass<func::FuncOp>(createFuseEpilogues());
  pm.addPass(createConvertGSToGPU());
  // Where parameters live is the runtime's: they stay gs.param.
  buildGSToLinalgPipeline(pm, /*paramsToGlobals=*/false);
  // The scalar code on kernel results and the skip guard onto tensors,
  // then everything on tensors into kernels.
  pm.addPass(createDeviceScalars());
  pm.addNestedPass<func::FuncOp>(createFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertLinalgToGPU());
  pm.addPass(createCanonicalizerPass());
}
