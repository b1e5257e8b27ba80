//===- LossVJP.cpp - Gradients of the classification losses -----*- C++ -*-===//
//
// For labels t, class weights w and the loss reduction, both losses have
// the per-target coefficient c = g * w[t] * (t != ignore_index), divided by
// the sum of the counted weights for `mean`. Then
//   softmax cross entropy:  d scores = (softmax(scores) - onehot(t)) * c
//   NLL:                    d input  = -onehot(t) * c
// with c broadcast along the class axis (1). The class weights get
//   d w[k] = sum over targets of class k of  c' * (loss_i - L)
// where loss_i = -logp[i, t_i], c' is c without the factor w[t] and L is 0
// or, for `mean`, the loss itself.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

namespace {
/// What both losses share: the one-hot targets and the coefficients.
struct TargetTerms {
  Value hit;         // N x C x d..., i1: the one-hot mask.
  Value oneHot;      // N x C x d..., the input's element type.
  Value coefficient; // N x 1 x d..., broadcasting along the class axis.
  Value unweighted;  // The coefficient without the factor w[t].
};

TargetTerms buildTargetTerms(OpBuilder &b, Location loc, Value input,
                             Value labels, Value weights, Reduction reduction,
                             std::optional<int64_t> ignoreIndex, Value g) {
  RankedTensorType inputType = typeOf(input), labelType = typeOf(labels);
  Type element = inputType.getElementType();
  RankedTensorType perTarget = labelType.clone(element);

  // Targets that count, and labels safe to index with.
  Value counted, safeLabels = labels;
  if (ignoreIndex) {
    Value ignored = scalar(b, loc, labelType.getElementType(),
                           static_cast<double>(*ignoreIndex));
    counted = CompareOp::create(b, loc, ComparePredicate::ne, labels, ignored);
    safeLabels =
        WhereOp::create(b, loc, counted, labels,
                        scalar(b, loc, labelType.getElementType(), 0.0));
  }
  // The weight of each target: w[t], 0 where ignored; null means 1.
  Value weight;
  if (weights)
    weight = GatherOp::create(b, loc, weights, safeLabels, /*axis=*/0);
  if (counted)
    weight = selectOrZero(b, loc, counted,
                          weight ? weight : splat(b, loc, perTarget, 1.0));

  // g * x, over the sum of the counted weights for `mean` (an empty axes
  // list would reduce nothing), or over the number of targets.
  Value denominator;
  if (reduction == Reduction::mean)
    denominator =
        weight
            ? ReduceSumOp::create(
                  b, loc, weight,
                  llvm::to_vector(llvm::seq<int64_t>(0, labelType.getRank())))
                  .getResult()
            : scalar(b, loc, element,
                     static_cast<double>(labelType.getNumElements()));
  auto coefficientOf = [&](Value x) {
    Value scaled = x ? MulOp::create(b, loc, x, g).getResult() : g;
    if (reduction != Reduction::none && !x)
      scaled = MulOp::create(b, loc, splat(b, loc, perTarget, 1.0), g);
    if (denominator)
      scaled = DivOp::create(b, loc, scaled, denominator);
    return UnsqueezeOp::create(b, loc, scaled, ArrayRef<int64_t>{1})
        .getResult();
  };
  Value coefficient = coefficientOf(weight);
  Value unweighted = coefficientOf(
      counted ? CastOp::create(b, loc, perTarget, counted).getResult()
              : Value());

  // onehot[n, c, d...] = (t[n, d...] == c).
  int64_t classes = inputType.getDimSize(1);
  SmallVector<int64_t> iotaShape(inputType.getRank(), 1);
  iotaShape[1] = classes;
  Type labelElement = labelType.getElementType();
  SmallVector<Attribute> indices;
  for (int64_t c = 0; c < classes; ++c)
    indices.push_back(b.getIntegerAttr(labelElement, c));
  Value iota = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get(iotaShape, labelElement),
                             indices));
  Value column = UnsqueezeOp::create(b, loc, safeLabels, ArrayRef<int64_t>{1});
  Value hit = CompareOp::create(b, loc, ComparePredicate::eq, column, iota);
  Value oneHot = CastOp::create(b, loc, typeOf(hit).clone(element), hit);
  return {hit, oneHot, coefficient, unweighted};
}

/// The gradient of the class weights: c' * (loss_i - L) summed per class,
/// with loss_i = -logp[i, t_i] and L the loss for `mean` (0 otherwise).
Value classWeightGradient(OpBuilder &b, Location loc, const TargetTerms &t,
                          Value logProb, Value loss, Reduction reduction,
                          Value weights) {
  Value picked =
      ReduceSumOp::create(b, loc, MulOp::create(b, loc, t.oneHot, logProb),
                          ArrayRef<int64_t>{1}, /*keepdims=*/true);
  Value perTarget = NegOp::create(b, loc, picked);
  if (reduction == Reduction::mean)
    perTarget = SubOp::create(b, loc, perTarget, loss);
  Value contribution = MulOp::create(
      b, loc, t.oneHot, MulOp::create(b, loc, t.unweighted, perTarget));
  Value summed = ReduceSumOp::create(
      b, loc, contribution, nonChannelAxes(typeOf(contribution).getRank()),
      /*keepdims=*/false);
  return castLike(b, loc, summed, typeOf(weights));
}

struct SoftmaxCrossEntropyVJP
    : DifferentiableOpInterface::ExternalModel<SoftmaxCrossEntropyVJP,
                                               SoftmaxCrossEntropyOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto loss = cast<SoftmaxCrossEntropyOp>(op);
    Location loc = op->getLoc();
    Value logProb = loss.getLogProb();
    Value softmax = ExpOp::create(b, loc, logProb);
    SmallVector<Value> terms;
    Value weightGradient;
    if (Value g = gradients[0]) {
      TargetTerms targets = buildTargetTerms(
          b, loc, loss.getScores(), loss.getLabels(), loss.getWeights(),
          loss.getReduction(), loss.getIgnoreIndex(), g);
      terms.push_back(
          MulOp::create(b, loc, SubOp::create(b, loc, softmax, targets.oneHot),
                        targets.coefficient));
      if (Value weights = loss.getWeights())
        weightGradient =
            classWeightGradient(b, loc, targets, logProb, loss.getLoss(),
                                loss.getReduction(), weights);
    }
    if (Value g = gradients[1]) {
      // Through log_softmax: g - softmax * sum(g) along the classes.
      Value sum = ReduceSumOp::create(b, loc, g, ArrayRef<int64_t>{1},
                                      /*keepdims=*/true);
      terms.push_back(
          SubOp::create(b, loc, g, MulOp::create(b, loc, softmax, sum)));
    }
    operandGradients.push_back(
        terms.size() == 1 ? terms[0] : AddNOp::create(b, loc, terms));
    operandGradients.push_back(Value()); // labels
    if (loss.getWeights())
      operandGradients.push_back(weightGradient);
    return success();
  }
};

struct NLLLossVJP
    : DifferentiableOpInterface::ExternalModel<NLLLossVJP, NLLLossOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto loss = cast<NLLLossOp>(op);
    Location loc = op->getLoc();
    TargetTerms targets = buildTargetTerms(
        b, loc, loss.getInput(), loss.getTarget(), loss.getWeights(),
        loss.getReduction(), loss.getIgnoreIndex(), gradients[0]);
    operandGradients.push_back(NegOp::create(
        b, loc, MulOp::create(b, loc, targets.oneHot, targets.coefficient)));
    operandGradients.push_back(Value()); // target
    if (Value weights = loss.getWeights())
      operandGradients.push_back(
          classWeightGradient(b, loc, targets, loss.getInput(), loss.getLoss(),
                              loss.getReduction(), weights));
    return success();
  }
};
} // namespace

void mlir::gs::registerLossVJPs(MLIRContext *context) {
  SoftmaxCrossEntropyOp::attachInterface<SoftmaxCrossEntropyVJP>(*context);
  NLLLossOp::attachInterface<NLLLossVJP>(*context);
}
