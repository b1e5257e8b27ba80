//===- GemmKernelPass.cpp - Add a fused GEMM kernel to a module -*- C++ -*-===//

#include "gs/Conversion/GSToGPU/GemmKernel.h"
#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::gs {
#define GEN_PASS_DEF_GPUGEMMKERNEL
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
struct GPUGemmKernelPass
    : gs::impl::GPUGemmKernelBase<GPUGemmKernelPass> {
  using GPUGemmKernelBase::GPUGemmKernelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    gs::tensorcore::GemmKernelConfig config;
    config.name = kernelName;
    config.m = m;
    config.n = n;
    config.k = k;
    config.transA = transA;
    config.transB = transB;
    config.output = output;
    config.bias = bias;
    config.biasType = biasType;
    config.reluMask = reluMask;
    config.statistics = statistics;
    config.blockM = blockM;
    config.blockN = blockN;
    config.blockK = blockK;
    config.warpsM = warpsM;
    config.warpsN = warpsN;
    config.stages = stages;
    config.minBlocksPerSM = minBlocksPerSM;
    config.wgmmaGroupsInFlight = wgmmaInFlight;
    if (wgmma)
      config.instruction = gs::tensorcore::MmaInstruction::Wgmma;
    gs::tensorcore::chooseTiles(config);
    Location loc = module.getLoc();
    if (module.lookupSymbol(config.name) ||
        (entry && module.lookupSymbol(config.name + "_entry"))) {
      emitError(loc) << "gemm kernel '" << config.name
                     << "': the module already has a symbol of that name";
      return signalPassFailure();
    }
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    FailureOr<func::FuncOp> kernel =
        gs::tensorcore::buildGemmKernel(builder, loc, config);
    if (failed(kernel))
      return signalPassFailure();
    if (entry)
      gs::tensorcore::buildGemmKernelEntry(builder, loc, config, *kernel);
  }
};
} // namespace
