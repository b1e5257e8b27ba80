//===- ScalingOps.cpp - Gradient-scaling operations ------------*- C++ -*-===//

#include "OpUtils.h"
#include "gs/Dialect/GS/IR/GSOps.h"

#include "gs/Support/ScaleModel.h"
#include "gs/Support/Telemetry.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gs;

LogicalResult ComputeScaleOp::verify() {
  double threshold = getThreshold().convertToDouble();
  if (!(threshold > 0.0 && threshold < 1.0))
    return emitOpError("threshold must be in (0, 1), got ") << threshold;
  bool histogram = getModel() == ScaleModel::exponent_histogram;
  if (histogram != static_cast<bool>(getHistogram()))
    return emitOpError("takes a histogram with the exponent_histogram model, "
                       "and only then");
  if (histogram &&
      cast<RankedTensorType>(getHistogram().getType()).getDimSize(0) !=
          scaling::kExponentBins)
    return emitOpError("histogram must have ")
           << scaling::kExponentBins << " bins";
  if (getModel() == ScaleModel::half_normal) {
    if (!getWeightStats())
      return emitOpError("half_normal model needs the weight's statistics");
    if (!getAccumLength() || *getAccumLength() < 1)
      return emitOpError("half_normal model needs accum_length >= 1");
  } else {
    if (getWeightStats() || getAccumLength())
      return emitOpError()
             << stringifyScaleModel(getModel())
             << " model takes neither weight statistics nor accum_length";
    if (getReluMask())
      return emitOpError("relu_mask applies to the half_normal model only");
  }
  double minScale = getMinScale().convertToDouble();
  if (!(minScale > 0.0))
    return emitOpError("min_scale must be positive, got ") << minScale;
  if (std::optional<APFloat> maxScale = getMaxScale();
      maxScale && !(maxScale->convertToDouble() >= minScale))
    return emitOpError("max_scale must be >= min_scale");
  if (getMaxAccumScale() && !getAlpha())
    return emitOpError("max_accum_scale bounds alpha * scale and needs the "
                       "incoming alpha");
  return success();
}

OpFoldResult RescaleOp::fold(FoldAdaptor) {
  if (matchPattern(getScale(), m_OneFloat()))
    return getInput();
  return {};
}

OpFoldResult UnscaleOp::fold(FoldAdaptor) {
  if (matchPattern(getAlpha(), m_OneFloat()))
    return getInput();
  return {};
}

LogicalResult UnifyScalesOp::verify() {
  if (getAlphas().empty())
    return emitOpError("expects at least one incoming scale");
  if (getAlphas().size() != getStats().size())
    return emitOpError("expects one statistics value per incoming scale, got ")
           << getAlphas().size() << " scales and " << getStats().size()
           << " statistics";
  return success();
}

LogicalResult CastStatsOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location>,
                                            CastStatsOp::Adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  inferred.push_back(RankedTensorType::get({telemetry::NumCastCounts},
                                           IntegerType::get(context, 64)));
  return success();
}

LogicalResult AllFiniteOp::verify() {
  if (getInputs().empty())
    return emitOpError("expects at least one operand");
  return success();
}

bool ScaledContractionOp::canHold(Operation *op) {
  return TypeSwitch<Operation *, bool>(op)
      .Case([](GemmOp gemm) {
        return !gemm.getC() && gemm.getAlpha().isExactlyValue(1.0) &&
               gemm.getBeta().isExactlyValue(1.0);
      })
      .Case([](MatMulOp) { return true; })
      .Case([](ConvOp conv) { return !conv.getBias(); })
      .Case([](ConvTransposeOp conv) { return !conv.getBias(); })
      .Default(false);
}

LogicalResult ScaledContractionOp::verifyRegions() {
  Block &body = getBody().front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  Operation *contraction = &body.front();
  if (!yield || !llvm::hasNItems(body, 2) ||
      !isa<GemmOp, MatMulOp, ConvOp, ConvTransposeOp>(contraction) ||
      yield.getGradients() != contraction->getResults())
    return emitOpError("expects its region to compute one contraction "
                       "(gs.gemm, gs.matmul, gs.conv or gs.conv_transpose) "
                       "and yield its result");
  if (!canHold(contraction))
    return emitOpError("expects a contraction without C, alpha, beta or bias: "
                       "the scale is the epilogue's");
  auto product = cast<RankedTensorType>(contraction->getResult(0).getType());
  if (!product.getElementType().isF32() ||
      product.getShape() != getResult().getType().getShape())
    return emitOpError("expects an FP32 product of the result's shape, got ")
           << product;
  if (Value mask = getReluMask())
    if (cast<RankedTensorType>(mask.getType()).getShape() !=
        getResult().getType().getShape())
      return emitOpError("expects a ReLU mask of the result's shape, got ")
             << mask.getType();
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (isa<StatsType>(getInput().getType()) &&
      getReduction() != CollectiveReduction::sum)
    return emitOpError("combines statistics by their sum (counts and sums "
                       "add, maxima take the largest): the reduction must be "
                       "sum");
  return success();
}
