//===- TrainPipeline.cpp - An imported model to its train step -*- C++ -*-===//

#include "gs/Dialect/GS/Transforms/Passes.h"
#include "gs/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::gs;

void mlir::gs::buildTrainPipeline(OpPassManager &pm,
                                  const TrainPipelineOptions &options) {
  pm.addPass(createAutodiff());
  switch (options.scaling) {
  case ScalingMethod::FP32:
    break;
  case ScalingMethod::GS: {
    pm.addPass(createMixedPrecision());
    GradientScalingOptions scaling;
    scaling.threshold = options.threshold;
    scaling.interval = options.interval;
    scaling.castModel = options.castModel;
    pm.addPass(createGradientScaling(scaling));
    break;
  }
  case ScalingMethod::Fixed:
  case ScalingMethod::Dynamic:
  case ScalingMethod::None: {
    pm.addPass(createMixedPrecision());
    LossScalingOptions scaling;
    scaling.mode = options.scaling == ScalingMethod::Fixed     ? "fixed"
                   : options.scaling == ScalingMethod::Dynamic ? "dynamic"
                                                               : "none";
    scaling.scale = options.lossScale;
    pm.addPass(createLossScaling(scaling));
    break;
  }
  }
  if (options.lowerToLLVM)
    buildCPUPipeline(pm, CPUPipelineOptions());
}
