//===- CPUPipeline.cpp - gs to LLVM for the host CPU -----------*- C++ -*-===//

#include "gs/Conversion/Passes.h"
#include "gs/Pipelines/Passes.h"
#include "gs/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::gs;

void mlir::gs::buildGSToLinalgPipeline(OpPassManager &pm, bool paramsToGlobals,
                                       bool deviceCollectives) {
  pm.addPass(createCanonicalizerPass());
  ConvertGSParamsToMemRefOptions params;
  params.updatesOnly = !paramsToGlobals;
  pm.addPass(createConvertGSParamsToMemRef(params));
  OpPassManager &toLinalg = pm.nest<func::FuncOp>();
  toLinalg.addPass(createInlineBackward());
  toLinalg.addPass(createOverlapCollectives());
  ConvertGSToLinalgOptions toLinalgOptions;
  toLinalgOptions.deviceCollectives = deviceCollectives;
  toLinalg.addPass(createConvertGSToLinalg(toLinalgOptions));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  // Large floating-point sums in an order every target runs in parallel.
  pm.addPass(createSplitReductions());
}

void mlir::gs::buildCPUPipeline(OpPassManager &pm,
                                const CPUPipelineOptions &options) {
  buildGSToLinalgPipeline(pm, /*paramsToGlobals=*/true);
  pm.addNestedPass<func::FuncOp>(createWriteParamsInPlace());

  // Register-blocked, vectorized GEMMs and convolutions.
  if (options.kernelSchedule) {
    CPUKernelScheduleOptions schedule;
    schedule.vectorBits = options.vectorBits;
    pm.addPass(createCPUKernelSchedule(schedule));
    pm.addPass(createLoopInvariantSubsetHoistingPass());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }

  // Passes over the same tensor as one (after the kernel schedule, which
  // matches single ops around its GEMMs).
  if (options.fuseSiblings)
    pm.addNestedPass<func::FuncOp>(createFuseSiblings());
  // What reads a GEMM's or convolution's result, computed in its tile loop
  // (after gs-fuse-siblings, which makes the rounding and counting of a
  // gradient one op).
  if (options.fuseTileConsumers)
    pm.addNestedPass<func::FuncOp>(createFuseTileConsumers());

  // Elementwise ops and reductions along whole runs of rows, which LLVM
  // vectorizes where it would unroll each short row.
  pm.addPass(createCollapseInnerLoops());
  pm.addPass(createFillPadFrames());
  buildBufferizationPipeline(pm, /*deallocate=*/true);
  // The register blocks' output rows prefetched and their steps marked
  // for unrolling, on buffers.
  if (options.kernelSchedule) {
    pm.addPass(createPrefetchBlockOutputs());
    pm.addPass(createUnrollRegisterBlockSteps());
  }
  buildLoopsToLLVMPipeline(pm, /*gpuRuntimeCalls=*/false,
                           options.outlineKernels);
}

void mlir::gs::buildBufferizationPipeline(OpPassManager &pm, bool deallocate) {
  // A result computed into a tensor.empty and inserted into a slice of
  // another tensor is computed in that slice, not copied there.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  // Function results become out-parameters the caller owns.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(createSeparateReturnedBuffers());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  if (deallocate) {
    bufferization::BufferDeallocationPipelineOptions deallocation;
    bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  }
}

void mlir::gs::buildLoopsToLLVMPipeline(OpPassManager &pm, bool gpuRuntimeCalls,
                                        bool outlineKernels) {
  pm.addPass(createConvertStridedCopyToLinalg());
  if (outlineKernels)
    pm.addPass(createOutlineKernels());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToLLVMPass());
  // Buffers from the generic aligned allocation function, which the
  // runtime's buffer cache defines (gs/Runtime/BufferCache.h), its result
  // noalias (gs-mark-allocations-noalias): an over-allocated malloc aligned
  // through integer arithmetic hid that, and LLVM then kept every copy and
  // elementwise loop of a few iterations scalar (it could not move their
  // loads past their stores).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useAlignedAlloc = true;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addNestedPass<LLVM::LLVMFuncOp>(createMarkAllocationsNoAlias());
  // LLVM intrinsics where they exist (rsqrt has no libm function), libm
  // for the rest.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createLoopAnnotationsToLLVM());
  pm.addPass(createConvertFuncToLLVMPass());
  if (outlineKernels)
    pm.addNestedPass<LLVM::LLVMFuncOp>(createMarkDistinctBuffersNoAlias());
  pm.addPass(createConvertIndexToLLVMPass());
  // gpu.alloc, gpu.memcpy and the like to MLIR's GPU runtime calls.
  if (gpuRuntimeCalls)
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::gs::registerPipelines() {
  registerGSPipelinePasses();
  PassPipelineRegistration<CPUPipelineOptions>(
      "gs-lower-to-llvm-cpu", "Lower gs to the LLVM dialect for the host CPU",
      buildCPUPipeline);
  PassPipelineRegistration<CUDAPipelineOptions>(
      "gs-lower-to-cuda",
      "Lower gs to the LLVM dialect for NVIDIA GPUs: kernels as embedded "
      "binaries, host code calling MLIR's GPU runtime API",
      buildCUDAPipeline);
  PassPipelineRegistration<GPUKernelPipelineOptions>(
      "gs-lower-to-gpu-kernels",
      "A train step's computation in device kernels (gpu.launch), on "
      "tensors; the rest host code",
      buildGPUKernelPipeline);
  PassPipelineRegistration<TrainPipelineOptions>(
      "gs-train",
      "The train step with a gradient-precision method: autodiff, mixed "
      "precision, gradient or loss scaling",
      buildTrainPipeline);
}
