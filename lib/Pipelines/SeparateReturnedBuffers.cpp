//===- SeparateReturnedBuffers.cpp - One buffer per result -----*- C++ -*-===//

#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::gs {
#define GEN_PASS_DEF_SEPARATERETURNEDBUFFERS
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
struct SeparateReturnedBuffersPass
    : gs::impl::SeparateReturnedBuffersBase<SeparateReturnedBuffersPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](func::ReturnOp ret) {
      OpBuilder builder(ret);
      llvm::SmallPtrSet<Value, 8> seen;
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = dyn_cast<MemRefType>(operand.get().getType());
        if (!type || seen.insert(operand.get()).second)
          continue;
        if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
          ret.emitOpError("returns a dynamically shaped or strided buffer "
                          "twice (result #")
              << operand.getOperandNumber() << "), which cannot be copied";
          return WalkResult::interrupt();
        }
        auto copy = memref::AllocOp::create(builder, ret.getLoc(), type);
        memref::CopyOp::create(builder, ret.getLoc(), operand.get(), copy);
        operand.set(copy);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
