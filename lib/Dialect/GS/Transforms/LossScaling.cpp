//===- LossScaling.cpp - Fixed and dynamic loss scaling ---------*- C++ -*-===//
//
// The baselines gradient scaling is compared with, on the same IR: the
// backward region is rebuilt from the gradient S of the loss instead of 1,
// and each parameter gradient is divided by S (gs.unscale) before its
// update.
//   - fixed: S is a constant;
//   - dynamic (PyTorch's GradScaler): S is training state, initially
//     `init-scale`; a step whose scaled gradients hold an inf or NaN skips
//     its updates (and the step counter) and multiplies S by
//     `backoff-factor`; after `growth-interval` clean steps in a row S is
//     multiplied by `growth-factor`. Skipped steps are counted in the state
//     `gs.skipped_steps`.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::gs {
#define GEN_PASS_DEF_LOSSSCALING
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

/// The state parameter `name` holding `initial`, created before `anchor`;
/// an error where the symbol exists.
static FailureOr<ParamOp> createState(SymbolTable &symbols, Operation *anchor,
                                      StringRef name, RankedTensorType type,
                                      Attribute initial) {
  if (symbols.lookup(name))
    return anchor->emitOpError("needs the symbol @")
           << name << " for loss-scaling state, but it is taken (was "
           << "gs-loss-scaling run already?)";
  OpBuilder b(anchor);
  auto param = ParamOp::create(
      b, anchor->getLoc(), name, ParamKind::state,
      cast<ElementsAttr>(DenseElementsAttr::get(type, initial)));
  symbols.insert(param);
  return param;
}

namespace {
struct LossScalingPass : gs::impl::LossScalingBase<LossScalingPass> {
  using LossScalingBase::LossScalingBase;

  void runOnOperation() override {
    if (mode != "none" && mode != "fixed" && mode != "dynamic") {
      emitError(getOperation().getLoc(),
                "gs-loss-scaling: mode must be none, fixed or dynamic, got '")
          << mode << "'";
      return signalPassFailure();
    }
    if (mode == "none")
      return;
    for (double value : {double(scale), double(initScale)})
      if (!(value > 0)) {
        emitError(getOperation().getLoc(),
                  "gs-loss-scaling: scales must be positive");
        return signalPassFailure();
      }
    SmallVector<BackwardOp> backwards;
    getOperation().walk([&](BackwardOp op) { backwards.push_back(op); });
    SymbolTable symbols(getOperation());
    for (BackwardOp backward : backwards)
      if (failed(scaleLoss(backward, symbols)))
        return signalPassFailure();
  }

  LogicalResult scaleLoss(BackwardOp backward, SymbolTable &symbols) {
    if (!backward.isComputed())
      return backward.emitOpError(
          "must be differentiated (by gs-autodiff) before gs-loss-scaling");
    Location loc = backward.getLoc();
    RankedTensorType lossType = typeOf(backward.getOf());
    if (lossType.getRank() != 0)
      return backward.emitOpError("loss scaling needs a scalar loss, got ")
             << lossType;
    bool dynamic = mode == "dynamic";
    OpBuilder b(backward);
    auto f32Scalar = RankedTensorType::get({}, b.getF32Type());
    auto i64Scalar = RankedTensorType::get({}, b.getI64Type());

    // The seed of the backward pass: S as the loss's type.
    Value scaleTensor;
    ParamOp scaleState, goodSteps, skipped;
    if (dynamic) {
      Operation *anchor = backward->getParentOfType<func::FuncOp>();
      auto scaleParam = createState(symbols, anchor, "gs.loss_scale", f32Scalar,
                                    b.getF32FloatAttr(initScale));
      auto goodParam = createState(symbols, anchor, "gs.loss_scale.good_steps",
                                   i64Scalar, b.getI64IntegerAttr(0));
      auto skippedParam = createState(symbols, anchor, "gs.skipped_steps",
                                      i64Scalar, b.getI64IntegerAttr(0));
      if (failed(scaleParam) || failed(goodParam) || failed(skippedParam))
        return failure();
      scaleState = *scaleParam;
      goodSteps = *goodParam;
      skipped = *skippedParam;
      scaleTensor =
          ParamReadOp::create(b, loc, f32Scalar, scaleState.getSymName());
    } else {
      scaleTensor = splat(b, loc, f32Scalar, scale);
    }
    Value seed = castLike(b, loc, scaleTensor, lossType);
    // Rebuilt as gs-mixed-precision left it: weight gradients in FP32.
    backward.getBody().getBlocks().clear();
    if (failed(differentiate(backward, seed)))
      return failure();
    widenContractionResults(backward.getBody().front());

    // Unscaled gradients for the updates.
    b.setInsertionPointAfter(backward);
    Value alpha = tensor::ExtractOp::create(b, loc, scaleTensor);
    SmallVector<Value> scaled(backward.getResults());
    for (Value gradient : scaled) {
      if (!typeOf(gradient).getElementType().isF32())
        return backward.emitOpError("loss scaling unscales FP32 gradients, "
                                    "got ")
               << gradient.getType();
      Value unscaled = UnscaleOp::create(b, loc, gradient, alpha);
      gradient.replaceAllUsesExcept(unscaled, unscaled.getDefiningOp());
    }
    if (!dynamic)
      return success();

    // Dynamic: skip the updates (and the step count) on a non-finite
    // gradient, then adapt the scale.
    Value finite = AllFiniteOp::create(b, loc, scaled);
    SmallVector<Operation *> guarded;
    for (Operation *op = backward->getNextNode(); op; op = op->getNextNode())
      if (isa<UpdateOp>(op) || (isa<ParamWriteOp>(op) &&
                                cast<ParamWriteOp>(op).getParam() == "gs.step"))
        guarded.push_back(op);
    if (!guarded.empty()) {
      b.setInsertionPoint(guarded.back());
      auto ifOp = scf::IfOp::create(b, loc, finite, /*withElseRegion=*/false);
      Block *then = ifOp.thenBlock();
      for (Operation *op : guarded)
        op->moveBefore(then->getTerminator());
      b.setInsertionPointAfter(ifOp);
    }

    auto f32 = [&](double v) {
      return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
    };
    auto i64 = [&](int64_t v) {
      return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
    };
    Value good = tensor::ExtractOp::create(
        b, loc,
        ParamReadOp::create(b, loc, i64Scalar, goodSteps.getSymName())
            .getResult());
    Value skips = tensor::ExtractOp::create(
        b, loc,
        ParamReadOp::create(b, loc, i64Scalar, skipped.getSymName())
            .getResult());
    Value nextGood = arith::AddIOp::create(b, loc, good, i64(1));
    Value grow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                       nextGood, i64(growthInterval));
    Value grown = arith::SelectOp::create(
        b, loc, grow, arith::MulFOp::create(b, loc, alpha, f32(growthFactor)),
        alpha);
    Value newScale = arith::SelectOp::create(
        b, loc, finite, grown,
        arith::MulFOp::create(b, loc, alpha, f32(backoffFactor)));
    Value newGood = arith::SelectOp::create(
        b, loc, finite, arith::SelectOp::create(b, loc, grow, i64(0), nextGood),
        i64(0));
    Value newSkips = arith::SelectOp::create(
        b, loc, finite, skips, arith::AddIOp::create(b, loc, skips, i64(1)));
    auto write = [&](Value scalar, RankedTensorType type, ParamOp param) {
      Value tensor =
          tensor::FromElementsOp::create(b, loc, type, ValueRange{scalar});
      ParamWriteOp::create(b, loc, tensor, param.getSymName());
    };
    write(newScale, f32Scalar, scaleState);
    write(newGood, i64Scalar, goodSteps);
    write(newSkips, i64Scalar, skipped);
    return success();
  }
};
} // namespace
