//===- Pipelines.h - GradScale compilation pipelines ------------*- C++ -*-===//

#ifndef GS_PIPELINES_PIPELINES_H
#define GS_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
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

/// Registers `gs-lower-to-llvm-cpu` and the passes the pipelines use.
void registerPipelines();

} // namespace mlir::gs

#endif // GS_PIPELINES_PIPELINES_H
