//===- Pipelines.h - GradScale compilation pipelines ------------*- C++ -*-===//

#ifndef GS_PIPELINES_PIPELINES_H
#define GS_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
class OpPassManager;
} // namespace mlir

namespace mlir::gs {

/// Options of the CPU pipeline.
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<bool> kernelSchedule{
      *this, "kernel-schedule",
      llvm::cl::desc("Tile and vectorize GEMMs and convolutions (off: "
                     "plain loops, for debugging)"),
      llvm::cl::init(true)};
  PassOptions::Option<unsigned> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("SIMD register width in bits that the kernel schedule "
                     "blocks for (0: the host CPU's)"),
      llvm::cl::init(0)};
};

/// gs (tensors) to the LLVM dialect for the host CPU: parameters to
/// globals, gs to linalg, elementwise fusion, the kernel schedule,
/// bufferization with results as out-parameters, and upstream's conversions
/// to LLVM.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// How a training pipeline treats gradient precision.
enum class ScalingMethod { GS, Fixed, Dynamic, None, FP32 };

/// Options of the training pipeline.
struct TrainPipelineOptions : public PassPipelineOptions<TrainPipelineOptions> {
  PassOptions::Option<ScalingMethod> scaling{
      *this, "scaling",
      llvm::cl::desc("Gradient precision: gs (mixed precision with "
                     "per-tensor gradient scaling), fixed or dynamic (mixed "
                     "precision with loss scaling), none (mixed precision "
                     "unscaled), fp32 (no FP16)"),
      llvm::cl::init(ScalingMethod::GS),
      llvm::cl::values(
          clEnumValN(ScalingMethod::GS, "gs", "gradient scaling"),
          clEnumValN(ScalingMethod::Fixed, "fixed", "fixed loss scaling"),
          clEnumValN(ScalingMethod::Dynamic, "dynamic", "dynamic loss scaling"),
          clEnumValN(ScalingMethod::None, "none", "no scaling"),
          clEnumValN(ScalingMethod::FP32, "fp32", "FP32 training"))};
  PassOptions::Option<double> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("scaling=fixed: the loss scale (default 128)"),
      llvm::cl::init(128.0)};
  PassOptions::Option<double> threshold{
      *this, "threshold",
      llvm::cl::desc("scaling=gs: the target underflow rate"),
      llvm::cl::init(1e-3)};
  PassOptions::Option<std::string> castModel{
      *this, "cast-model",
      llvm::cl::desc("scaling=gs: the model at FP32->FP16 casts, log_normal "
                     "(the paper's) or exponent_histogram"),
      llvm::cl::init("log_normal")};
  PassOptions::Option<int64_t> interval{
      *this, "interval",
      llvm::cl::desc("scaling=gs: recompute the scales every this many "
                     "steps"),
      llvm::cl::init(1)};
  PassOptions::Option<bool> lowerToLLVM{
      *this, "lower-to-llvm",
      llvm::cl::desc("Continue with gs-lower-to-llvm-cpu (off: stop at the "
                     "gs train step, which gs-run and gs-compile take)"),
      llvm::cl::init(false)};
};

/// The train step of an imported model: gs-autodiff, then (unless
/// scaling=fp32) gs-mixed-precision and the scaling method, optionally
/// lowered for the CPU.
void buildTrainPipeline(OpPassManager &pm, const TrainPipelineOptions &options);

/// Adds `eval_step`, a copy of `forward` that also returns the class scores
/// (batch x classes) its loss is computed from. Sets `error` on failure.
LogicalResult addEvalStep(ModuleOp module, std::string &error);

/// Registers `gs-lower-to-llvm-cpu`, `gs-train` and the passes the
/// pipelines use.
void registerPipelines();

} // namespace mlir::gs

#endif // GS_PIPELINES_PIPELINES_H
