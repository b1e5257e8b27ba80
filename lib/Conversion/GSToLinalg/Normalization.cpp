//===- Normalization.cpp - Batch and layer normalization -------*- C++ -*-===//
//
// Statistics are computed in f32 (two passes: the mean, then the mean of
// squared deviations, which is the biased variance ONNX specifies).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;

namespace {
/// Mean and biased variance of `x` over `axes`, in `accType`, shaped with
/// the reduced dimensions kept as size 1 so that they broadcast against x.
struct Moments {
  Value mean, variance;
};
} // namespace

static Moments moments(OpBuilder &b, Location loc, Value x,
                       ArrayRef<int64_t> axes, Type accType) {
  RankedTensorType type = tensorTypeOf(x);
  Type wide = sumType(accType);
  int64_t count = 1;
  SmallVector<int64_t> keptShape(type.getShape());
  for (int64_t axis : axes) {
    count *= type.getDimSize(axis);
    keptShape[axis] = 1;
  }
  auto keptType = RankedTensorType::get(keptShape, wide);
  auto add = [](OpBuilder &nb, Location l, Value x, Value acc) -> Value {
    return arith::AddFOp::create(nb, l, x, acc);
  };
  auto divideByCount = [&](Value sum) {
    Value divisor = scalarConstant(b, loc, wide, static_cast<double>(count));
    Value mean = elementwise(
        b, loc, tensorTypeOf(sum), sum,
        [&](OpBuilder &nb, Location l, ValueRange a) {
          return arith::DivFOp::create(nb, l, a[0], divisor).getResult();
        });
    return reshapeTo(b, loc, mean, keptType);
  };
  Value zero = scalarConstant(b, loc, wide, 0.0);
  Value mean = divideByCount(reduce(b, loc, x, axes, zero, add));
  Value squares =
      elementwise(b, loc, type.clone(wide), ValueRange{x, mean},
                  [&](OpBuilder &nb, Location l, ValueRange a) {
                    Value d = arith::SubFOp::create(
                        nb, l, convertScalar(nb, l, a[0], wide), a[1]);
                    return arith::MulFOp::create(nb, l, d, d).getResult();
                  });
  Value variance = divideByCount(reduce(b, loc, squares, axes, zero, add));
  return {castTensor(b, loc, mean, accType),
          castTensor(b, loc, variance, accType)};
}

/// 1 / sqrt(variance + epsilon), elementwise.
static Value inverseStdDev(OpBuilder &b, Location loc, Value variance,
                           double epsilon) {
  RankedTensorType type = tensorTypeOf(variance);
  Value eps = scalarConstant(b, loc, type.getElementType(), epsilon);
  return elementwise(
      b, loc, type, variance, [&](OpBuilder &nb, Location l, ValueRange a) {
        return math::RsqrtOp::create(nb, l,
                                     arith::AddFOp::create(nb, l, a[0], eps))
            .getResult();
      });
}

/// (x - mean) * invStd * scale + bias, in f32, rounded to `type`.
static Value normalize(OpBuilder &b, Location loc, RankedTensorType type,
                       Value x, Value mean, Value invStd, Value scale,
                       Value bias) {
  SmallVector<Value> operands = {x, mean, invStd, scale};
  if (bias)
    operands.push_back(bias);
  Type acc = tensorTypeOf(mean).getElementType();
  return elementwise(
      b, loc, type, operands, [&](OpBuilder &nb, Location l, ValueRange a) {
        auto f = [&](Value v) { return convertScalar(nb, l, v, acc); };
        Value y = arith::MulFOp::create(
            nb, l, arith::SubFOp::create(nb, l, f(a[0]), a[1]), a[2]);
        y = arith::MulFOp::create(nb, l, y, f(a[3]));
        if (bias)
          y = arith::AddFOp::create(nb, l, y, f(a[4]));
        return convertScalar(nb, l, y, type.getElementType());
      });
}

/// A per-channel vector (C) shaped to broadcast along dimension 1 of a
/// tensor of rank `rank`.
static Value alongChannels(OpBuilder &b, Location loc, Value v, int64_t rank) {
  RankedTensorType type = tensorTypeOf(v);
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = type.getDimSize(0);
  return reshapeTo(b, loc, v, type.clone(shape));
}

/// All dimensions but the channel dimension 1.
static SmallVector<int64_t> nonChannelAxes(int64_t rank) {
  SmallVector<int64_t> axes = {0};
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

namespace {
struct BatchNormLowering : OpConversionPattern<BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType type = tensorTypeOf(x);
    int64_t rank = type.getRank();
    Type acc = statisticsType(type.getElementType());
    Moments m = moments(rewriter, loc, x, nonChannelAxes(rank), acc);
    Value invStd = inverseStdDev(rewriter, loc, m.variance,
                                 op.getEpsilon().convertToDouble());
    Value scale = alongChannels(rewriter, loc, adaptor.getScale(), rank);
    Value bias = alongChannels(rewriter, loc, adaptor.getBias(), rank);
    Value y = normalize(rewriter, loc, type, x, m.mean, invStd, scale, bias);
    auto channelType = cast<RankedTensorType>(op.getBatchMean().getType());
    auto perChannel = [&](Value v) {
      Value flat = reshapeTo(rewriter, loc, v, channelType.clone(acc));
      return castTensor(rewriter, loc, flat, channelType.getElementType());
    };
    rewriter.replaceOp(op, {y, perChannel(m.mean), perChannel(m.variance)});
    return success();
  }
};

struct BatchNormInferenceLowering : OpConversionPattern<BatchNormInferenceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormInferenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    Type acc = statisticsType(type.getElementType());
    auto channel = [&](Value v) {
      return alongChannels(rewriter, loc, castTensor(rewriter, loc, v, acc),
                           rank);
    };
    Value invStd = inverseStdDev(rewriter, loc, channel(adaptor.getVariance()),
                                 op.getEpsilon().convertToDouble());
    Value mean = channel(adaptor.getMean());
    Value scale = channel(adaptor.getScale());
    Value bias = channel(adaptor.getBias());
    rewriter.replaceOp(op, normalize(rewriter, loc, type, adaptor.getInput(),
                                     mean, invStd, scale, bias));
    return success();
  }
};

struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType type = tensorTypeOf(x);
    SmallVector<int64_t> axes;
    for (int64_t d = op.getAxis(); d < type.getRank(); ++d)
      axes.push_back(d);
    Type acc = statisticsType(type.getElementType());
    Moments m = moments(rewriter, loc, x, axes, acc);
    Value invStd = inverseStdDev(rewriter, loc, m.variance,
                                 op.getEpsilon().convertToDouble());
    Value y = normalize(rewriter, loc, type, x, m.mean, invStd,
                        adaptor.getScale(), adaptor.getBias());
    rewriter.replaceOp(op, {y, m.mean, invStd});
    return success();
  }
};
} // namespace

void to_linalg::populateNormalizationPatterns(TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns
      .add<BatchNormLowering, BatchNormInferenceLowering, LayerNormLowering>(
          converter, patterns.getContext());
}
