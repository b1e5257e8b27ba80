//===- LossVJP.cpp - Gradients of the classification losses -----*- C++ -*-===//
//
// For labels t, class weights w and the loss reduction, both losses have
// the per-target coefficient c = g * w[t] * (t != ignore_index), divided by
// the sum of the counted weights for `mean`. Then
//   softmax cross entropy:  d scores = (softmax(scores) - onehot(t)) * c
//   NLL:                    d input  = -onehot(t) * c
// with c broadcast along the class axis (1).
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
  Value oneHot;      // N x C x d..., the input's element type.
  Value coefficient; // N x 1 x d..., broadcasting along the class axis.
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

  Value coefficient;
  if (reduction == Reduction::none) {
    coefficient = weight ? MulOp::create(b, loc, g, weight).getResult() : g;
  } else {
    Value total = weight ? weight : splat(b, loc, perTarget, 1.0);
    coefficient = MulOp::create(b, loc, total, g);
    if (reduction == Reduction::mean) {
      // Sum of the counted weights (an empty axes list would reduce
      // nothing), or the number of targets.
      Value denominator =
          weight
              ? ReduceSumOp::create(
                    b, loc, weight,
                    llvm::to_vector(llvm::seq<int64_t>(0, labelType.getRank())))
                    .getResult()
              : scalar(b, loc, element,
                       static_cast<double>(labelType.getNumElements()));
      coefficient = DivOp::create(b, loc, coefficient, denominator);
    }
  }
  coefficient = UnsqueezeOp::create(b, loc, coefficient, ArrayRef<int64_t>{1});

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
  return {oneHot, coefficient};
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
    if (Value g = gradients[0]) {
      TargetTerms targets = buildTargetTerms(
          b, loc, loss.getScores(), loss.getLabels(), loss.getWeights(),
          loss.getReduction(), loss.getIgnoreIndex(), g);
      terms.push_back(
          MulOp::create(b, loc, SubOp::create(b, loc, softmax, targets.oneHot),
                        targets.coefficient));
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
      operandGradients.push_back(Value());
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
    if (loss.getWeights())
      operandGradients.push_back(Value());
    return success();
  }
};
} // namespace

void mlir::gs::registerLossVJPs(MLIRContext *context) {
  SoftmaxCrossEntropyOp::attachInterface<SoftmaxCrossEntropyVJP>(*context);
  NLLLossOp::attachInterface<NLLLossVJP>(*context);
}
