//===- LoopAnnotationsToLLVM.cpp - !llvm.loop from scf.for -----*- C++ -*-===//
//
// The `llvm.loop_annotation` of an scf.for, which scf-to-cf and cf-to-llvm
// leave as a plain attribute on the loop's closing branch, becomes that
// branch's loop_annotation, which translation emits as !llvm.loop.
//
//===----------------------------------------------------------------------===//

#include "gs/Pipelines/Passes.h"

#include "RegisterBlockLoops.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::gs {
#define GEN_PASS_DEF_LOOPANNOTATIONSTOLLVM
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
struct LoopAnnotationsToLLVMPass
    : gs::impl::LoopAnnotationsToLLVMBase<LoopAnnotationsToLLVMPass> {
  void runOnOperation() override {
    StringRef name = gs::kLoopAnnotationAttrName;
    auto take = [&](Operation *branch) {
      return dyn_cast_or_null<LLVM::LoopAnnotationAttr>(
          branch->removeDiscardableAttr(name));
    };
    getOperation()->walk([&](Operation *op) {
      if (auto br = dyn_cast<LLVM::BrOp>(op)) {
        if (LLVM::LoopAnnotationAttr annotation = take(br))
          br.setLoopAnnotationAttr(annotation);
      } else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op)) {
        if (LLVM::LoopAnnotationAttr annotation = take(condBr))
          condBr.setLoopAnnotationAttr(annotation);
      }
    });
  }
};
} // namespace
