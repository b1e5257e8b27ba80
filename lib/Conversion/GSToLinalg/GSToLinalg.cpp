//===- GSToLinalg.cpp - gs tensor ops to linalg ----------------*- C++ -*-===//

#include "gs/Conversion/GSToLinalg/GSToLinalg.h"
#include "gs/Conversion/Passes.h"

#include "Utils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::gs {
#define GEN_PASS_DEF_CONVERTGSTOLINALG
#include "gs/Conversion/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

void mlir::gs::populateGSToLinalgConversionPatterns(TypeConverter &converter,
                                                    RewritePatternSet &patterns,
                                                    bool deviceCollectives) {
  to_linalg::populateElementwisePatterns(converter, patterns);
  to_linalg::populateContractionPatterns(converter, patterns);
  to_linalg::populateNormalizationPatterns(converter, patterns);
  to_linalg::populatePoolingPatterns(converter, patterns);
  to_linalg::populateShapePatterns(converter, patterns);
  to_linalg::populateReductionPatterns(converter, patterns);
  to_linalg::populateOptimizerPatterns(converter, patterns);
  to_linalg::populateScalingPatterns(converter, patterns);
  to_linalg::populateCollectivePatterns(converter, patterns, deviceCollectives);
}

void mlir::gs::configureGSToLinalgTarget(ConversionTarget &target) {
  target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                         math::MathDialect, scf::SCFDialect,
                         tensor::TensorDialect>();
  // Collectives are calls of the runtime on buffers.
  target.addLegalDialect<bufferization::BufferizationDialect,
                         memref::MemRefDialect>();
  target.addIllegalDialect<GSDialect>();
  // Training structure has a pass of its own.
  target.addLegalOp<ParamOp, ParamReadOp, ParamWriteOp, TrainingOp, UpdateOp>();
  target.addDynamicallyLegalOp<UnrealizedConversionCastOp>(
      [](UnrealizedConversionCastOp op) {
        return !to_linalg::isStatsLowering(op);
      });
}

namespace {
/// Rejects what this lowering cannot express: gs.backward regions
/// (differentiated by gs-autodiff and inlined by gs-inline-backward first)
/// and unsigned parameters (the training structure's lowering keeps types
/// as they are).
LogicalResult checkLowerable(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    if (!isa<GSDialect>(op->getDialect()))
      return WalkResult::advance();
    if (isa<BackwardOp>(op)) {
      op->emitOpError(cast<BackwardOp>(op).isComputed()
                          ? "must be inlined (by gs-inline-backward) before "
                            "lowering"
                          : "must be differentiated (by gs-autodiff) before "
                            "lowering");
      return WalkResult::interrupt();
    }
    if (!isa<ParamOp, ParamReadOp, ParamWriteOp, UpdateOp>(op))
      return WalkResult::advance();
    for (Type type :
         llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
      if (to_linalg::isUnsignedElement(type)) {
        op->emitOpError("has an unsigned integer parameter (")
            << type << "), which the CPU lowering does not support";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct ConvertGSToLinalgPass
    : mlir::gs::impl::ConvertGSToLinalgBase<ConvertGSToLinalgPass> {
  using ConvertGSToLinalgBase::ConvertGSToLinalgBase;

  void runOnOperation() override {
    Operation *root = getOperation();
    if (failed(checkLowerable(root)))
      return signalPassFailure();
    MLIRContext *context = &getContext();
    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    // Unsigned integer tensors compute as signless ones.
    converter.addConversion([](RankedTensorType type) -> Type {
      return to_linalg::signlessType(type);
    });
    to_linalg::addStatsTypeConversion(converter);
    RewritePatternSet patterns(context);
    populateGSToLinalgConversionPatterns(converter, patterns,
                                         deviceCollectives);
    // Function signatures follow (the ABI keeps the unsigned types, read
    // from the gs module before lowering).
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    ConversionTarget target(*context);
    configureGSToLinalgTarget(target);
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) &&
             converter.isLegal(&op.getBody());
    });
    target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp>(
        [&](Operation *op) { return converter.isLegal(op); });
    if (failed(applyPartialConversion(root, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
