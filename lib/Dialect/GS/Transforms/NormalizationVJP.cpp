//===- NormalizationVJP.cpp - Gradients of batch and layer norm -*- C++ -*-===//
//
// Both normalize xhat = (x - mean) * inv_std over a set of axes (the batch
// and spatial axes for batch_norm, the trailing ones for layer_norm) and
// differentiate through the statistics:
//   dx = inv_std * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
// with the means over the normalized axes. The gradient is computed in the
// precision the forward normalizes in: f32, f64 for f64 data.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

namespace {
/// The normalization of `x` over `axes` with `mean` and `invStd` broadcast
/// to it, and the pieces of its gradient that do not depend on the affine
/// part.
class Normalized {
public:
  Normalized(OpBuilder &b, Location loc, Value x, Value mean, Value invStd,
             ArrayRef<int64_t> axes)
      : b(b), loc(loc), x(x), mean(mean), invStd(invStd), axes(axes) {
    RankedTensorType type = typeOf(x);
    for (int64_t axis : axes)
      count *= type.getDimSize(axis);
    xhat = MulOp::create(b, loc, SubOp::create(b, loc, x, mean), invStd);
  }

  Value getXhat() const { return xhat; }

  /// The mean of `value` over the normalized axes, kept as size-1 dims.
  Value meanOver(Value value) {
    return ReduceMeanOp::create(b, loc, value, b.getDenseI64ArrayAttr(axes),
                                b.getUnitAttr());
  }

  Value times(Value value, double factor) {
    return MulOp::create(
        b, loc, value, scalar(b, loc, typeOf(value).getElementType(), factor));
  }

  /// The gradient of x through xhat, given the gradient of xhat.
  Value throughXhat(Value dxhat) {
    Value centered = SubOp::create(b, loc, dxhat, meanOver(dxhat));
    Value projection = MulOp::create(
        b, loc, xhat, meanOver(MulOp::create(b, loc, dxhat, xhat)));
    return MulOp::create(b, loc, invStd,
                         SubOp::create(b, loc, centered, projection));
  }

  /// The gradient of x through the mean statistic.
  Value throughMean(Value dmean) { return times(dmean, 1.0 / count); }

  /// The gradient of x through the biased variance statistic:
  /// 2 (x - mean) / count = 2 xhat / (inv_std count).
  Value throughVariance(Value dvar) {
    Value centered = DivOp::create(b, loc, xhat, invStd);
    return MulOp::create(b, loc, dvar, times(centered, 2.0 / count));
  }

  /// The gradient of x through inv_std = (var + eps)^-1/2:
  /// -inv_std^3 (x - mean) / count = -inv_std^2 xhat / count.
  Value throughInvStd(Value dinv) {
    Value square = MulOp::create(b, loc, invStd, invStd);
    return MulOp::create(
        b, loc, dinv, times(MulOp::create(b, loc, square, xhat), -1.0 / count));
  }

private:
  OpBuilder &b;
  Location loc;
  Value x, mean, invStd, xhat;
  SmallVector<int64_t> axes;
  double count = 1;
};

} // namespace

/// `type` with the element type a normalization of `input` computes in.
static RankedTensorType computeTypeOf(RankedTensorType type, Value input) {
  Type element = typeOf(input).getElementType();
  MLIRContext *context = element.getContext();
  return type.clone(element.isF64() ? element : Float32Type::get(context));
}

/// The sum of the non-null `terms`, or null.
static Value sumOf(OpBuilder &b, Location loc, ArrayRef<Value> terms) {
  Value sum;
  for (Value term : terms)
    if (term)
      sum = sum ? AddOp::create(b, loc, sum, term).getResult() : term;
  return sum;
}

namespace {
/// The per-channel (C) values of a batch norm over `input` (N x C x ...),
/// in the precision it computes in: cast, laid out as 1 x C x 1... to
/// broadcast against the input, and summed over every axis but C.
class Channels {
public:
  Channels(OpBuilder &b, Location loc, Value input, Value perChannelValue)
      : b(b), loc(loc), type(computeTypeOf(typeOf(perChannelValue), input)),
        axes(nonChannelAxes(typeOf(input).getRank())) {
    SmallVector<int64_t> shape(typeOf(input).getRank(), 1);
    shape[1] = typeOf(input).getDimSize(1);
    broadcastType = type.clone(shape);
  }

  RankedTensorType getType() const { return type; }
  ArrayRef<int64_t> getAxes() const { return axes; }
  Value inCompute(Value v) { return castLike(b, loc, v, type); }
  Value broadcastable(Value v) {
    return reshape(b, loc, castLike(b, loc, v, type), broadcastType);
  }
  Value sum(Value v) {
    return ReduceSumOp::create(b, loc, v, b.getDenseI64ArrayAttr(axes),
                               /*keepdims=*/nullptr);
  }
  /// var + epsilon.
  Value withEpsilon(Value variance, FloatAttr epsilon) {
    return AddOp::create(
        b, loc, variance,
        scalar(b, loc, type.getElementType(), epsilon.getValueAsDouble()));
  }
  /// 1 / sqrt(v).
  Value reciprocalSqrt(Value v) {
    Value one = scalar(b, loc, type.getElementType(), 1.0);
    return DivOp::create(b, loc, one, SqrtOp::create(b, loc, v));
  }

private:
  OpBuilder &b;
  Location loc;
  RankedTensorType type, broadcastType;
  SmallVector<int64_t> axes;
};

/// batch_norm (training): statistics over every axis but the channels.
struct BatchNormVJP
    : DifferentiableOpInterface::ExternalModel<BatchNormVJP, BatchNormOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto bn = cast<BatchNormOp>(op);
    Location loc = op->getLoc();
    RankedTensorType xType = typeOf(bn.getInput());
    Channels channels(b, loc, bn.getInput(), bn.getBatchMean());
    auto perChannel = [&](Value v) { return channels.broadcastable(v); };

    Value x = castLike(b, loc, bn.getInput(), channels.getType());
    Value mean = perChannel(bn.getBatchMean());
    Value invStd = channels.reciprocalSqrt(channels.withEpsilon(
        perChannel(bn.getBatchVar()), bn.getEpsilonAttr()));
    Normalized norm(b, loc, x, mean, invStd, channels.getAxes());

    Value dx, dscale, dbias;
    if (Value dy = gradients[0]) {
      dy = channels.inCompute(dy);
      dbias = castLike(b, loc, channels.sum(dy), typeOf(bn.getBias()));
      dscale = castLike(b, loc,
                        channels.sum(MulOp::create(b, loc, dy, norm.getXhat())),
                        typeOf(bn.getScale()));
      dx = norm.throughXhat(
          MulOp::create(b, loc, dy, perChannel(bn.getScale())));
    }
    if (Value dmean = gradients[1])
      dx = sumOf(b, loc, {dx, norm.throughMean(perChannel(dmean))});
    if (Value dvar = gradients[2])
      dx = sumOf(b, loc, {dx, norm.throughVariance(perChannel(dvar))});
    operandGradients.push_back(castLike(b, loc, dx, xType));
    operandGradients.push_back(dscale);
    operandGradients.push_back(dbias);
    return success();
  }
};

/// batch_norm_inference: an affine map per channel with given statistics,
/// y = (x - mean) * k + bias with k = scale / sqrt(var + eps):
///   dx = dy * k, dscale = sum(dy * xhat), dbias = sum(dy),
///   dmean = -sum(dy) * k, dvar = -sum(dy * xhat) * scale / (2 (var + eps)).
struct BatchNormInferenceVJP
    : DifferentiableOpInterface::ExternalModel<BatchNormInferenceVJP,
                                               BatchNormInferenceOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto bn = cast<BatchNormInferenceOp>(op);
    Location loc = op->getLoc();
    Channels channels(b, loc, bn.getInput(), bn.getScale());
    auto perChannel = [&](Value v) { return channels.broadcastable(v); };
    Type element = channels.getType().getElementType();
    Value scale = channels.inCompute(bn.getScale());
    Value variance = channels.withEpsilon(channels.inCompute(bn.getVariance()),
                                          bn.getEpsilonAttr());
    Value invStd = channels.reciprocalSqrt(variance);
    Value k = MulOp::create(b, loc, scale, invStd);

    Value dy = channels.inCompute(gradients[0]);
    Value x = channels.inCompute(bn.getInput());
    Value centered = SubOp::create(b, loc, x, perChannel(bn.getMean()));
    Value xhat = MulOp::create(b, loc, centered, perChannel(invStd));
    Value dbias = channels.sum(dy);
    Value dscale = channels.sum(MulOp::create(b, loc, dy, xhat));
    Value dx = MulOp::create(b, loc, dy, perChannel(k));
    Value dmean = NegOp::create(b, loc, MulOp::create(b, loc, dbias, k));
    Value halfOverVariance =
        DivOp::create(b, loc, scalar(b, loc, element, -0.5), variance);
    Value dvar = MulOp::create(b, loc, MulOp::create(b, loc, dscale, scale),
                               halfOverVariance);
    auto like = [&](Value v, Value operand) {
      return castLike(b, loc, v, typeOf(operand));
    };
    operandGradients.append(
        {like(dx, bn.getInput()), like(dscale, bn.getScale()),
         like(dbias, bn.getBias()), like(dmean, bn.getMean()),
         like(dvar, bn.getVariance())});
    return success();
  }
};

/// layer_norm: statistics over the trailing axes from `axis`.
struct LayerNormVJP
    : DifferentiableOpInterface::ExternalModel<LayerNormVJP, LayerNormOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto ln = cast<LayerNormOp>(op);
    Location loc = op->getLoc();
    RankedTensorType xType = typeOf(ln.getInput());
    RankedTensorType statsType = typeOf(ln.getMean());
    SmallVector<int64_t> axes;
    for (int64_t d = ln.getAxis(); d < xType.getRank(); ++d)
      axes.push_back(d);
    auto inStats = [&](Value v) { return castLike(b, loc, v, statsType); };

    Normalized norm(b, loc, inStats(ln.getInput()), ln.getMean(),
                    ln.getInvStdDev(), axes);
    Value dx, dscale, dbias;
    if (Value dy = gradients[0]) {
      dy = inStats(dy);
      dscale = unbroadcast(b, loc, MulOp::create(b, loc, dy, norm.getXhat()),
                           typeOf(ln.getScale()));
      if (Value bias = ln.getBias())
        dbias = unbroadcast(b, loc, dy, typeOf(bias));
      dx = norm.throughXhat(MulOp::create(b, loc, dy, inStats(ln.getScale())));
    }
    if (Value dmean = gradients[1])
      dx = sumOf(b, loc, {dx, norm.throughMean(dmean)});
    if (Value dinv = gradients[2])
      dx = sumOf(b, loc, {dx, norm.throughInvStd(dinv)});
    operandGradients.push_back(castLike(b, loc, dx, xType));
    operandGradients.push_back(dscale);
    if (ln.getBias())
      operandGradients.push_back(dbias);
    return success();
  }
};
} // namespace

void mlir::gs::registerNormalizationVJPs(MLIRContext *context) {
  BatchNormOp::attachInterface<BatchNormVJP>(*context);
  BatchNormInferenceOp::attachInterface<BatchNormInferenceVJP>(*context);
  LayerNormOp::attachInterface<LayerNormVJP>(*context);
}
