//===- GPUPipeline.cpp - A train step's computation in kernels --*- C++ -*-===//

#include "gs/Conversion/Passes.h"
#include "gs/Pipelines/Passes.h"
#include "gs/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::gs;

void mlir::gs::buildGPUKernelPipeline(OpPassManager &pm,
                                      const GPUKernelPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(createInlineBackward());
  pm.addNestedPass<func::FuncOp>(createFuseEpilogues());
  ConvertGSToGPUOptions contractions;
  contractions.wgmma = options.wgmma;
  pm.addPass(createConvertGSToGPU(contractions));
  // Where parameters live is the runtime's: they stay gs.param. The
  // collectives reduce device buffers.
  buildGSToLinalgPipeline(pm, /*paramsToGlobals=*/false,
                          /*deviceCollectives=*/true);
  // The scalar code on kernel results and the skip guard onto tensors,
  // then everything on tensors into kernels.
  pm.addPass(createDeviceScalars());
  pm.addPass(createSlicesToLinalg());
  // An optimizer update and its skip guard's selects in one kernel, a
  // transpose in its user's, and ops over the same loops that read one
  // tensor in one kernel.
  FuseElementwiseOptions fusion;
  fusion.multiResult = true;
  fusion.transposes = true;
  pm.addNestedPass<func::FuncOp>(createFuseElementwise(fusion));
  FuseSiblingsOptions siblings;
  siblings.sameLoops = true;
  pm.addNestedPass<func::FuncOp>(createFuseSiblings(siblings));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertLinalgToGPU());
  pm.addPass(createCanonicalizerPass());
}

void mlir::gs::buildCUDAPipeline(OpPassManager &pm,
                                 const CUDAPipelineOptions &options) {
  // wgmma exists only in the architecture-specific sm_90a.
  GPUKernelPipelineOptions kernels;
  kernels.wgmma = options.chip == "sm_90a";
  buildGPUKernelPipeline(pm, kernels);
  // The parameters as memref globals, whose storage the host keeps as the
  // device copies' mirror; buffers as for the CPU, freed by
  // gs-device-memory.
  pm.addPass(createConvertGSParamsToMemRef());
  pm.addPass(createCanonicalizerPass());
  buildBufferizationPipeline(pm, /*deallocate=*/false);
  // One straight-line host function per entry, its memory on the device.
  if (!options.emulateKernels) {
    pm.addPass(createGpuLaunchSinkIndexComputationsPass());
    pm.addPass(createOutlineGPUKernels());
  }
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  // Kernels on the parameters' buffers, not copies of them.
  pm.addPass(createDeviceParamsInPlace());
  // Runs of independent kernels (casts of the parameters, updates) and
  // runs of single-block kernels (the scalar bookkeeping) as one launch
  // each.
  pm.addPass(createMergeIndependentKernels());
  pm.addPass(createMergeSingleBlockKernels());
  // The merged launches as kernels of their own.
  if (!options.emulateKernels)
    pm.addPass(createOutlineGPUKernels());
  // Constants in the kernels, not uploaded in every call.
  pm.addPass(createConstantsInKernels());
  if (options.emulateKernels) {
    // The kernels' loops access device memory on the host (a stand-in
    // driver's, which is host memory): the gpu ops before each wait for it.
    pm.addPass(createDeviceMemory());
    pm.addPass(createCanonicalizerPass());
    EmulateGPUOptions emulation;
    emulation.checkRaces = options.emulateCheckRaces;
    pm.addPass(createEmulateGPU(emulation));
    pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
    buildLoopsToLLVMPipeline(pm, /*gpuRuntimeCalls=*/true,
                             /*outlineKernels=*/false);
    return;
  }
  // Everything queued on one stream; the runtime waits when it reads the
  // results.
  DeviceMemoryOptions memory;
  memory.queue = true;
  pm.addPass(createDeviceMemory(memory));
  pm.addPass(createCanonicalizerPass());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = 3;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}
