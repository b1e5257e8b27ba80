//===- MarkAllocationsNoAlias.cpp - Fresh blocks are noalias ----*- C++ -*-===//

#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::gs {
#define GEN_PASS_DEF_MARKALLOCATIONSNOALIAS
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// MLIR's generic allocation functions (finalize-memref-to-llvm's
/// use-generic-functions), which the runtime's buffer cache defines.
constexpr StringLiteral kAllocationFunctions[] = {
    "_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_aligned_alloc"};

struct MarkAllocationsNoAliasPass
    : gs::impl::MarkAllocationsNoAliasBase<MarkAllocationsNoAliasPass> {
  void runOnOperation() override {
    LLVM::LLVMFuncOp function = getOperation();
    if (!function.isExternal() ||
        !llvm::is_contained(kAllocationFunctions, function.getSymName()))
      return;
    function.setResultAttr(0, LLVM::LLVMDialect::getNoAliasAttrName(),
                           UnitAttr::get(&getContext()));
  }
};
} // namespace
