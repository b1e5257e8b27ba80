//===- LossScaling.cpp - Fixed and dynamic loss scaling ---------*- C++ -*-===//
//
// The baselines gradient scaling is compared with, on the same IR: the
// backward region is seeded with the gradient S of the loss instead of 1,
// and each parameter gradient is divided by S (gs.unscale) before its
// update.
//   - fixed: S is a constant;
//   - dynamic (PyTorch's GradScaler): S is training state, initially
//     `init-scale`; a step whose scaled gradients hold an inf or NaN skips
//     its updates (and the step counter) and multiplies S by
//     `backoff-factor`; after `growth-interval` clean steps in a row S is
//     multiplied by `growth-factor`. Skipped steps are counted in the state
//     `gs.skipped_steps`.
// With `telemetry`, every FP32->FP16 rounding of a gradient records what
// it did (Support/Telemetry.h), S as its scale; with mode none too, so the
// methods can be compared cast by cast.
//
//===----------------------------------------------------------------------===//

#include "ScalingUtils.h"
#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"
#include "gs/Support/Telemetry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

namespace mlir::gs {
#define GEN_PASS_DEF_LOSSSCALING
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;
using namespace mlir::gs::scaling_ir;

namespace {
struct LossScalingPass : gs::impl::LossScalingBase<LossScalingPass> {
  using LossScalingBase::LossScalingBase;

  void runOnOperation() override {
    if (mode == LossScalingMode::None && !telemetry && !skipNonFinite)
      return;
    auto positive = [&](StringRef option, double value) {
      if (value > 0)
        return true;
      emitError(getOperation().getLoc(), "gs-loss-scaling: ")
          << option << " must be positive, got " << value;
      return false;
    };
    if (!positive("scale", scale) || !positive("init-scale", initScale) ||
        !positive("growth-factor", growthFactor) ||
        !positive("backoff-factor", backoffFactor))
      return signalPassFailure();
    if (growthInterval < 1) {
      emitError(getOperation().getLoc(),
                "gs-loss-scaling: growth-interval must be >= 1, got ")
          << static_cast<int64_t>(growthInterval);
      return signalPassFailure();
    }
    SmallVector<BackwardOp> backwards;
    getOperation().walk([&](BackwardOp op) { backwards.push_back(op); });
    SymbolTable symbols(getOperation());
    int64_t sites = 0;
    for (BackwardOp backward : backwards)
      if (failed(scaleLoss(backward, symbols, sites)))
        return signalPassFailure();
  }

  LogicalResult scaleLoss(BackwardOp backward, SymbolTable &symbols,
                          int64_t &sites) {
    if (!backward.isComputed())
      return backward.emitOpError(
          "must be differentiated (by gs-autodiff) before gs-loss-scaling");
    Location loc = backward.getLoc();
    RankedTensorType lossType = typeOf(backward.getOf());
    bool none = mode == LossScalingMode::None;
    bool dynamic = mode == LossScalingMode::Dynamic;
    if (!none && lossType.getRank() != 0)
      return backward.emitOpError("loss scaling needs a scalar loss, got ")
             << lossType;
    Operation *anchor = backward->getParentOfType<func::FuncOp>();
    OpBuilder b(backward);
    auto f32Scalar = RankedTensorType::get({}, b.getF32Type());
    auto i64Scalar = RankedTensorType::get({}, b.getI64Type());

    // The seed of the backward pass: S as the loss's type.
    Value scaleTensor;
    ParamOp scaleState, goodSteps, skipped;
    if (dynamic) {
      StringRef purpose = "loss-scaling state";
      auto scaleParam =
          createState(symbols, anchor, telemetry::kLossScale, f32Scalar,
                      b.getF32FloatAttr(initScale), purpose);
      auto goodParam = createState(symbols, anchor, "gs.loss_scale.good_steps",
                                   i64Scalar, b.getI64IntegerAttr(0), purpose);
      auto skippedParam = getOrCreateSkippedSteps(symbols, anchor);
      if (failed(scaleParam) || failed(goodParam) || failed(skippedParam))
        return failure();
      scaleState = *scaleParam;
      goodSteps = *goodParam;
      skipped = *skippedParam;
      scaleTensor =
          ParamReadOp::create(b, loc, f32Scalar, scaleState.getSymName());
    } else {
      scaleTensor = splat(b, loc, f32Scalar, none ? 1.0 : scale);
    }
    if (!none) {
      // The gradient of the loss is S (times a seed the region has).
      Value seed = castLike(b, loc, scaleTensor, lossType);
      if (Value given = backward.getSeed())
        seed = MulOp::create(b, loc, given, seed);
      backward.getSeedMutable().assign(seed);
    }
    if (telemetry &&
        failed(recordRoundings(backward, scaleTensor, symbols, anchor, sites)))
      return failure();
    // fixed and none: with skip-non-finite, a step whose gradients are not
    // finite changes nothing and is counted.
    auto skipNonFiniteStep = [&](ValueRange gradients) {
      return success(!skipNonFinite ||
                     succeeded(skipNonFiniteSteps(b, backward, gradients,
                                                  symbols, anchor)));
    };
    if (none) {
      b.setInsertionPointAfter(backward);
      return skipNonFiniteStep(backward.getResults());
    }

    // Unscaled gradients for the updates.
    b.setInsertionPointAfter(backward);
    Value alpha = tensor::ExtractOp::create(b, loc, scaleTensor);
    SmallVector<Value> scaled(backward.getResults());
    for (Value gradient : scaled) {
      if (!typeOf(gradient).getElementType().isF32())
        return backward.emitOpError("loss scaling unscales FP32 gradients, "
                                    "got ")
               << gradient.getType();
      Value unscaled =
          UnscaleOp::create(b, loc, gradient, alpha, scaleIsPowerOfTwo());
      gradient.replaceAllUsesExcept(unscaled, unscaled.getDefiningOp());
    }
    if (!dynamic)
      return skipNonFiniteStep(scaled);

    // Dynamic: skip the updates (and the step count) on a non-finite
    // gradient, then adapt the scale.
    Value finite = AllFiniteOp::create(b, loc, scaled);
    guardUpdates(b, backward, finite);

    auto f32 = [&](double v) {
      return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
    };
    auto i64 = [&](int64_t v) {
      return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
    };
    Value good = readScalar(b, loc, goodSteps);
    Value nextGood = arith::AddIOp::create(b, loc, good, i64(1));
    Value grow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                       nextGood, i64(growthInterval));
    Value grownScale = arith::MulFOp::create(b, loc, alpha, f32(growthFactor));
    Value grown = arith::SelectOp::create(b, loc, grow, grownScale, alpha);
    Value backedOff = arith::MulFOp::create(b, loc, alpha, f32(backoffFactor));
    Value newScale = arith::SelectOp::create(b, loc, finite, grown, backedOff);
    Value goodIfFinite =
        arith::SelectOp::create(b, loc, grow, i64(0), nextGood);
    Value newGood =
        arith::SelectOp::create(b, loc, finite, goodIfFinite, i64(0));
    writeScalar(b, loc, scaleState, newScale);
    writeScalar(b, loc, goodSteps, newGood);
    countSkippedStep(b, loc, skipped, finite);
    return success();
  }

  /// Whether S is a power of two, so that unscaling may multiply by its
  /// exact reciprocal: a fixed scale that is a power of two, or a dynamic
  /// scale that starts at one and grows and backs off by powers of two (as
  /// PyTorch's GradScaler's does by default). A dynamic S halved below 2^-126 by steps that
  /// all overflow would make the reciprocal infinite, as it makes
  /// GradScaler's (which multiplies by a float32 reciprocal).
  bool scaleIsPowerOfTwo() const {
    auto isPowerOfTwo = [](double value) {
      int exponent;
      double mantissa = std::frexp(value, &exponent);
      return mantissa == 0.5 && exponent - 1 >= -126 && exponent - 1 <= 127;
    };
    if (mode == LossScalingMode::Dynamic)
      return isPowerOfTwo(initScale) && isPowerOfTwo(growthFactor) &&
             isPowerOfTwo(backoffFactor);
    return isPowerOfTwo(scale);
  }

  /// A telemetry record at every FP32->FP16 rounding of a gradient, with
  /// the loss scale as its scale.
  LogicalResult recordRoundings(BackwardOp backward, Value scaleTensor,
                                SymbolTable &symbols, Operation *anchor,
                                int64_t &sites) {
    Block &body = backward.getBody().front();
    SmallVector<Operation *> roundings = gradientRoundings(
        body, gradientValues(body, backward.getSeedArgument()));
    if (roundings.empty())
      return success();
    OpBuilder b(backward.getContext());
    b.setInsertionPointToStart(&body);
    Value alpha = tensor::ExtractOp::create(b, backward.getLoc(), scaleTensor);
    for (Operation *rounding : roundings) {
      FailureOr<ParamOp> record =
          createSiteRecord(symbols, anchor, sites++, rounding);
      if (failed(record))
        return failure();
      auto cast = dyn_cast<CastOp>(rounding);
      if (!cast)
        cast = exposeRounding(rounding);
      b.setInsertionPoint(cast);
      writeSiteRecord(b, cast.getLoc(), *record, alpha, alpha, Value(),
                      cast.getInput());
    }
    return success();
  }
};
} // namespace
