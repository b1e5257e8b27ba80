//===- MarkDistinctBuffersNoAlias.cpp - Kernels' noalias --------*- C++ -*-===//

#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::gs {
#define GEN_PASS_DEF_MARKDISTINCTBUFFERSNOALIAS
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
struct MarkDistinctBuffersNoAliasPass
    : gs::impl::MarkDistinctBuffersNoAliasBase<MarkDistinctBuffersNoAliasPass> {
  void runOnOperation() override {
    LLVM::LLVMFuncOp function = getOperation();
    if (!function->removeAttr(gs::kDistinctBuffersAttrName))
      return;
    UnitAttr unit = UnitAttr::get(&getContext());
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes()))
      if (isa<LLVM::LLVMPointerType>(type))
        function.setArgAttr(index, LLVM::LLVMDialect::getNoAliasAttrName(),
                            unit);
  }
};
} // namespace
