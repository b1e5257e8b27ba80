//===- OutlineGPUKernels.cpp - Outlining that keeps NVVM hints --*- C++ -*-===//
//
// gpu-kernel-outlining replaces each gpu.launch in place by a
// gpu.launch_func of a new gpu.func, but drops the launch's attributes. This
// pass runs it and then moves each launch's `nvvm.*` attributes onto its
// gpu.func, pairing launches and launch_funcs by their order in each
// function.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

namespace mlir::gs {
#define GEN_PASS_DEF_OUTLINEGPUKERNELS
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// A function's launches in order: the NVVM attributes of each gpu.launch,
/// or nothing for a gpu.launch_func that was already there.
using LaunchHints = SmallVector<std::optional<SmallVector<NamedAttribute>>>;

struct OutlineGPUKernelsPass
    : gs::impl::OutlineGPUKernelsBase<OutlineGPUKernelsPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    createGpuKernelOutliningPass()->getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::MapVector<Operation *, LaunchHints> hints;
    module.walk([&](Operation *op) {
      if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
        SmallVector<NamedAttribute> nvvm;
        for (NamedAttribute attr : launch->getDiscardableAttrs())
          if (attr.getName().strref().starts_with("nvvm.") ||
              attr.getName() == gs::kPerThreadOutputsAttrName)
            nvvm.push_back(attr);
        hints[op->getParentOfType<FunctionOpInterface>()].push_back(
            std::move(nvvm));
      } else if (isa<gpu::LaunchFuncOp>(op)) {
        hints[op->getParentOfType<FunctionOpInterface>()].push_back(
            std::nullopt);
      }
    });

    OpPassManager outlining(ModuleOp::getOperationName());
    outlining.addPass(createGpuKernelOutliningPass());
    if (failed(runPipeline(outlining, module)))
      return signalPassFailure();

    SymbolTableCollection symbols;
    for (auto &[function, launches] : hints) {
      if (!function)
        continue;
      SmallVector<gpu::LaunchFuncOp> outlined;
      function->walk(
          [&](gpu::LaunchFuncOp launch) { outlined.push_back(launch); });
      if (outlined.size() != launches.size()) {
        function->emitError()
            << "gs-outline-gpu-kernels: " << launches.size()
            << " launches before outlining, " << outlined.size() << " after";
        return signalPassFailure();
      }
      for (auto [launch, attrs] : llvm::zip_equal(outlined, launches)) {
        if (!attrs || attrs->empty())
          continue;
        auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
            launch, launch.getKernel());
        if (!kernel) {
          launch.emitError()
              << "gs-outline-gpu-kernels: no gpu.func " << launch.getKernel();
          return signalPassFailure();
        }
        for (NamedAttribute attr : *attrs)
          kernel->setAttr(attr.getName(), attr.getValue());
      }
    }
  }
};
} // namespace
