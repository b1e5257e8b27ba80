//===- UnrollRegisterBlockSteps.cpp - Unrolled GEMM micro-kernels -*- C++ -*-=//
//
// The reduction loop of a register block, once its accumulators are
// hoisted into iteration arguments, is marked for LLVM to unroll 4 times:
// one counter update, compare and branch per four steps of FMAs.
//
//===----------------------------------------------------------------------===//

#include "gs/Pipelines/Passes.h"

#include "RegisterBlockLoops.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::gs {
#define GEN_PASS_DEF_UNROLLREGISTERBLOCKSTEPS
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// Steps of a register block per iteration of its unrolled loop.
constexpr int32_t kStepsPerIteration = 4;

struct UnrollRegisterBlockStepsPass
    : gs::impl::UnrollRegisterBlockStepsBase<UnrollRegisterBlockStepsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto unroll = LLVM::LoopUnrollAttr::get(
        context, /*disable=*/nullptr,
        IntegerAttr::get(IntegerType::get(context, 32), kStepsPerIteration),
        /*runtimeDisable=*/nullptr, /*full=*/nullptr,
        /*followupUnrolled=*/nullptr, /*followupRemainder=*/nullptr,
        /*followupAll=*/nullptr);
    auto annotation = LLVM::LoopAnnotationAttr::get(
        context, /*disableNonforced=*/nullptr, /*vectorize=*/nullptr,
        /*interleave=*/nullptr, unroll, /*unrollAndJam=*/nullptr,
        /*licm=*/nullptr, /*distribute=*/nullptr, /*pipeline=*/nullptr,
        /*peeled=*/nullptr, /*unswitch=*/nullptr, /*mustProgress=*/nullptr,
        /*isVectorized=*/nullptr, /*startLoc=*/nullptr, /*endLoc=*/nullptr,
        /*parallelAccesses=*/{});
    StringRef name = gs::kLoopAnnotationAttrName;
    getOperation()->walk([&](scf::ForOp loop) {
      if (gs::isRegisterBlockSteps(loop))
        loop->setAttr(name, annotation);
    });
  }
};
} // namespace
