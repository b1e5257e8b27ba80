//===- StridedCopyToLinalg.cpp - memref.copy of views to linalg -*- C++ -*-===//

#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir::gs {
#define GEN_PASS_DEF_CONVERTSTRIDEDCOPYTOLINALG
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
struct ConvertStridedCopyToLinalgPass
    : gs::impl::ConvertStridedCopyToLinalgBase<ConvertStridedCopyToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> strided;
    getOperation()->walk([&](memref::CopyOp copy) {
      auto source = cast<MemRefType>(copy.getSource().getType());
      auto target = cast<MemRefType>(copy.getTarget().getType());
      if (!memref::isStaticShapeAndContiguousRowMajor(source) ||
          !memref::isStaticShapeAndContiguousRowMajor(target))
        strided.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : strided) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }
  }
};
} // namespace
