//===- Pipelines.h - GradScale compilation pipelines ------------*- C++ -*-===//

#ifndef GS_PIPELINES_PIPELINES_H
#define GS_PIPELINES_PIPELINES_H

#include "gs/Dialect/GS/Transforms/Passes.h"

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
  PassOptions::Option<bool> fuseSiblings{
      *this, "fuse-siblings",
      llvm::cl::desc("Compute elementwise ops and reductions that read the "
                     "same tensor in one loop nest (gs-fuse-siblings; off: a "
                     "pass over memory each, for comparison)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseTileConsumers{
      *this, "fuse-tile-consumers",
      llvm::cl::desc("Compute the elementwise ops and statistics that read "
                     "a GEMM's or convolution's result in its tile loop, a "
                     "tile at a time (gs-fuse-tile-consumers; off: a pass "
                     "over memory each, for comparison)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> outlineKernels{
      *this, "outline-kernels",
      llvm::cl::desc("Compile each loop nest as a function of its own (off: "
                     "one function per step, which LLVM takes far longer "
                     "to optimize)"),
      llvm::cl::init(true)};
};

/// gs (tensors) to linalg on tensors: gs.update expanded, parameters to
/// globals (or, without `paramsToGlobals`, left gs.param), the backward
/// regions inlined, gs to linalg, elementwise fusion. The prefix of the
/// CPU pipeline and of the GPU kernel pipeline; the latter's collectives
/// reduce device buffers (`deviceCollectives`).
void buildGSToLinalgPipeline(OpPassManager &pm, bool paramsToGlobals,
                             bool deviceCollectives = false);

/// Options of the GPU kernel pipeline.
struct GPUKernelPipelineOptions
    : public PassPipelineOptions<GPUKernelPipelineOptions> {
  PassOptions::Option<bool> wgmma{
      *this, "wgmma",
      llvm::cl::desc("Contractions of at least 64 rows on Hopper's wgmma "
                     "(for sm_90a)"),
      llvm::cl::init(false)};
};

/// A train step's computation in device kernels, on tensors: the FP16
/// contractions with their scaling epilogues and the scale decisions
/// (gs-fuse-epilogues, convert-gs-to-gpu), the rest through
/// buildGSToLinalgPipeline into kernels of gs-linalg-to-gpu. What remains
/// outside the kernels is host code (scalars, reshapes, control flow).
void buildGPUKernelPipeline(OpPassManager &pm,
                            const GPUKernelPipelineOptions &options);

/// gs (tensors) to the LLVM dialect for the host CPU: parameters to
/// globals, gs to linalg, elementwise fusion, the kernel schedule,
/// bufferization with results as out-parameters, and upstream's conversions
/// to LLVM.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Bufferization of a step lowered to linalg: one-shot across functions,
/// results as out-parameters the caller owns, and, with `deallocate`,
/// upstream's ownership-based deallocation.
void buildBufferizationPipeline(OpPassManager &pm, bool deallocate);

/// Buffers to the LLVM dialect: linalg to loops, then upstream's
/// conversions; with `gpuRuntimeCalls`, gpu ops on the host (allocation,
/// copies) become calls of MLIR's GPU runtime API; with `outlineKernels`,
/// each loop nest becomes a function of its own (gs-outline-kernels).
void buildLoopsToLLVMPipeline(OpPassManager &pm, bool gpuRuntimeCalls,
                              bool outlineKernels);

/// Options of the CUDA pipeline.
struct CUDAPipelineOptions : public PassPipelineOptions<CUDAPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("The GPU architecture the kernels are compiled for "
                     "(sm_80, sm_90, sm_90a)"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX ISA features (+ptx80: PTX 8.0, what CUDA 12 and "
                     "later drivers read)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("How kernels are embedded: fatbin (a cubin for the chip "
                     "and its PTX, which newer GPUs compile; needs the CUDA "
                     "toolkit's ptxas and fatbinary), bin (the cubin), isa "
                     "(PTX only, compiled by the driver when loaded)"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<bool> emulateKernels{
      *this, "emulate-kernels",
      llvm::cl::desc("Run the kernels on the CPU (gs-emulate-gpu) and only "
                     "the memory through the GPU runtime: for testing the "
                     "host side without a GPU"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> emulateCheckRaces{
      *this, "emulate-check-races",
      llvm::cl::desc("With emulate-kernels: stop after a launch in which two "
                     "threads accessed the same shared memory, one writing "
                     "it, with no barrier between them (gs-emulate-gpu's "
                     "check-races)"),
      llvm::cl::init(false)};
};

/// A train step for NVIDIA GPUs: buildGPUKernelPipeline (for sm_90a, its
/// contractions of 64 or more rows on wgmma), bufferization as
/// for the CPU, the kernels outlined, the host code inlined into each
/// public function with its memory on the device (gs-device-memory) and
/// queued on one stream (gpu-async-region), then the kernels through NVVM
/// into binaries the host code embeds and the host code to the LLVM
/// dialect, calling MLIR's GPU runtime API (GSCudaRuntime implements it).
void buildCUDAPipeline(OpPassManager &pm, const CUDAPipelineOptions &options);

/// How a training pipeline treats gradient precision.
enum class ScalingMethod { GS, Fixed, Dynamic, None, FP32 };

/// Options of the training pipeline: the method, and every option of the
/// passes it runs (gs-mixed-precision, gs-widen-weight-gradients,
/// gs-fp16-weight-copies, gs-gradient-scaling, gs-loss-scaling,
/// gs-lower-to-llvm-cpu) under the same name and with the same default.
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

  // gs-mixed-precision, and whether gs-widen-weight-gradients runs.
  PassOptions::ListOption<std::string> fp32Ops{
      *this, "fp32-ops",
      llvm::cl::desc("gs ops kept in FP32 besides softmax, log_softmax, the "
                     "losses and the reductions (e.g. gs.sigmoid,gs.exp)")};
  PassOptions::Option<bool> widenWeightGradients{
      *this, "widen-weight-gradients",
      llvm::cl::desc("Weight-gradient contractions write FP32 "
                     "(gs-widen-weight-gradients)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fp16WeightCopies{
      *this, "fp16-weight-copies",
      llvm::cl::desc("The step reads FP16 copies of the weights that their "
                     "updates write (gs-fp16-weight-copies; gs-compile "
                     "turns it on for --target=cuda)"),
      llvm::cl::init(false)};

  // gs-gradient-scaling (scaling=gs).
  PassOptions::Option<double> threshold{
      *this, "threshold",
      llvm::cl::desc("scaling=gs: the target underflow rate"),
      llvm::cl::init(GradientScalingOptions().threshold)};
  PassOptions::Option<int64_t> interval{
      *this, "interval",
      llvm::cl::desc("scaling=gs: recompute the scales every this many "
                     "steps"),
      llvm::cl::init(GradientScalingOptions().interval)};
  PassOptions::Option<Rounding> underflowRounding{
      *this, "underflow-rounding",
      llvm::cl::desc("scaling=gs: power-of-two rounding of the underflow "
                     "scale"),
      llvm::cl::init(GradientScalingOptions().underflowRounding),
      roundingValues()};
  PassOptions::Option<Rounding> overflowRounding{
      *this, "overflow-rounding",
      llvm::cl::desc("scaling=gs: power-of-two rounding of the overflow cap"),
      llvm::cl::init(GradientScalingOptions().overflowRounding),
      roundingValues()};
  PassOptions::Option<double> minScale{
      *this, "min-scale",
      llvm::cl::desc("scaling=gs: no scale below this unless the overflow "
                     "cap demands it"),
      llvm::cl::init(GradientScalingOptions().minScale)};
  PassOptions::Option<double> maxScale{
      *this, "max-scale",
      llvm::cl::desc("scaling=gs: upper bound of each scale (0: none)"),
      llvm::cl::init(GradientScalingOptions().maxScale)};
  PassOptions::Option<double> maxAccumScale{
      *this, "max-accum-scale",
      llvm::cl::desc("scaling=gs: upper bound of each accumulated scale "
                     "(0: none)"),
      llvm::cl::init(GradientScalingOptions().maxAccumScale)};
  PassOptions::Option<ScaleModel> gemmModel{
      *this, "gemm-model",
      llvm::cl::desc("scaling=gs: the model at contractions"),
      llvm::cl::init(GradientScalingOptions().gemmModel),
      scaleModelValues(/*withHalfNormal=*/true)};
  PassOptions::Option<ScaleModel> castModel{
      *this, "cast-model",
      llvm::cl::desc("scaling=gs: the model at FP32->FP16 casts"),
      llvm::cl::init(GradientScalingOptions().castModel),
      scaleModelValues(/*withHalfNormal=*/false)};
  PassOptions::Option<ReluMaskRule> reluMask{
      *this, "relu-mask",
      llvm::cl::desc("scaling=gs: where the half-normal model halves the "
                     "variance"),
      llvm::cl::init(GradientScalingOptions().reluMask), reluMaskValues()};

  // gs-loss-scaling (scaling=fixed, dynamic, none).
  PassOptions::Option<double> lossScale{
      *this, "loss-scale", llvm::cl::desc("scaling=fixed: the loss scale"),
      llvm::cl::init(LossScalingOptions().scale)};
  PassOptions::Option<double> initScale{
      *this, "init-scale",
      llvm::cl::desc("scaling=dynamic: the initial loss scale"),
      llvm::cl::init(LossScalingOptions().initScale)};
  PassOptions::Option<double> growthFactor{
      *this, "growth-factor",
      llvm::cl::desc("scaling=dynamic: the scale's factor after "
                     "growth-interval clean steps"),
      llvm::cl::init(LossScalingOptions().growthFactor)};
  PassOptions::Option<double> backoffFactor{
      *this, "backoff-factor",
      llvm::cl::desc("scaling=dynamic: the scale's factor after a "
                     "non-finite gradient"),
      llvm::cl::init(LossScalingOptions().backoffFactor)};
  PassOptions::Option<int64_t> growthInterval{
      *this, "growth-interval",
      llvm::cl::desc("scaling=dynamic: clean steps in a row before the scale "
                     "grows"),
      llvm::cl::init(LossScalingOptions().growthInterval)};
  PassOptions::Option<bool> skipNonFinite{
      *this, "skip-non-finite",
      llvm::cl::desc("scaling=fixed and none: skip a step whose gradients "
                     "hold an inf or NaN (dynamic and gs always do)"),
      llvm::cl::init(LossScalingOptions().skipNonFinite)};

  PassOptions::Option<bool> telemetry{
      *this, "telemetry",
      llvm::cl::desc("Record at every FP32->FP16 rounding of a gradient its "
                     "scale and what the rounding did (all but fp32)"),
      llvm::cl::init(GradientScalingOptions().telemetry)};

  // gs-data-parallel.
  PassOptions::Option<bool> dataParallel{
      *this, "data-parallel",
      llvm::cl::desc("Run gs-data-parallel last: a replica of a train step "
                     "that ranks run together on shards of the batch"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("gs-data-parallel: gradients smaller than this many "
                     "bytes are summed together in buckets of at most this "
                     "size (0: each alone)"),
      llvm::cl::init(1 << 20)};

  // gs-lower-to-llvm-cpu.
  PassOptions::Option<bool> lowerToLLVM{
      *this, "lower-to-llvm",
      llvm::cl::desc("Continue with gs-lower-to-llvm-cpu (off: stop at the "
                     "gs train step, which gs-run and gs-compile take)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> kernelSchedule{
      *this, "kernel-schedule",
      llvm::cl::desc("lower-to-llvm: tile and vectorize GEMMs and "
                     "convolutions"),
      llvm::cl::init(true)};
  PassOptions::Option<unsigned> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("lower-to-llvm: SIMD register width in bits that the "
                     "kernel schedule blocks for (0: the host CPU's)"),
      llvm::cl::init(0)};
};

/// The train step of an imported model: gs-train-step, (unless
/// scaling=fp32) gs-mixed-precision, gs-autodiff, (unless scaling=fp32 or
/// widen-weight-gradients=false) gs-widen-weight-gradients, the scaling
/// method and (with data-parallel) gs-data-parallel, optionally lowered for
/// the CPU.
void buildTrainPipeline(OpPassManager &pm, const TrainPipelineOptions &options);

/// Adds `eval_step`, a copy of `forward` that also returns the class scores
/// (batch x classes) its loss is computed from (gs-add-eval-step). Reports
/// why it cannot as an error at the op concerned.
LogicalResult addEvalStep(ModuleOp module);

/// Registers `gs-lower-to-llvm-cpu`, `gs-lower-to-gpu-kernels`, `gs-train`
/// and the passes the pipelines use.
void registerPipelines();

} // namespace mlir::gs

#endif // GS_PIPELINES_PIPELINES_H
