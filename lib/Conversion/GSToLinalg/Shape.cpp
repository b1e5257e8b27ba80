//===- Shape.cpp - Shape manipulation to tensor and linalg -----*- C++ -*-===//

#include "Utils.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;

namespace {
/// Reshape, flatten, squeeze and unsqueeze only reinterpret the shape.
template <typename OpTy> struct ReshapeLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, reshapeTo(rewriter, op.getLoc(), adaptor.getInput(),
                          signlessType(op.getType())));
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    rewriter.replaceOp(op, linalg::TransposeOp::create(
                               rewriter, loc, adaptor.getInput(),
                               emptyTensor(rewriter, loc, signlessType(op.getType())),
                               op.getPermutation())
                               ->getResults());
    return success();
  }
};

struct ExpandLowering : OpConversionPattern<ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op,
        elementwise(rewriter, op.getLoc(), signlessType(op.getType()),
                    adaptor.getInput(),
                    [](OpBuilder &, Location, ValueRange a) { return a[0]; }));
    return success();
  }
};

struct ConcatLowering : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = signlessType(op.getType());
    int64_t axis = op.getAxis();
    Value result = emptyTensor(rewriter, loc, type);
    SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
    for (Value input : adaptor.getInputs()) {
      ArrayRef<int64_t> sizes = tensorTypeOf(input).getShape();
      if (tensorTypeOf(input).getNumElements() == 0)
        continue;
      result = tensor::InsertSliceOp::create(
          rewriter, loc, input, result, ValueRange(), ValueRange(),
          ValueRange(), offsets, sizes, strides);
      offsets[axis] += sizes[axis];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SplitLowering : OpConversionPattern<SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    int64_t rank = op.getInput().getType().getRank();
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    SmallVector<Value> pieces;
    for (Value result : op.getResults()) {
      auto type = signlessType(cast<RankedTensorType>(result.getType()));
      // A slice's offset must lie inside the input, an empty piece's need not.
      if (type.getNumElements() == 0) {
        pieces.push_back(emptyTensor(rewriter, loc, type));
        continue;
      }
      pieces.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, type, adaptor.getInput(), ValueRange(), ValueRange(),
          ValueRange(), offsets, type.getShape(), strides));
      offsets[axis] += type.getDimSize(axis);
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};

/// A forward slice is a strided extract_slice; a slice that walks back
/// reads element `start + i * step` through an affine map.
struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = signlessType(op.getType());
    ArrayRef<int64_t> starts = op.getStarts(), steps = op.getSteps();
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    if (llvm::all_of(steps, [](int64_t s) { return s > 0; })) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, type, adaptor.getInput(), ValueRange(), ValueRange(),
          ValueRange(), starts, type.getShape(), steps);
      return success();
    }
    MLIRContext *ctx = getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < type.getRank(); ++d)
      exprs.push_back(getAffineDimExpr(d, ctx) * steps[d] + starts[d]);
    int64_t rank = type.getRank();
    rewriter.replaceOp(
        op, linalg::GenericOp::create(
                rewriter, loc, type, adaptor.getInput(),
                emptyTensor(rewriter, loc, type),
                SmallVector<AffineMap>{AffineMap::get(rank, 0, exprs, ctx),
                                       rewriter.getMultiDimIdentityMap(rank)},
                parallelIterators(rank),
                [](OpBuilder &b, Location l, ValueRange args) {
                  linalg::YieldOp::create(b, l, args[0]);
                })
                .getResults());
    return success();
  }
};

/// An index read from an indices tensor as an `index` into a dimension of
/// `size`: negative values count from the end, and what is still out of
/// range is clamped (ONNX leaves it undefined; no read leaves the tensor).
static Value normalizeIndex(OpBuilder &b, Location loc, Value raw,
                            int64_t size) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  Value wrapped = arith::AddIOp::create(
      b, loc, i, arith::ConstantIndexOp::create(b, loc, size));
  i = arith::SelectOp::create(b, loc, negative, wrapped, i);
  i = arith::MaxSIOp::create(b, loc, i, zero);
  return arith::MinSIOp::create(
      b, loc, i, arith::ConstantIndexOp::create(b, loc, size - 1));
}

/// Gather: result position (p..., j..., q...) reads data at
/// (p..., indices[j...], q...).
struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = signlessType(op.getType());
    Value data = adaptor.getData();
    int64_t axis = op.getAxis(), rank = type.getRank();
    int64_t indexRank = op.getIndices().getType().getRank();
    int64_t size = op.getData().getType().getDimSize(axis);
    AffineMap indexMap = AffineMap::getMultiDimIdentityMap(rank, getContext())
                             .getSliceMap(axis, indexRank);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, type, adaptor.getIndices(),
            emptyTensor(rewriter, loc, type),
            SmallVector<AffineMap>{indexMap,
                                   rewriter.getMultiDimIdentityMap(rank)},
            parallelIterators(rank),
            [&](OpBuilder &b, Location l, ValueRange args) {
              SmallVector<Value> at;
              for (int64_t d = 0; d < axis; ++d)
                at.push_back(linalg::IndexOp::create(b, l, d));
              at.push_back(normalizeIndex(b, l, args[0], size));
              for (int64_t d = axis + indexRank; d < rank; ++d)
                at.push_back(linalg::IndexOp::create(b, l, d));
              linalg::YieldOp::create(
                  b, l, ValueRange{tensor::ExtractOp::create(b, l, data, at)});
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// GatherElements: position (i...) reads data at (i...) with the index at
/// `axis` replaced by indices[i...].
struct GatherElementsLowering : OpConversionPattern<GatherElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = signlessType(op.getType());
    Value data = adaptor.getData();
    int64_t axis = op.getAxis(), rank = type.getRank();
    int64_t size = op.getData().getType().getDimSize(axis);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, type, adaptor.getIndices(),
            emptyTensor(rewriter, loc, type),
            SmallVector<AffineMap>(2, rewriter.getMultiDimIdentityMap(rank)),
            parallelIterators(rank),
            [&](OpBuilder &b, Location l, ValueRange args) {
              SmallVector<Value> at;
              for (int64_t d = 0; d < rank; ++d)
                at.push_back(d == axis ? normalizeIndex(b, l, args[0], size)
                                       : linalg::IndexOp::create(b, l, d));
              linalg::YieldOp::create(
                  b, l, ValueRange{tensor::ExtractOp::create(b, l, data, at)});
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

void to_linalg::populateShapePatterns(TypeConverter &converter,
                                      RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering<ReshapeOp>, ReshapeLowering<FlattenOp>,
               ReshapeLowering<SqueezeOp>, ReshapeLowering<UnsqueezeOp>,
               TransposeLowering, ExpandLowering, ConcatLowering, SplitLowering,
               SliceLowering, GatherLowering, GatherElementsLowering>(
      converter, patterns.getContext());
}
