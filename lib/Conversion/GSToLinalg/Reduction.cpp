//===- Reduction.cpp - Reductions, softmax and losses ----------*- C++ -*-===//
//
// Sums and means accumulate in f32 for f16 inputs. Softmax subtracts the
// maximum first. The classification losses gather the target class's
// log-probability per element and reduce as ONNX's `reduction` says.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;

static Value addValues(OpBuilder &b, Location l, Value x, Value acc) {
  return isa<FloatType>(x.getType())
             ? arith::AddFOp::create(b, l, x, acc).getResult()
             : arith::AddIOp::create(b, l, x, acc).getResult();
}

static Value maxValues(OpBuilder &b, Location l, Value x, Value acc) {
  return isa<FloatType>(x.getType())
             ? arith::MaximumFOp::create(b, l, x, acc).getResult()
             : arith::MaxSIOp::create(b, l, x, acc).getResult();
}

static Value maxUnsignedValues(OpBuilder &b, Location l, Value x, Value acc) {
  return arith::MaxUIOp::create(b, l, x, acc);
}

/// Each element of `value` divided by `divisor`, then converted to
/// `elementType` (a gs element type: unsigned integers divide unsigned).
static Value divideBy(OpBuilder &b, Location loc, Value value, Value divisor,
                      Type elementType) {
  bool isUnsigned = isUnsignedElement(elementType);
  RankedTensorType type = tensorTypeOf(value);
  bool scalarDivisor = !isa<RankedTensorType>(divisor.getType());
  SmallVector<Value> operands = {value};
  if (!scalarDivisor)
    operands.push_back(divisor);
  return elementwise(
      b, loc, signlessType(type.clone(elementType)), operands,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value d = scalarDivisor ? divisor : a[1];
        Value q = isa<FloatType>(a[0].getType())
                      ? arith::DivFOp::create(nb, l, a[0], d).getResult()
                  : isUnsigned
                      ? arith::DivUIOp::create(nb, l, a[0], d).getResult()
                      : arith::DivSIOp::create(nb, l, a[0], d).getResult();
        return convertScalar(nb, l, q, signlessType(elementType));
      });
}

namespace {
template <typename OpTy> struct ReduceLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = signlessType(op.getType());
    Type element = op.getType().getElementType();
    bool isMax = std::is_same_v<OpTy, ReduceMaxOp>;
    // Integers accumulate in their own (signless) type.
    Type acc = signlessType(isMax ? element : sumType(element));
    Value init = isMax ? lowestValue(rewriter, loc, element)
                       : scalarConstant(rewriter, loc, acc, 0.0);
    Value reduced =
        reduce(rewriter, loc, adaptor.getInput(), op.getAxes(), init,
               !isMax                       ? addValues
               : isUnsignedElement(element) ? maxUnsignedValues
                                            : maxValues);
    if (std::is_same_v<OpTy, ReduceMeanOp>) {
      int64_t count = 1;
      for (int64_t axis : op.getAxes())
        count *= tensorTypeOf(adaptor.getInput()).getDimSize(axis);
      reduced = divideBy(rewriter, loc, reduced,
                         scalarConstant(rewriter, loc, acc, count), element);
    } else {
      reduced = castTensor(rewriter, loc, reduced, element);
    }
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, reduced, type));
    return success();
  }
};
} // namespace

/// Softmax or log-softmax of `x` along `axis`, in f32 (f64 for f64).
static Value softmax(OpBuilder &b, Location loc, Value x, int64_t axis,
                     bool logarithm) {
  RankedTensorType type = tensorTypeOf(x);
  Type acc = statisticsType(type.getElementType());
  SmallVector<int64_t> keptShape(type.getShape());
  keptShape[axis] = 1;
  auto keptType = RankedTensorType::get(keptShape, acc);
  Value max = reduce(b, loc, x, axis, lowestValue(b, loc, acc), maxValues);
  max = reshapeTo(b, loc, max, keptType);
  Value shifted =
      elementwise(b, loc, type.clone(acc), ValueRange{x, max},
                  [&](OpBuilder &nb, Location l, ValueRange a) {
                    return arith::SubFOp::create(
                               nb, l, convertScalar(nb, l, a[0], acc), a[1])
                        .getResult();
                  });
  Value exps =
      elementwise(b, loc, type.clone(acc), shifted,
                  [](OpBuilder &nb, Location l, ValueRange a) {
                    return math::ExpOp::create(nb, l, a[0]).getResult();
                  });
  Value zero = scalarConstant(b, loc, acc, 0.0);
  Value sums =
      reshapeTo(b, loc, reduce(b, loc, exps, axis, zero, addValues), keptType);
  if (logarithm)
    return elementwise(b, loc, type.clone(acc), ValueRange{shifted, sums},
                       [](OpBuilder &nb, Location l, ValueRange a) {
                         return arith::SubFOp::create(
                                    nb, l, a[0],
                                    math::LogOp::create(nb, l, a[1]))
                             .getResult();
                       });
  return elementwise(
      b, loc, type.clone(acc), ValueRange{exps, sums},
      [](OpBuilder &nb, Location l, ValueRange a) {
        return arith::DivFOp::create(nb, l, a[0], a[1]).getResult();
      });
}

/// ONNX's negative log-likelihood over log-probabilities `logp` (f32 or f64)
/// (N x C x d...), targets (N x d...) and optional class weights.
static Value nllLoss(OpBuilder &b, Location loc, Value logp, Value target,
                     Value weights, Reduction reduction,
                     std::optional<int64_t> ignoreIndex,
                     RankedTensorType resultType) {
  RankedTensorType targetType = tensorTypeOf(target);
  int64_t rank = targetType.getRank();
  int64_t classes = tensorTypeOf(logp).getDimSize(1);
  Type acc = tensorTypeOf(logp).getElementType();
  auto perElement = targetType.clone(acc);
  SmallVector<AffineMap> maps(3, b.getMultiDimIdentityMap(rank));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{perElement, perElement}, target,
      ValueRange{emptyTensor(b, loc, perElement),
                 emptyTensor(b, loc, perElement)},
      maps, parallelIterators(rank),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Type idx = nb.getIndexType();
        Value t = arith::IndexCastOp::create(nb, l, idx, args[0]);
        Value zero = scalarConstant(nb, l, acc, 0.0);
        // Targets outside [0, C) read class 0 (and ignored ones weigh 0).
        Value notBelow = arith::CmpIOp::create(
            nb, l, arith::CmpIPredicate::sge, t, scalarConstant(nb, l, idx, 0));
        Value below =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, t,
                                  scalarConstant(nb, l, idx, classes));
        Value inRange = arith::AndIOp::create(nb, l, notBelow, below);
        Value cls = arith::SelectOp::create(nb, l, inRange, t,
                                            scalarConstant(nb, l, idx, 0));
        SmallVector<Value> indices = {linalg::IndexOp::create(nb, l, 0), cls};
        for (int64_t d = 1; d < rank; ++d)
          indices.push_back(linalg::IndexOp::create(nb, l, d));
        Value lp = tensor::ExtractOp::create(nb, l, logp, indices);
        Value w = weights ? convertScalar(nb, l,
                                          tensor::ExtractOp::create(
                                              nb, l, weights, ValueRange{cls}),
                                          acc)
                          : scalarConstant(nb, l, acc, 1.0);
        Value loss =
            arith::NegFOp::create(nb, l, arith::MulFOp::create(nb, l, w, lp));
        if (ignoreIndex) {
          // Ignored targets contribute nothing, even where lp is -inf.
          Value ignored = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::eq, args[0],
              scalarConstant(nb, l, args[0].getType(), *ignoreIndex));
          w = arith::SelectOp::create(nb, l, ignored, zero, w);
          loss = arith::SelectOp::create(nb, l, ignored, zero, loss);
        }
        linalg::YieldOp::create(nb, l, ValueRange{loss, w});
      });
  Value losses = generic.getResult(0), weightSums = generic.getResult(1);
  Type element = resultType.getElementType();
  if (reduction == Reduction::none)
    return castTensor(b, loc, losses, element);
  auto all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  Value zero = scalarConstant(b, loc, acc, 0.0);
  Value total = reduce(b, loc, losses, all, zero, addValues);
  if (reduction == Reduction::sum)
    return castTensor(b, loc, total, element);
  Value weightTotal = reduce(b, loc, weightSums, all, zero, addValues);
  return divideBy(b, loc, total, weightTotal, element);
}

namespace {
template <typename OpTy, bool logarithm>
struct SoftmaxLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value y = softmax(rewriter, op.getLoc(), adaptor.getInput(), op.getAxis(),
                      logarithm);
    rewriter.replaceOp(op, castTensor(rewriter, op.getLoc(), y,
                                      op.getType().getElementType()));
    return success();
  }
};

struct SoftmaxCrossEntropyLowering
    : OpConversionPattern<SoftmaxCrossEntropyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxCrossEntropyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logp = softmax(rewriter, loc, adaptor.getScores(), 1, true);
    Value loss =
        nllLoss(rewriter, loc, logp, adaptor.getLabels(), adaptor.getWeights(),
                op.getReduction(), op.getIgnoreIndex(),
                cast<RankedTensorType>(op.getLoss().getType()));
    Value logProb = castTensor(
        rewriter, loc, logp,
        cast<RankedTensorType>(op.getLogProb().getType()).getElementType());
    rewriter.replaceOp(op, {loss, logProb});
    return success();
  }
};

struct NLLLossLowering : OpConversionPattern<NLLLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(NLLLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logp = castTensor(
        rewriter, loc, adaptor.getInput(),
        statisticsType(tensorTypeOf(adaptor.getInput()).getElementType()));
    rewriter.replaceOp(op, nllLoss(rewriter, loc, logp, adaptor.getTarget(),
                                   adaptor.getWeights(), op.getReduction(),
                                   op.getIgnoreIndex(), op.getType()));
    return success();
  }
};
} // namespace

void to_linalg::populateReductionPatterns(TypeConverter &converter,
                                          RewritePatternSet &patterns) {
  patterns.add<ReduceLowering<ReduceSumOp>, ReduceLowering<ReduceMeanOp>,
               ReduceLowering<ReduceMaxOp>, SoftmaxLowering<SoftmaxOp, false>,
               SoftmaxLowering<LogSoftmaxOp, true>, SoftmaxCrossEntropyLowering,
               NLLLossLowering>(converter, patterns.getContext());
}
