//===- NNOps.cpp - Elementwise, normalization, pooling, losses -*- C++ -*-===//

#include "OpUtils.h"
#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::gs;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult
mlir::gs::inferBroadcastResultType(std::optional<Location> loc,
                                   StringRef opName, Type lhs, Type rhs,
                                   SmallVectorImpl<Type> &inferred) {
  auto lhsType = cast<RankedTensorType>(lhs);
  auto rhsType = cast<RankedTensorType>(rhs);
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(lhsType.getShape(), rhsType.getShape());
  if (!shape)
    return emitOptionalError(loc, "'", opName, "' op operand shapes ",
                             formatShape(lhsType.getShape()), " and ",
                             formatShape(rhsType.getShape()),
                             " are not broadcast-compatible");
  inferred.push_back(RankedTensorType::get(*shape, lhsType.getElementType()));
  return success();
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  SmallVector<Type, 1> broadcast;
  if (failed(inferBroadcastResultType(loc, getOperationName(),
                                      adaptor.getLhs().getType(),
                                      adaptor.getRhs().getType(), broadcast)))
    return failure();
  types.push_back(cast<RankedTensorType>(broadcast.front())
                      .clone(IntegerType::get(context, 1)));
  return success();
}

LogicalResult CompareOp::verify() { return verifyByInference(*this); }

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> condition = shapeOf(adaptor.getCondition());
  ArrayRef<int64_t> x = shapeOf(adaptor.getX()), y = shapeOf(adaptor.getY());
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(x, y);
  if (shape)
    shape = broadcastShapes(condition, *shape);
  if (!shape)
    return inferError<WhereOp>(loc, "operand shapes ", formatShape(condition),
                               ", ", formatShape(x), " and ", formatShape(y),
                               " are not broadcast-compatible");
  types.push_back(RankedTensorType::get(*shape, elementTypeOf(adaptor.getX())));
  return success();
}

LogicalResult WhereOp::verify() { return verifyByInference(*this); }

OpFoldResult AddNOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// Checks a per-channel operand of a batch normalization.
template <typename OpTy>
static LogicalResult checkChannelOperand(std::optional<Location> loc,
                                         StringRef name, Value operand,
                                         ArrayRef<int64_t> input) {
  if (shapeOf(operand) != ArrayRef<int64_t>{input[1]})
    return inferError<OpTy>(loc, "expects ", name, " of shape ", input[1],
                            " (the channel dimension of the input), got ",
                            formatShape(shapeOf(operand)));
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> input = shapeOf(adaptor.getInput());
  if (input.size() < 2)
    return inferError<BatchNormOp>(loc, "expects an input of rank >= 2, got ",
                                   formatShape(input));
  if (failed(checkChannelOperand<BatchNormOp>(loc, "scale", adaptor.getScale(),
                                              input)))
    return failure();
  Type channelType = adaptor.getScale().getType();
  types.append({adaptor.getInput().getType(), channelType, channelType});
  return success();
}

LogicalResult BatchNormOp::verify() { return verifyByInference(*this); }

LogicalResult BatchNormInferenceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> input = shapeOf(adaptor.getInput());
  if (input.size() < 2)
    return inferError<BatchNormInferenceOp>(
        loc, "expects an input of rank >= 2, got ", formatShape(input));
  if (failed(checkChannelOperand<BatchNormInferenceOp>(
          loc, "scale", adaptor.getScale(), input)))
    return failure();
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult BatchNormInferenceOp::verify() {
  return verifyByInference(*this);
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> input = shapeOf(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<LayerNormOp>(loc, "axis", axis, input.size())))
    return failure();
  ArrayRef<int64_t> normalized = input.drop_front(axis);
  if (shapeOf(adaptor.getScale()) != normalized)
    return inferError<LayerNormOp>(loc, "expects scale of shape ",
                                   formatShape(normalized),
                                   " (the normalized dimensions), got ",
                                   formatShape(shapeOf(adaptor.getScale())));
  if (Value bias = adaptor.getBias(); bias && shapeOf(bias) != normalized)
    return inferError<LayerNormOp>(loc, "expects bias of shape ",
                                   formatShape(normalized), ", got ",
                                   formatShape(shapeOf(bias)));
  SmallVector<int64_t> statsShape(input);
  std::fill(statsShape.begin() + axis, statsShape.end(), 1);
  // FP32 statistics, FP64 for FP64 data.
  Type element = elementTypeOf(adaptor.getInput());
  auto statsType = RankedTensorType::get(
      statsShape, element.isF64() ? element : Float32Type::get(context));
  types.append({adaptor.getInput().getType(), statsType, statsType});
  return success();
}

LogicalResult LayerNormOp::verify() { return verifyByInference(*this); }

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Output shape of a pooling op over the spatial dimensions of `input`.
template <typename OpTy>
static FailureOr<SmallVector<int64_t>>
inferPoolShape(std::optional<Location> loc, ArrayRef<int64_t> input,
               ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
               ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
               bool ceilMode) {
  if (input.size() < 3)
    return inferError<OpTy>(loc,
                            "expects an input of rank >= 3 (N x C x "
                            "spatial dims), got ",
                            formatShape(input));
  int64_t spatialRank = input.size() - 2;
  if (static_cast<int64_t>(kernel.size()) != spatialRank)
    return inferError<OpTy>(loc, "expects ", spatialRank,
                            " 'kernel_shape' values, got ", kernel.size());
  if (llvm::any_of(kernel, [](int64_t k) { return k < 1; }))
    return inferError<OpTy>(loc, "expects kernel_shape values >= 1");
  FailureOr<WindowGeometry> g =
      resolveGeometry<OpTy>(loc, spatialRank, strides, pads, dilations);
  if (failed(g))
    return failure();
  SmallVector<int64_t> shape(input.take_front(2));
  for (int64_t i = 0; i < spatialRank; ++i) {
    int64_t size = windowOutputSize(input[i + 2], kernel[i], g->strides[i],
                                    g->padsBegin[i], g->padsEnd[i],
                                    g->dilations[i], ceilMode);
    if (size < 1)
      return inferError<OpTy>(loc,
                              "window exceeds the padded input in "
                              "spatial dimension ",
                              i);
    shape.push_back(size);
  }
  return shape;
}

WindowGeometry MaxPoolOp::getGeometry() {
  return makeGeometry(getKernelShape().size(), orEmpty(getStrides()),
                      orEmpty(getPads()), orEmpty(getDilations()));
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  FailureOr<SmallVector<int64_t>> shape = inferPoolShape<MaxPoolOp>(
      loc, shapeOf(adaptor.getInput()), adaptor.getKernelShape(),
      orEmpty(adaptor.getStrides()), orEmpty(adaptor.getPads()),
      orEmpty(adaptor.getDilations()), adaptor.getCeilMode());
  if (failed(shape))
    return failure();
  types.push_back(
      RankedTensorType::get(*shape, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult MaxPoolOp::verify() { return verifyByInference(*this); }

WindowGeometry AvgPoolOp::getGeometry() {
  return makeGeometry(getKernelShape().size(), orEmpty(getStrides()),
                      orEmpty(getPads()), {});
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  FailureOr<SmallVector<int64_t>> shape = inferPoolShape<AvgPoolOp>(
      loc, shapeOf(adaptor.getInput()), adaptor.getKernelShape(),
      orEmpty(adaptor.getStrides()), orEmpty(adaptor.getPads()), {},
      adaptor.getCeilMode());
  if (failed(shape))
    return failure();
  types.push_back(
      RankedTensorType::get(*shape, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult AvgPoolOp::verify() { return verifyByInference(*this); }

/// Checks that `grad` has the shape the pooling of `input` produces.
template <typename OpTy>
static LogicalResult verifyPoolGrad(OpTy op, ArrayRef<int64_t> input, Type grad,
                                    ArrayRef<int64_t> dilations) {
  FailureOr<SmallVector<int64_t>> shape = inferPoolShape<OpTy>(
      op.getLoc(), input, op.getKernelShape(), orEmpty(op.getStrides()),
      orEmpty(op.getPads()), dilations, op.getCeilMode());
  if (failed(shape))
    return failure();
  if (shapeOf(grad) != ArrayRef<int64_t>(*shape))
    return op.emitOpError("expects a gradient of the pooling's result shape ")
           << formatShape(*shape) << ", got " << formatShape(shapeOf(grad));
  if (elementTypeOf(op.getGrad()) != elementTypeOf(op.getResult()))
    return op.emitOpError("expects the gradient and the result to have one "
                          "element type");
  return success();
}

WindowGeometry MaxPoolGradOp::getGeometry() {
  return makeGeometry(getKernelShape().size(), orEmpty(getStrides()),
                      orEmpty(getPads()), orEmpty(getDilations()));
}

LogicalResult MaxPoolGradOp::verify() {
  return verifyPoolGrad(*this, shapeOf(getInput()), getGrad().getType(),
                        orEmpty(getDilations()));
}

WindowGeometry AvgPoolGradOp::getGeometry() {
  return makeGeometry(getKernelShape().size(), orEmpty(getStrides()),
                      orEmpty(getPads()), {});
}

LogicalResult AvgPoolGradOp::verify() {
  return verifyPoolGrad(*this, shapeOf(getResult()), getGrad().getType(), {});
}

LogicalResult GlobalAvgPoolOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> input = shapeOf(adaptor.getInput());
  if (input.size() < 3)
    return inferError<GlobalAvgPoolOp>(
        loc, "expects an input of rank >= 3 (N x C x spatial dims), got ",
        formatShape(input));
  SmallVector<int64_t> shape(input.size(), 1);
  shape[0] = input[0];
  shape[1] = input[1];
  types.push_back(
      RankedTensorType::get(shape, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult GlobalAvgPoolOp::verify() { return verifyByInference(*this); }

//===----------------------------------------------------------------------===//
// Softmax and losses
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return checkAxis<SoftmaxOp>(getLoc(), "axis", getAxis(),
                              getInput().getType().getRank());
}

LogicalResult LogSoftmaxOp::verify() {
  return checkAxis<LogSoftmaxOp>(getLoc(), "axis", getAxis(),
                                 getInput().getType().getRank());
}

/// Shape of the per-element loss of a classification loss and checks of its
/// operands: scores `N x C x d...`, labels `N x d...`, weights `C`.
template <typename OpTy>
static FailureOr<SmallVector<int64_t>>
inferClassificationLoss(std::optional<Location> loc, Value scores, Value labels,
                        Value weights) {
  ArrayRef<int64_t> s = shapeOf(scores);
  if (s.size() < 2)
    return inferError<OpTy>(loc,
                            "expects scores of rank >= 2 (N x C x ...), "
                            "got ",
                            formatShape(s));
  SmallVector<int64_t> perElement(s);
  perElement.erase(perElement.begin() + 1);
  if (shapeOf(labels) != ArrayRef<int64_t>(perElement))
    return inferError<OpTy>(
        loc, "expects labels of shape ", formatShape(perElement),
        " for scores ", formatShape(s), ", got ", formatShape(shapeOf(labels)));
  if (weights) {
    if (shapeOf(weights) != ArrayRef<int64_t>{s[1]})
      return inferError<OpTy>(loc, "expects weights of shape ", s[1],
                              " (one per class), got ",
                              formatShape(shapeOf(weights)));
    if (elementTypeOf(weights) != elementTypeOf(scores))
      return inferError<OpTy>(loc,
                              "expects weights of the scores' element type");
  }
  return perElement;
}

static Type lossType(ArrayRef<int64_t> perElement, Reduction reduction,
                     Type elementType) {
  if (reduction == Reduction::none)
    return RankedTensorType::get(perElement, elementType);
  return RankedTensorType::get({}, elementType);
}

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  FailureOr<SmallVector<int64_t>> perElement =
      inferClassificationLoss<SoftmaxCrossEntropyOp>(
          loc, adaptor.getScores(), adaptor.getLabels(), adaptor.getWeights());
  if (failed(perElement))
    return failure();
  types.push_back(lossType(*perElement, adaptor.getReduction(),
                           elementTypeOf(adaptor.getScores())));
  types.push_back(adaptor.getScores().getType());
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::verify() {
  return verifyByInference(*this);
}

LogicalResult NLLLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  FailureOr<SmallVector<int64_t>> perElement =
      inferClassificationLoss<NLLLossOp>(
          loc, adaptor.getInput(), adaptor.getTarget(), adaptor.getWeights());
  if (failed(perElement))
    return failure();
  types.push_back(lossType(*perElement, adaptor.getReduction(),
                           elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult NLLLossOp::verify() { return verifyByInference(*this); }

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError("expects the result shape to equal the input shape ")
           << formatShape(getInput().getType().getShape()) << ", got "
           << formatShape(getType().getShape());
  return success();
}

/// True if every value of `from` is exactly representable in `to`.
static bool isLosslessConversion(Type from, Type to) {
  if (from == to)
    return true;
  if (auto fromFloat = dyn_cast<FloatType>(from)) {
    auto toFloat = dyn_cast<FloatType>(to);
    return toFloat &&
           toFloat.getFPMantissaWidth() >= fromFloat.getFPMantissaWidth() &&
           toFloat.getWidth() > fromFloat.getWidth();
  }
  auto fromInt = dyn_cast<IntegerType>(from);
  if (!fromInt)
    return false;
  // Signless and signed integers are signed in gs; i1 and ui8 are unsigned.
  bool fromUnsigned = fromInt.isUnsigned() || fromInt.getWidth() == 1;
  unsigned valueBits = fromInt.getWidth() - (fromUnsigned ? 0 : 1);
  if (auto toFloat = dyn_cast<FloatType>(to))
    return static_cast<int>(valueBits) <=
           static_cast<int>(toFloat.getFPMantissaWidth());
  auto toInt = dyn_cast<IntegerType>(to);
  if (!toInt || toInt.getWidth() == 1)
    return false;
  if (toInt.isUnsigned())
    return fromUnsigned && toInt.getWidth() >= fromInt.getWidth();
  return toInt.getWidth() > valueBits;
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // cast(cast(x : A -> B) -> A) is x when A -> B loses nothing.
  if (auto inner = getInput().getDefiningOp<CastOp>()) {
    Type original = inner.getInput().getType();
    if (original == getType() &&
        isLosslessConversion(getElementTypeOrSelf(original),
                             getElementTypeOrSelf(inner.getType())))
      return inner.getInput();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// DropoutOp
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  types.push_back(inputType);
  types.push_back(inputType.clone(IntegerType::get(context, 1)));
  return success();
}

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (!(ratio >= 0.0 && ratio < 1.0))
    return emitOpError("expects a ratio in [0, 1), got ") << ratio;
  return success();
}

namespace {
/// Dropout that keeps everything (inference mode or ratio 0) is the
/// identity with an all-true mask.
struct DropoutIsIdentity : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getTraining() && !op.getRatio().isZero())
      return failure();
    auto maskType = cast<RankedTensorType>(op.getMask().getType());
    Value mask = ConstantOp::create(rewriter, op.getLoc(),
                                    DenseElementsAttr::get(maskType, true));
    rewriter.replaceOp(op, {op.getInput(), mask});
    return success();
  }
};
} // namespace

void DropoutOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<DropoutIsIdentity>(context);
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }
