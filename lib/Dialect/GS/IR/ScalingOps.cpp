//===- ScalingOps.cpp - Gradient-scaling operations ------------*- C++ -*-===//

#include "OpUtils.h"
#include "gs/Dialect/GS/IR/GSOps.h"

#include "gs/Support/ScaleModel.h"
#include "gs/Support/Telemetry.h"

#include "mlir/IR/Matchers.h"

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

LogicalResult FusedGemmOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getA()), b = shapeOf(getB());
  int64_t m = getTransA() ? a[1] : a[0];
  int64_t k = getTransA() ? a[0] : a[1];
  int64_t kb = getTransB() ? b[1] : b[0];
  int64_t n = getTransB() ? b[0] : b[1];
  if (k != kb)
    return emitOpError("contraction dimensions disagree: op(a) is ")
           << m << "x" << k << " and op(b) is " << kb << "x" << n;
  if (shapeOf(getResult()) != ArrayRef<int64_t>{m, n})
    return emitOpError("expects a result of shape ")
           << m << "x" << n << ", got " << formatShape(shapeOf(getResult()));
  if (Value bias = getBias(); bias && shapeOf(bias) != ArrayRef<int64_t>{n})
    return emitOpError("expects a bias of shape ")
           << n << ", got " << formatShape(shapeOf(bias));
  return success();
}
