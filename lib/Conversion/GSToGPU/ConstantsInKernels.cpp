//===- ConstantsInKernels.cpp - Kernels read their own constants -*- C++ -*-=//
//
// After bufferization a tensor constant is a constant memref global, and a
// kernel that reads one gets a memref.get_global of it as an operand, which
// gs-device-memory would turn into a device buffer uploaded from the host
// in every call. This pass lets the kernels read the constant themselves:
// a gpu.launch reads it from inside its body, and a gpu.func from a copy of
// the global in its gpu.module (data of the kernel's binary, loaded with
// it), the argument that carried it removed.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/GSToGPU/KernelParts.h"
#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::gs {
#define GEN_PASS_DEF_CONSTANTSINKERNELS
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// The constant global that `read` gets, where it is one a kernel may
/// keep: an initialized constant of at most `maxBytes`.
memref::GlobalOp kernelConstant(memref::GetGlobalOp read,
                                SymbolTableCollection &symbols,
                                int64_t maxBytes) {
  auto global = symbols.lookupNearestSymbolFrom<memref::GlobalOp>(
      read, read.getNameAttr());
  if (!global || !global.getConstant() || !global.getInitialValue() ||
      isa<UnitAttr>(*global.getInitialValue()))
    return {};
  MemRefType type = global.getType();
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return {};
  return gs::getBufferBytes(type) <= maxBytes ? global : memref::GlobalOp();
}

struct ConstantsInKernelsPass
    : gs::impl::ConstantsInKernelsBase<ConstantsInKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;

    // Inline kernels: the read moves into each body that uses it.
    SmallVector<memref::GetGlobalOp> reads;
    module.walk([&](memref::GetGlobalOp read) {
      if (!read->getParentOfType<gpu::LaunchOp>() &&
          !read->getParentOfType<gpu::GPUModuleOp>())
        reads.push_back(read);
    });
    for (memref::GetGlobalOp read : reads) {
      if (!kernelConstant(read, symbols, maxBytes))
        continue;
      llvm::SetVector<gpu::LaunchOp> launches;
      for (Operation *user : read->getUsers())
        if (auto launch = user->getParentOfType<gpu::LaunchOp>())
          launches.insert(launch);
      for (gpu::LaunchOp launch : launches) {
        if (!gs::kernelOnlyReads(read, launch))
          continue;
        OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
        Operation *inside = b.clone(*read);
        read.getResult().replaceUsesWithIf(
            inside->getResult(0), [&](OpOperand &use) {
              return launch->isProperAncestor(use.getOwner());
            });
      }
    }

    // Outlined kernels: an argument that every launch passes the same
    // constant in.
    llvm::MapVector<gpu::GPUFuncOp, SmallVector<gpu::LaunchFuncOp>> launchesOf;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (kernel)
        launchesOf[kernel].push_back(launch);
    });
    for (auto &[kernel, launches] : launchesOf) {
      if (kernel.isExternal())
        continue;
      for (int i = kernel.getNumArguments() - 1; i >= 0; --i)
        if (memref::GlobalOp global =
                constantArgument(kernel, launches, i, symbols))
          moveIntoKernel(global, kernel, launches, i, symbols);
    }

    // The host reads left without users.
    for (memref::GetGlobalOp read : reads)
      if (read.use_empty())
        read.erase();
  }

  /// The constant global that every one of `launches` passes as operand
  /// `index` of `kernel`, and that the kernel only reads; none otherwise.
  memref::GlobalOp constantArgument(gpu::GPUFuncOp kernel,
                                    ArrayRef<gpu::LaunchFuncOp> launches,
                                    unsigned index,
                                    SymbolTableCollection &symbols) {
    memref::GlobalOp constant;
    for (gpu::LaunchFuncOp launch : launches) {
      auto read = launch.getKernelOperands()[index]
                      .getDefiningOp<memref::GetGlobalOp>();
      if (!read)
        return {};
      memref::GlobalOp global = kernelConstant(read, symbols, maxBytes);
      if (!global || (constant && global != constant))
        return {};
      constant = global;
    }
    if (!constant || !gs::kernelOnlyReads(kernel.getArgument(index), kernel))
      return {};
    return constant;
  }

  /// Gives `kernel`'s gpu.module a copy of `global` (or finds one there),
  /// reads it where the kernel read its argument `index`, and removes that
  /// argument from the kernel and from `launches`.
  void moveIntoKernel(memref::GlobalOp global, gpu::GPUFuncOp kernel,
                      ArrayRef<gpu::LaunchFuncOp> launches, unsigned index,
                      SymbolTableCollection &symbols) {
    auto kernelModule = kernel->getParentOfType<gpu::GPUModuleOp>();
    SymbolTable &table = symbols.getSymbolTable(kernelModule);
    auto copy = table.lookup<memref::GlobalOp>(global.getSymName());
    if (!copy || !copy.getConstant() || copy.getType() != global.getType() ||
        copy.getInitialValueAttr() != global.getInitialValueAttr()) {
      copy = cast<memref::GlobalOp>(global->clone());
      copy.setPrivate();
      table.insert(copy, kernelModule.getBody()->begin());
    }
    OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
    Value read = memref::GetGlobalOp::create(b, global.getLoc(), copy.getType(),
                                             copy.getSymName());
    kernel.getArgument(index).replaceAllUsesWith(read);
    (void)kernel.eraseArgument(index);
    for (gpu::LaunchFuncOp launch : launches)
      launch.getKernelOperandsMutable().erase(index);
  }
};
} // namespace
