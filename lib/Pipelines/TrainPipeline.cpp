//===- TrainPipeline.cpp - An imported model to its train step -*- C++ -*-===//

#include "gs/Dialect/GS/Transforms/Passes.h"
#include "gs/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::gs;

namespace {
MixedPrecisionOptions mixedPrecisionOptions(const TrainPipelineOptions &o) {
  MixedPrecisionOptions mixed;
  mixed.fp32Ops = llvm::to_vector(o.fp32Ops);
  return mixed;
}

GradientScalingOptions gradientScalingOptions(const TrainPipelineOptions &o) {
  GradientScalingOptions scaling;
  scaling.threshold = o.threshold;
  scaling.interval = o.interval;
  scaling.underflowRounding = o.underflowRounding;
  scaling.overflowRounding = o.overflowRounding;
  scaling.minScale = o.minScale;
  scaling.maxScale = o.maxScale;
  scaling.maxAccumScale = o.maxAccumScale;
  scaling.gemmModel = o.gemmModel;
  scaling.castModel = o.castModel;
  scaling.reluMask = o.reluMask;
  scaling.telemetry = o.telemetry;
  return scaling;
}

LossScalingOptions lossScalingOptions(const TrainPipelineOptions &o) {
  LossScalingOptions scaling;
  scaling.mode = o.scaling == ScalingMethod::Fixed ? LossScalingMode::Fixed
                 : o.scaling == ScalingMethod::Dynamic
                     ? LossScalingMode::Dynamic
                     : LossScalingMode::None;
  scaling.scale = o.lossScale;
  scaling.initScale = o.initScale;
  scaling.growthFactor = o.growthFactor;
  scaling.backoffFactor = o.backoffFactor;
  scaling.growthInterval = o.growthInterval;
  scaling.skipNonFinite = o.skipNonFinite;
  scaling.telemetry = o.telemetry;
  return scaling;
}
} // namespace

void mlir::gs::buildTrainPipeline(OpPassManager &pm,
                                  const TrainPipelineOptions &options) {
  // The backward region is built once, from the forward ops in the
  // precision they run in; the passes after gs-autodiff transform it.
  pm.addPass(createTrainStep());
  bool mixed = options.scaling != ScalingMethod::FP32;
  if (mixed)
    pm.addPass(createMixedPrecision(mixedPrecisionOptions(options)));
  pm.addPass(createAutodiff());
  if (mixed && options.widenWeightGradients)
    pm.addPass(createWidenWeightGradients());
  switch (options.scaling) {
  case ScalingMethod::FP32:
    break;
  case ScalingMethod::GS:
    pm.addPass(createGradientScaling(gradientScalingOptions(options)));
    break;
  case ScalingMethod::Fixed:
  case ScalingMethod::Dynamic:
  case ScalingMethod::None:
    pm.addPass(createLossScaling(lossScalingOptions(options)));
    break;
  }
  if (options.dataParallel) {
    DataParallelOptions dataParallel;
    dataParallel.bucketBytes = options.bucketBytes;
    pm.addPass(createDataParallel(dataParallel));
  }
  if (mixed && options.fp16WeightCopies)
    pm.addPass(createFP16WeightCopies());
  if (options.lowerToLLVM) {
    CPUPipelineOptions cpu;
    cpu.kernelSchedule = options.kernelSchedule;
    cpu.vectorBits = options.vectorBits;
    buildCPUPipeline(pm, cpu);
  }
}
