//===- DumpGPUBinaries.cpp - Write gpu.binary objects to files --*- C++ -*-===//

#include "gs/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::gs {
#define GEN_PASS_DEF_DUMPGPUBINARIES
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
StringRef extensionOf(gpu::CompilationTarget format) {
  switch (format) {
  case gpu::CompilationTarget::Offload:
    return "bc";
  case gpu::CompilationTarget::Assembly:
    return "ptx";
  case gpu::CompilationTarget::Binary:
    return "cubin";
  case gpu::CompilationTarget::Fatbin:
    return "fatbin";
  }
  return "bin";
}

struct DumpGPUBinariesPass
    : gs::impl::DumpGPUBinariesBase<DumpGPUBinariesPass> {
  using DumpGPUBinariesBase::DumpGPUBinariesBase;

  void runOnOperation() override {
    if (!llvm::sys::fs::is_directory(outputDir)) {
      emitError(getOperation().getLoc())
          << "gs-dump-gpu-binaries: output-dir '" << outputDir
          << "' is not a directory";
      return signalPassFailure();
    }
    getOperation().walk([&](gpu::BinaryOp binary) {
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        std::string chip = "unknown";
        if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()))
          chip = nvvm.getChip().str();
        SmallString<256> path(outputDir);
        llvm::sys::path::append(path, binary.getSymName() + "." + chip + "." +
                                          extensionOf(object.getFormat()));
        std::string message;
        std::unique_ptr<llvm::ToolOutputFile> file =
            openOutputFile(path, &message);
        if (!file) {
          binary.emitError() << "cannot write '" << path << "': " << message;
          return signalPassFailure();
        }
        file->os() << object.getObject().getValue();
        file->os().close();
        if (file->os().has_error()) {
          binary.emitError() << "cannot write '" << path << "'";
          file->os().clear_error();
          return signalPassFailure();
        }
        file->keep();
      }
    });
  }
};
} // namespace
