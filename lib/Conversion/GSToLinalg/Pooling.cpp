//===- Pooling.cpp - Max, average and global average pooling ---*- C++ -*-===//
//
// Pooling windows become reduction loops of a linalg.generic over the padded
// input. Average pooling divides by per-position window sizes that are
// known at compile time (a constant), whether or not padding counts.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "gs/Dialect/GS/IR/ShapeUtils.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;

/// Pads `x` for the windows of an `outputShape` pooling: the explicit pads,
/// plus what a ceil-mode last window reaches beyond them.
static Value padForWindows(OpBuilder &b, Location loc, Value x,
                           RankedTensorType outputType,
                           ArrayRef<int64_t> kernel, const WindowGeometry &g,
                           Value padValue) {
  RankedTensorType type = tensorTypeOf(x);
  SmallVector<int64_t> low = {0, 0}, high = {0, 0};
  for (size_t i = 0; i < kernel.size(); ++i) {
    int64_t needed = (outputType.getDimSize(i + 2) - 1) * g.strides[i] +
                     dilatedKernelSize(kernel[i], g.dilations[i]);
    int64_t have = type.getDimSize(i + 2) + g.padsBegin[i] + g.padsEnd[i];
    low.push_back(g.padsBegin[i]);
    high.push_back(g.padsEnd[i] + std::max<int64_t>(0, needed - have));
  }
  return pad(b, loc, x, low, high, padValue);
}

/// Reduces each window of `padded` with `combine` into `init`.
static Value
poolWindows(OpBuilder &b, Location loc, Value padded, Value init,
            ArrayRef<int64_t> kernel, const WindowGeometry &g,
            function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = kernel.size();
  int64_t numLoops = 2 + 2 * rank;
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
  SmallVector<AffineExpr> inExprs = {dim(0), dim(1)}, windowExprs,
                          outExprs = {dim(0), dim(1)};
  for (int64_t i = 0; i < rank; ++i) {
    inExprs.push_back(dim(2 + i) * g.strides[i] +
                      dim(2 + rank + i) * g.dilations[i]);
    windowExprs.push_back(dim(2 + rank + i));
    outExprs.push_back(dim(2 + i));
  }
  SmallVector<utils::IteratorType> iterators = parallelIterators(2 + rank);
  iterators.append(rank, utils::IteratorType::reduction);
  // The window's shape comes from an operand that is never read.
  Value window = tensor::EmptyOp::create(b, loc, kernel, b.getF32Type());
  Type accType = tensorTypeOf(init).getElementType();
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{padded, window}, init,
             SmallVector<AffineMap>{
                 AffineMap::get(numLoops, 0, inExprs, ctx),
                 AffineMap::get(numLoops, 0, windowExprs, ctx),
                 AffineMap::get(numLoops, 0, outExprs, ctx)},
             iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value x = convertScalar(nb, l, args[0], accType);
               linalg::YieldOp::create(nb, l, combine(nb, l, x, args[2]));
             })
      .getResult(0);
}

namespace {
struct MaxPoolLowering : OpConversionPattern<MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    WindowGeometry g = op.getGeometry();
    Type element = type.getElementType();
    Value padded = padForWindows(rewriter, loc, adaptor.getInput(), type,
                                 op.getKernelShape(), g,
                                 lowestValue(rewriter, loc, element));
    Value init = linalg::FillOp::create(rewriter, loc,
                                        lowestValue(rewriter, loc, element),
                                        emptyTensor(rewriter, loc, type))
                     .getResult(0);
    rewriter.replaceOp(
        op, poolWindows(
                rewriter, loc, padded, init, op.getKernelShape(), g,
                [](OpBuilder &b, Location l, Value x, Value acc) {
                  return arith::MaximumFOp::create(b, l, x, acc).getResult();
                }));
    return success();
  }
};

struct AvgPoolLowering : OpConversionPattern<AvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    WindowGeometry g = op.getGeometry();
    ArrayRef<int64_t> kernel = op.getKernelShape();
    Type acc = accumulationType(type.getElementType());
    Value padded =
        padForWindows(rewriter, loc, adaptor.getInput(), type, kernel, g,
                      scalarConstant(rewriter, loc, type.getElementType(), 0));
    Value sums = poolWindows(
        rewriter, loc, padded, filledTensor(rewriter, loc, type.clone(acc), 0),
        kernel, g, [](OpBuilder &b, Location l, Value x, Value a) {
          return arith::AddFOp::create(b, l, x, a).getResult();
        });

    // How many elements each window averages, per spatial dimension: those
    // inside the input, or inside input and explicit padding.
    RankedTensorType inType = tensorTypeOf(adaptor.getInput());
    int64_t rank = kernel.size();
    SmallVector<SmallVector<int64_t>> counts(rank);
    for (int64_t i = 0; i < rank; ++i) {
      int64_t size = inType.getDimSize(i + 2);
      int64_t lo = op.getCountIncludePad() ? -g.padsBegin[i] : 0;
      int64_t hi = op.getCountIncludePad() ? size + g.padsEnd[i] : size;
      for (int64_t o = 0; o < type.getDimSize(i + 2); ++o) {
        int64_t start = o * g.strides[i] - g.padsBegin[i];
        int64_t n = 0;
        for (int64_t k = 0; k < kernel[i]; ++k)
          n += start + k >= lo && start + k < hi;
        counts[i].push_back(n);
      }
    }
    SmallVector<int64_t> divisorShape(type.getShape().drop_front(2));
    SmallVector<float> divisors(type.getNumElements() / type.getDimSize(0) /
                                type.getDimSize(1));
    for (size_t flat = 0; flat < divisors.size(); ++flat) {
      int64_t rest = flat, n = 1;
      for (int64_t i = rank - 1; i >= 0; --i) {
        n *= counts[i][rest % divisorShape[i]];
        rest /= divisorShape[i];
      }
      divisors[flat] = static_cast<float>(std::max<int64_t>(n, 1));
    }
    auto divisorType =
        RankedTensorType::get(divisorShape, rewriter.getF32Type());
    Value divisor = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(divisorType, ArrayRef(divisors)));
    rewriter.replaceOp(
        op, elementwise(rewriter, loc, type, ValueRange{sums, divisor},
                        [&](OpBuilder &b, Location l, ValueRange a) {
                          Value d = convertScalar(b, l, a[1], acc);
                          return convertScalar(
                              b, l, arith::DivFOp::create(b, l, a[0], d),
                              type.getElementType());
                        }));
    return success();
  }
};

struct GlobalAvgPoolLowering : OpConversionPattern<GlobalAvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GlobalAvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    RankedTensorType inType = tensorTypeOf(adaptor.getInput());
    Type acc = accumulationType(type.getElementType());
    SmallVector<int64_t> axes;
    int64_t count = 1;
    for (int64_t d = 2; d < inType.getRank(); ++d) {
      axes.push_back(d);
      count *= inType.getDimSize(d);
    }
    Value sums = reduce(rewriter, loc, adaptor.getInput(), axes,
                        scalarConstant(rewriter, loc, acc, 0.0),
                        [](OpBuilder &b, Location l, Value x, Value a) {
                          return arith::AddFOp::create(b, l, x, a).getResult();
                        });
    Value divisor = scalarConstant(rewriter, loc, acc, count);
    Value means = elementwise(
        rewriter, loc, tensorTypeOf(sums).clone(type.getElementType()), sums,
        [&](OpBuilder &b, Location l, ValueRange a) {
          return convertScalar(b, l, arith::DivFOp::create(b, l, a[0], divisor),
                               type.getElementType());
        });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, means, type));
    return success();
  }
};
} // namespace

void to_linalg::populatePoolingPatterns(TypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<MaxPoolLowering, AvgPoolLowering, GlobalAvgPoolLowering>(
      converter, patterns.getContext());
}
