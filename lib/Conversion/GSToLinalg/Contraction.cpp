//===- Contraction.cpp - gemm, matmul, conv, conv_transpose ----*- C++ -*-===//
//
// Contractions accumulate in f32 for f16 operands (the named linalg ops
// extend their inputs to the accumulator's type) and round once in an
// epilogue that also applies alpha, beta, C or the bias.
// gs.scaled_contraction becomes the gs ops it fused. GEMMs, convolutions
// and 2-D grouped ones become named linalg ops, which the CPU kernel
// schedule tiles and vectorizes; other grouped convolutions a
// linalg.generic.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "gs/Conversion/GSToLinalg/GSToLinalg.h"
#include "gs/Dialect/GS/IR/ShapeUtils.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;

void mlir::gs::buildMultiplyAddBody(OpBuilder &b, Location loc,
                                    ValueRange args) {
  Type accType = args[2].getType();
  // Named one by one: argument evaluation order is unspecified.
  Value lhs = convertScalar(b, loc, args[0], accType);
  Value rhs = convertScalar(b, loc, args[1], accType);
  Value product = arith::MulFOp::create(b, loc, lhs, rhs);
  linalg::YieldOp::create(
      b, loc, arith::AddFOp::create(b, loc, args[2], product).getResult());
}

/// A 2-D transpose.
static Value transpose2D(OpBuilder &b, Location loc, Value value) {
  RankedTensorType type = tensorTypeOf(value);
  auto resultType = type.clone({type.getDimSize(1), type.getDimSize(0)});
  return linalg::TransposeOp::create(b, loc, value,
                                     emptyTensor(b, loc, resultType),
                                     ArrayRef<int64_t>{1, 0})
      ->getResult(0);
}

/// Rounds an accumulator to `resultType`, adding `bias` (broadcast along
/// `biasDim`, or NumPy-style when `biasDim` is negative) scaled by `beta`
/// and scaling the product by `alpha`.
static Value epilogue(OpBuilder &b, Location loc, Value acc,
                      RankedTensorType resultType, Value bias, int64_t biasDim,
                      double alpha = 1.0, double beta = 1.0) {
  Type accType = tensorTypeOf(acc).getElementType();
  if (!bias && alpha == 1.0 && accType == resultType.getElementType())
    return acc;
  SmallVector<Value> operands = {acc};
  if (bias && biasDim >= 0) {
    // Lay the bias along its dimension for the broadcasting generic.
    SmallVector<int64_t> shape(resultType.getRank() - biasDim, 1);
    shape[0] = resultType.getDimSize(biasDim);
    bias = reshapeTo(b, loc, bias, tensorTypeOf(bias).clone(shape));
  }
  if (bias)
    operands.push_back(bias);
  return elementwise(
      b, loc, resultType, operands,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = args[0];
        if (alpha != 1.0)
          v = arith::MulFOp::create(nb, nloc, v,
                                    scalarConstant(nb, nloc, accType, alpha));
        if (bias) {
          Value c = convertScalar(nb, nloc, args[1], accType);
          if (beta != 1.0)
            c = arith::MulFOp::create(nb, nloc, c,
                                      scalarConstant(nb, nloc, accType, beta));
          v = arith::AddFOp::create(nb, nloc, v, c);
        }
        return convertScalar(nb, nloc, v, resultType.getElementType());
      });
}

/// An accumulator tensor of zeros with the shape of `resultType`.
static Value zeroAccumulator(OpBuilder &b, Location loc,
                             RankedTensorType resultType, Type operandType) {
  return filledTensor(b, loc, resultType.clone(accumulationType(operandType)),
                      0.0);
}

namespace {

struct GemmLowering : OpConversionPattern<GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), bm = adaptor.getB();
    if (op.getTransA())
      a = transpose2D(rewriter, loc, a);
    if (op.getTransB())
      bm = transpose2D(rewriter, loc, bm);
    RankedTensorType type = op.getType();
    Value acc =
        zeroAccumulator(rewriter, loc, type, tensorTypeOf(a).getElementType());
    Value product = linalg::MatmulOp::create(rewriter, loc, acc.getType(),
                                             ValueRange{a, bm}, acc)
                        .getResult(0);
    rewriter.replaceOp(op,
                       epilogue(rewriter, loc, product, type, adaptor.getC(),
                                /*biasDim=*/-1, op.getAlpha().convertToDouble(),
                                op.getBeta().convertToDouble()));
    return success();
  }
};

/// numpy.matmul: linalg.matmul for two matrices, otherwise a generic
/// contraction over broadcast batch dimensions.
struct MatMulLowering : OpConversionPattern<MatMulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    RankedTensorType type = op.getType();
    RankedTensorType lhsType = tensorTypeOf(lhs), rhsType = tensorTypeOf(rhs);
    Value acc = zeroAccumulator(rewriter, loc, type, lhsType.getElementType());
    if (lhsType.getRank() == 2 && rhsType.getRank() == 2) {
      Value product = linalg::MatmulOp::create(rewriter, loc, acc.getType(),
                                               ValueRange{lhs, rhs}, acc)
                          .getResult(0);
      rewriter.replaceOp(op,
                         epilogue(rewriter, loc, product, type, Value(), -1));
      return success();
    }
    // Loops: batch dims of the result, then m and n where present, then k.
    bool lhsVector = lhsType.getRank() == 1, rhsVector = rhsType.getRank() == 1;
    int64_t batchRank =
        type.getRank() - (lhsVector ? 0 : 1) - (rhsVector ? 0 : 1);
    int64_t m = batchRank, n = m + (lhsVector ? 0 : 1),
            k = n + (rhsVector ? 0 : 1), numLoops = k + 1;
    MLIRContext *ctx = rewriter.getContext();
    auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
    // Batch dimensions of an operand, aligned to the result's from the end.
    auto batchExprs = [&](RankedTensorType t, int64_t matrixRank) {
      SmallVector<AffineExpr> exprs;
      int64_t rank = t.getRank() - matrixRank;
      for (int64_t i = 0; i < rank; ++i) {
        int64_t d = batchRank - rank + i;
        exprs.push_back(t.getDimSize(i) == 1 && type.getDimSize(d) != 1
                            ? getAffineConstantExpr(0, ctx)
                            : dim(d));
      }
      return exprs;
    };
    SmallVector<AffineExpr> lhsExprs = batchExprs(lhsType, lhsVector ? 1 : 2);
    if (!lhsVector)
      lhsExprs.push_back(dim(m));
    lhsExprs.push_back(dim(k));
    SmallVector<AffineExpr> rhsExprs = batchExprs(rhsType, rhsVector ? 1 : 2);
    rhsExprs.push_back(dim(k));
    if (!rhsVector)
      rhsExprs.push_back(dim(n));
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < batchRank; ++d)
      outExprs.push_back(dim(d));
    if (!lhsVector)
      outExprs.push_back(dim(m));
    if (!rhsVector)
      outExprs.push_back(dim(n));
    SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, lhsExprs, ctx),
                                   AffineMap::get(numLoops, 0, rhsExprs, ctx),
                                   AffineMap::get(numLoops, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators = parallelIterators(numLoops);
    iterators.back() = utils::IteratorType::reduction;
    Value product = linalg::GenericOp::create(rewriter, loc, acc.getType(),
                                              ValueRange{lhs, rhs}, acc, maps,
                                              iterators, buildMultiplyAddBody)
                        .getResult(0);
    rewriter.replaceOp(op, epilogue(rewriter, loc, product, type, Value(), -1));
    return success();
  }
};

/// Convolution of an already padded input (N x C x S...) with weights
/// (M x C/group x K...) into an accumulator (N x M x O...): named linalg ops
/// for 1-3 spatial dimensions without groups and for 2 with them (channels
/// split into groups), a grouped linalg.generic otherwise.
static Value convolve(OpBuilder &b, Location loc, Value input, Value weight,
                      Value acc, ArrayRef<int64_t> strides,
                      ArrayRef<int64_t> dilations, int64_t group) {
  RankedTensorType accType = tensorTypeOf(acc);
  int64_t rank = accType.getRank() - 2;
  auto stridesAttr = b.getI64TensorAttr(strides);
  auto dilationsAttr = b.getI64TensorAttr(dilations);
  Type resultTypes = acc.getType();
  SmallVector<Value, 2> inputs = {input, weight};
  if (group == 1 && rank == 2)
    return linalg::Conv2DNchwFchwOp::create(b, loc, resultTypes, inputs, acc,
                                            stridesAttr, dilationsAttr)
        .getResult(0);
  if (group == 1 && rank == 1)
    return linalg::Conv1DNcwFcwOp::create(b, loc, resultTypes, inputs, acc,
                                          stridesAttr, dilationsAttr)
        .getResult(0);
  if (group == 1 && rank == 3)
    return linalg::Conv3DNcdhwFcdhwOp::create(b, loc, resultTypes, inputs, acc,
                                              stridesAttr, dilationsAttr)
        .getResult(0);

  // Split the channels into groups: input N x G x C/G x S...,
  // weights G x M/G x C/G x K..., output N x G x M/G x O....
  RankedTensorType inType = tensorTypeOf(input), wType = tensorTypeOf(weight);
  int64_t n = inType.getDimSize(0), c = inType.getDimSize(1);
  int64_t m = wType.getDimSize(0);
  auto grouped = [&](Value value, ArrayRef<int64_t> lead) {
    RankedTensorType t = tensorTypeOf(value);
    SmallVector<int64_t> shape(lead);
    llvm::append_range(shape, t.getShape().drop_front(2));
    return reshapeTo(b, loc, value, t.clone(shape));
  };
  Value groupedIn = grouped(input, {n, group, c / group});
  Value groupedW = grouped(weight, {group, m / group, c / group});
  Value groupedAcc = grouped(acc, {n, group, m / group});
  if (rank == 2) {
    Value result =
        linalg::Conv2DNgchwGfchwOp::create(
            b, loc, groupedAcc.getType(), ValueRange{groupedIn, groupedW},
            groupedAcc, stridesAttr, dilationsAttr)
            .getResult(0);
    return reshapeTo(b, loc, result, accType);
  }

  // Loops: n, g, mg, o_0..o_{r-1}, cg, k_0..k_{r-1}.
  MLIRContext *ctx = b.getContext();
  int64_t numLoops = 4 + 2 * rank;
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
  SmallVector<AffineExpr> inExprs = {dim(0), dim(1), dim(3 + rank)};
  SmallVector<AffineExpr> wExprs = {dim(1), dim(2), dim(3 + rank)};
  SmallVector<AffineExpr> outExprs = {dim(0), dim(1), dim(2)};
  SmallVector<utils::IteratorType> iterators(3 + rank,
                                             utils::IteratorType::parallel);
  iterators.append(1 + rank, utils::IteratorType::reduction);
  for (int64_t i = 0; i < rank; ++i) {
    inExprs.push_back(dim(3 + i) * strides[i] +
                      dim(4 + rank + i) * dilations[i]);
    wExprs.push_back(dim(4 + rank + i));
    outExprs.push_back(dim(3 + i));
  }
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, inExprs, ctx),
                                 AffineMap::get(numLoops, 0, wExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  Value result =
      linalg::GenericOp::create(b, loc, groupedAcc.getType(),
                                ValueRange{groupedIn, groupedW}, groupedAcc,
                                maps, iterators, buildMultiplyAddBody)
          .getResult(0);
  return reshapeTo(b, loc, result, accType);
}

struct ConvLowering : OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    WindowGeometry g = op.getGeometry();
    Value input = adaptor.getInput();
    Type element = tensorTypeOf(input).getElementType();
    SmallVector<int64_t> low = {0, 0}, high = {0, 0};
    llvm::append_range(low, g.padsBegin);
    llvm::append_range(high, g.padsEnd);
    Value padded = pad(rewriter, loc, input, low, high,
                       scalarConstant(rewriter, loc, element, 0.0));
    RankedTensorType type = op.getType();
    Value acc = zeroAccumulator(rewriter, loc, type, element);
    Value result = convolve(rewriter, loc, padded, adaptor.getWeight(), acc,
                            g.strides, g.dilations, op.getGroup());
    rewriter.replaceOp(op, epilogue(rewriter, loc, result, type,
                                    adaptor.getBias(), /*biasDim=*/1));
    return success();
  }
};

/// An ungrouped transposed convolution with a stride above 1, without
/// the zeros of the spread input (three in four multiplications for stride
/// 2): a GEMM gives every input element's contribution to each kernel
/// position,
///   cols[(m, k...), n, (i...)] = sum_c w[c, (m, k...)] * x[n, c, (i...)]
/// (per image, or for inputs of few positions with the images batched into
/// the GEMM's columns), and each kernel position's contributions add into
/// the output at
///   o = i * stride + k * dilation - pad_begin
/// (col2im), a row-contiguous slice of one stride phase of the output per
/// kernel position, the phases interleaved at the end.
static Value transposedConvolutionByColumns(OpBuilder &b, Location loc,
                                            Value input, Value weight,
                                            RankedTensorType type,
                                            const WindowGeometry &g) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType inType = tensorTypeOf(input), wType = tensorTypeOf(weight);
  int64_t rank = inType.getRank() - 2;
  int64_t n = inType.getDimSize(0), c = inType.getDimSize(1);
  int64_t m = wType.getDimSize(1);
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  ArrayRef<int64_t> in = inType.getShape().drop_front(2);
  ArrayRef<int64_t> out = type.getShape().drop_front(2);
  int64_t kernelSize = 1, inSize = 1;
  for (int64_t i = 0; i < rank; ++i)
    kernelSize *= kernel[i], inSize *= in[i];
  Type accType = accumulationType(inType.getElementType());
  bool batchImages = n > 1 && inSize < kConvBatchImagesBelow;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto par = utils::IteratorType::parallel;

  // A: the weights as MK x C (a small transpose; register blocks read A's
  // rows).
  Value weights = transpose2D(
      b, loc, reshapeTo(b, loc, weight, wType.clone({c, m * kernelSize})));
  Value images = reshapeTo(b, loc, input, inType.clone({n, c, inSize}));
  Value cols;
  SmallVector<int64_t> colsShape;
  if (batchImages) {
    // Loops (mk, (n, p) | c) over the images as C x (N*P).
    auto imagesType =
        RankedTensorType::get({c, n, inSize}, inType.getElementType());
    Value channelsFirst = linalg::TransposeOp::create(
                              b, loc, images, emptyTensor(b, loc, imagesType),
                              ArrayRef<int64_t>{1, 0, 2})
                              ->getResult(0);
    Value columns =
        reshapeTo(b, loc, channelsFirst, imagesType.clone({c, n * inSize}));
    auto colsType =
        RankedTensorType::get({m * kernelSize, n * inSize}, accType);
    Value zeros = filledTensor(b, loc, colsType, 0.0);
    cols = linalg::GenericOp::create(
               b, loc, colsType, ValueRange{weights, columns}, zeros,
               SmallVector<AffineMap>{AffineMap::get(3, 0, {d(0), d(2)}, ctx),
                                      AffineMap::get(3, 0, {d(2), d(1)}, ctx),
                                      AffineMap::get(3, 0, {d(0), d(1)}, ctx)},
               SmallVector<utils::IteratorType>{par, par,
                                                utils::IteratorType::reduction},
               buildMultiplyAddBody)
               .getResult(0);
    colsShape = {m};
    llvm::append_range(colsShape, kernel);
    colsShape.push_back(n);
  } else {
    // Loops (n, mk, p | c), per image.
    auto colsType = RankedTensorType::get({n, m * kernelSize, inSize}, accType);
    Value zeros = filledTensor(b, loc, colsType, 0.0);
    cols = linalg::GenericOp::create(
               b, loc, colsType, ValueRange{weights, images}, zeros,
               SmallVector<AffineMap>{
                   AffineMap::get(4, 0, {d(1), d(3)}, ctx),
                   AffineMap::get(4, 0, {d(0), d(3), d(2)}, ctx),
                   AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)},
               SmallVector<utils::IteratorType>{par, par, par,
                                                utils::IteratorType::reduction},
               buildMultiplyAddBody)
               .getResult(0);
    colsShape = {n, m};
    llvm::append_range(colsShape, kernel);
  }
  llvm::append_range(colsShape, in);
  cols = reshapeTo(b, loc, cols, tensorTypeOf(cols).clone(colsShape));

  // col2im, one kernel position at a time, into an accumulator of the
  // output's stride phases: out[n, m, o...] with o = a * s + p is
  // phases[n, m, p..., a...]. A kernel position's contributions land in
  // one phase, at consecutive a (o = i * s + shift: p = shift mod s, a = i +
  // floor(shift / s)), so each is added along rows in place; a last pass
  // interleaves the phases into the output. Added into the strided slices
  // of the output, they had been gathers and scatters, a pass each.
  SmallVector<int64_t> phasesShape = {n, m};
  SmallVector<int64_t> planes;
  for (int64_t i = 0; i < rank; ++i)
    phasesShape.push_back(g.strides[i]);
  for (int64_t i = 0; i < rank; ++i) {
    planes.push_back(llvm::divideCeil(out[i], g.strides[i]));
    phasesShape.push_back(planes.back());
  }
  auto phasesType = RankedTensorType::get(phasesShape, accType);
  Value acc = filledTensor(b, loc, phasesType, 0.0);
  SmallVector<int64_t> position(rank, 0);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank + 2, ctx);
  AffineMap contributionMap = identity;
  if (batchImages) {
    SmallVector<unsigned> swapped = {1, 0};
    for (int64_t i = 0; i < rank; ++i)
      swapped.push_back(2 + i);
    contributionMap = AffineMap::getPermutationMap(swapped, ctx);
  }
  for (int64_t flat = 0; flat < kernelSize; ++flat) {
    for (int64_t i = rank - 1, rest = flat; i >= 0; --i) {
      position[i] = rest % kernel[i];
      rest /= kernel[i];
    }
    // The inputs i whose output i * s + k * d - pad lands inside.
    SmallVector<int64_t> first, count, shifts;
    bool empty = false;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t shift = position[i] * g.dilations[i] - g.padsBegin[i];
      int64_t lo =
          std::max<int64_t>(0, llvm::divideCeilSigned(-shift, g.strides[i]));
      int64_t hi = std::min<int64_t>(
          in[i], llvm::divideFloorSigned(out[i] - 1 - shift, g.strides[i]) + 1);
      first.push_back(lo);
      count.push_back(hi - lo);
      shifts.push_back(shift);
      empty |= hi <= lo;
    }
    if (empty)
      continue;
    SmallVector<int64_t> colOffsets, colSizes, sliceShape = {n, m};
    SmallVector<int64_t> accOffsets = {0, 0}, accSizes = {n, m};
    if (batchImages) {
      colOffsets.push_back(0);
      colSizes.push_back(m);
    } else {
      colOffsets.append({0, 0});
      colSizes.append({n, m});
    }
    for (int64_t i = 0; i < rank; ++i) {
      colOffsets.push_back(position[i]);
      colSizes.push_back(1);
      accOffsets.push_back(llvm::mod(shifts[i], g.strides[i]));
      accSizes.push_back(1);
    }
    if (batchImages) {
      colOffsets.push_back(0);
      colSizes.push_back(n);
    }
    for (int64_t i = 0; i < rank; ++i) {
      colOffsets.push_back(first[i]);
      colSizes.push_back(count[i]);
      accOffsets.push_back(first[i] +
                           llvm::divideFloorSigned(shifts[i], g.strides[i]));
      accSizes.push_back(count[i]);
      sliceShape.push_back(count[i]);
    }
    auto sliceType = RankedTensorType::get(sliceShape, accType);
    SmallVector<int64_t> contributionShape(sliceShape);
    if (batchImages)
      std::swap(contributionShape[0], contributionShape[1]);
    Value contribution = tensor::ExtractSliceOp::create(
        b, loc, sliceType.clone(contributionShape), cols, ValueRange(),
        ValueRange(), ValueRange(), colOffsets, colSizes,
        SmallVector<int64_t>(colSizes.size(), 1));
    SmallVector<int64_t> unitSteps(accSizes.size(), 1);
    Value target = tensor::ExtractSliceOp::create(
        b, loc, sliceType, acc, ValueRange(), ValueRange(), ValueRange(),
        accOffsets, accSizes, unitSteps);
    // Added in place: one pass over the slice, where a sum into a new
    // tensor would then be copied back.
    Value sum =
        linalg::GenericOp::create(
            b, loc, sliceType, ValueRange{contribution}, target,
            SmallVector<AffineMap>{contributionMap, identity},
            parallelIterators(rank + 2),
            [](OpBuilder &nb, Location l, ValueRange args) {
              linalg::YieldOp::create(
                  nb, l,
                  arith::AddFOp::create(nb, l, args[1], args[0]).getResult());
            })
            .getResult(0);
    acc = tensor::InsertSliceOp::create(b, loc, sum, acc, ValueRange(),
                                        ValueRange(), ValueRange(), accOffsets,
                                        accSizes, unitSteps);
  }

  // The phases interleaved: the output, its spatial dimensions rounded up
  // to whole strides, as (a, p) pairs (a transpose of the phases), then cut
  // to its size.
  SmallVector<int64_t> interleavedShape = {n, m};
  SmallVector<int64_t> interleaving = {0, 1};
  for (int64_t i = 0; i < rank; ++i) {
    interleavedShape.append({planes[i], g.strides[i]});
    interleaving.append({2 + rank + i, 2 + i});
  }
  auto interleavedType = RankedTensorType::get(interleavedShape, accType);
  Value interleaved =
      linalg::TransposeOp::create(
          b, loc, acc, emptyTensor(b, loc, interleavedType), interleaving)
          ->getResult(0);
  SmallVector<int64_t> roundedShape = {n, m};
  for (int64_t i = 0; i < rank; ++i)
    roundedShape.push_back(planes[i] * g.strides[i]);
  Value rounded = reshapeTo(b, loc, interleaved,
                            RankedTensorType::get(roundedShape, accType));
  auto resultType = type.clone(accType);
  if (resultType.getShape() == ArrayRef<int64_t>(roundedShape))
    return rounded;
  int64_t resultRank = resultType.getRank();
  return tensor::ExtractSliceOp::create(
      b, loc, resultType, rounded, ValueRange(), ValueRange(), ValueRange(),
      SmallVector<int64_t>(resultRank, 0), resultType.getShape(),
      SmallVector<int64_t>(resultRank, 1));
}

/// The input of a transposed convolution spread out by the stride and
/// framed: element j of spatial dimension i reads input element
/// (j - frame_i) / stride_i where that divides exactly, else zero.
static Value spreadInput(OpBuilder &builder, Location loc, Value input,
                         RankedTensorType spreadType, ArrayRef<int64_t> frame,
                         ArrayRef<int64_t> strides) {
  RankedTensorType inType = tensorTypeOf(input);
  Type element = inType.getElementType();
  int64_t rank = inType.getRank() - 2;
  // Where every input element lands inside: zeros with the input inserted
  // at the stride (a fill and a strided copy).
  bool landsInside = true;
  SmallVector<int64_t> offsets(2, 0), steps(2, 1);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t last = frame[i] + (inType.getDimSize(i + 2) - 1) * strides[i];
    landsInside &= frame[i] >= 0 && last < spreadType.getDimSize(i + 2);
    offsets.push_back(frame[i]);
    steps.push_back(strides[i]);
  }
  if (landsInside)
    return tensor::InsertSliceOp::create(
        builder, loc, input, filledTensor(builder, loc, spreadType, 0.0),
        ValueRange(), ValueRange(), ValueRange(), offsets, inType.getShape(),
        steps);

  // Otherwise a gather, each element's input index computed.
  return linalg::GenericOp::create(
             builder, loc, spreadType, ValueRange(),
             emptyTensor(builder, loc, spreadType),
             builder.getMultiDimIdentityMap(rank + 2),
             parallelIterators(rank + 2),
             [&](OpBuilder &b, Location l, ValueRange) {
               Type idx = b.getIndexType();
               Value inside = arith::ConstantIntOp::create(b, l, 1, 1);
               SmallVector<Value> indices = {linalg::IndexOp::create(b, l, 0),
                                             linalg::IndexOp::create(b, l, 1)};
               for (int64_t i = 0; i < rank; ++i) {
                 Value j = linalg::IndexOp::create(b, l, i + 2);
                 Value shifted = arith::SubIOp::create(
                     b, l, j, scalarConstant(b, l, idx, frame[i]));
                 Value stride = scalarConstant(b, l, idx, strides[i]);
                 Value q = arith::DivSIOp::create(b, l, shifted, stride);
                 Value r = arith::RemSIOp::create(b, l, shifted, stride);
                 auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
                   return arith::CmpIOp::create(b, l, p, x, y);
                 };
                 // Named one by one: argument evaluation order is unspecified.
                 Value notBefore = cmp(arith::CmpIPredicate::sge, shifted,
                                       scalarConstant(b, l, idx, 0));
                 Value onStride = cmp(arith::CmpIPredicate::eq, r,
                                      scalarConstant(b, l, idx, 0));
                 Value notAfter =
                     cmp(arith::CmpIPredicate::slt, q,
                         scalarConstant(b, l, idx, inType.getDimSize(i + 2)));
                 Value ok = arith::AndIOp::create(
                     b, l, notBefore,
                     arith::AndIOp::create(b, l, onStride, notAfter));
                 inside = arith::AndIOp::create(b, l, inside, ok);
                 // Clamp so that the read stays in bounds when unused.
                 indices.push_back(arith::SelectOp::create(
                     b, l, ok, q, scalarConstant(b, l, idx, 0)));
               }
               Value read = tensor::ExtractOp::create(b, l, input, indices);
               Value zero = scalarConstant(b, l, element, 0.0);
               linalg::YieldOp::create(b, l,
                                       ValueRange{arith::SelectOp::create(
                                           b, l, inside, read, zero)});
             })
      .getResult(0);
}

/// A transposed convolution is a convolution with stride 1 of the input
/// spread out by the stride (zeros between its elements) and framed by
/// `dilation * (kernel - 1) - pad` elements, with the kernel flipped and its
/// channel dimensions swapped.
struct ConvTransposeLowering : OpConversionPattern<ConvTransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvTransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    WindowGeometry g = op.getGeometry();
    Value input = adaptor.getInput(), weight = adaptor.getWeight();
    RankedTensorType inType = tensorTypeOf(input), wType = tensorTypeOf(weight);
    RankedTensorType type = op.getType();
    int64_t rank = inType.getRank() - 2, group = op.getGroup();
    int64_t c = inType.getDimSize(1), mg = wType.getDimSize(1);
    Type element = inType.getElementType();
    if (group == 1 &&
        llvm::any_of(g.strides, [](int64_t s) { return s > 1; }) &&
        type.getNumElements() > 0 && inType.getNumElements() > 0) {
      Value result =
          transposedConvolutionByColumns(rewriter, loc, input, weight, type, g);
      rewriter.replaceOp(op, epilogue(rewriter, loc, result, type,
                                      adaptor.getBias(), /*biasDim=*/1));
      return success();
    }

    // The input spread out by the stride and framed (spreadInput).
    SmallVector<int64_t> spreadShape(inType.getShape().take_front(2));
    SmallVector<int64_t> frame;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t extent =
          dilatedKernelSize(wType.getDimSize(i + 2), g.dilations[i]);
      spreadShape.push_back(type.getDimSize(i + 2) + extent - 1);
      frame.push_back(extent - 1 - g.padsBegin[i]);
    }
    auto spreadType = inType.clone(spreadShape);
    // At stride 1 with a frame on both sides, a pad by zeros (a fill of the
    // frame and a copy, gs-fill-pad-frames), not a gather per element.
    SmallVector<int64_t> low(2, 0), high(2, 0);
    for (int64_t i = 0; i < rank; ++i) {
      low.push_back(frame[i]);
      high.push_back(spreadShape[i + 2] - frame[i] - inType.getDimSize(i + 2));
    }
    bool framedOnly =
        llvm::all_of(g.strides, [](int64_t s) { return s == 1; }) &&
        llvm::all_of(low, [](int64_t v) { return v >= 0; }) &&
        llvm::all_of(high, [](int64_t v) { return v >= 0; });
    Value spread = framedOnly ? pad(rewriter, loc, input, low, high,
                                    scalarConstant(rewriter, loc, element, 0.0))
                              : spreadInput(rewriter, loc, input, spreadType,
                                            frame, g.strides);

    // Flipped weights with channels swapped: (M x C/group x K...) from
    // (C x M/group x K...), through a grouped view.
    SmallVector<int64_t> groupedShape = {group, c / group, mg};
    llvm::append_range(groupedShape, wType.getShape().drop_front(2));
    Value grouped = reshapeTo(rewriter, loc, weight, wType.clone(groupedShape));
    SmallVector<int64_t> flippedShape = {group, mg, c / group};
    llvm::append_range(flippedShape, wType.getShape().drop_front(2));
    auto flippedType = wType.clone(flippedShape);
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> readExprs = {getAffineDimExpr(0, ctx),
                                         getAffineDimExpr(2, ctx),
                                         getAffineDimExpr(1, ctx)};
    for (int64_t i = 0; i < rank; ++i)
      readExprs.push_back(wType.getDimSize(i + 2) - 1 -
                          getAffineDimExpr(3 + i, ctx));
    Value flipped =
        linalg::GenericOp::create(
            rewriter, loc, flippedType, grouped,
            emptyTensor(rewriter, loc, flippedType),
            SmallVector<AffineMap>{AffineMap::get(rank + 3, 0, readExprs, ctx),
                                   rewriter.getMultiDimIdentityMap(rank + 3)},
            parallelIterators(rank + 3),
            [&](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(b, l, args[0]);
            })
            .getResult(0);
    SmallVector<int64_t> convWeightShape = {group * mg, c / group};
    llvm::append_range(convWeightShape, wType.getShape().drop_front(2));
    Value convWeight =
        reshapeTo(rewriter, loc, flipped, wType.clone(convWeightShape));

    Value acc = zeroAccumulator(rewriter, loc, type, element);
    SmallVector<int64_t> ones(rank, 1);
    Value result = convolve(rewriter, loc, spread, convWeight, acc, ones,
                            g.dilations, group);
    rewriter.replaceOp(op, epilogue(rewriter, loc, result, type,
                                    adaptor.getBias(), /*biasDim=*/1));
    return success();
  }
};
} // namespace

namespace {
/// gs.scaled_contraction as the ops it fused (which lower in turn): its
/// contraction, the rescale, the rounding, the two statistics and the ReLU
/// mask. The numbers are those of the unfused step, bit for bit.
struct ScaledContractionLowering : OpConversionPattern<ScaledContractionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScaledContractionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    Value product = yield.getGradients()[0];
    rewriter.inlineBlockBefore(&body, op);
    rewriter.eraseOp(yield);
    Value value = RescaleOp::create(rewriter, loc, product, adaptor.getScale());
    RankedTensorType resultType = op.getResult().getType();
    Value result = value;
    if (!resultType.getElementType().isF32())
      result = CastOp::create(rewriter, loc, resultType, value);
    Value stats = GradStatsOp::create(rewriter, loc, result);
    Value counts = CastStatsOp::create(rewriter, loc, value);
    if (Value mask = adaptor.getReluMask()) {
      // A ReLU's backward, after the statistics.
      auto maskType = cast<RankedTensorType>(mask.getType());
      auto zero = [&](RankedTensorType type) -> Value {
        return ConstantOp::create(
            rewriter, loc,
            DenseElementsAttr::get(
                RankedTensorType::get({}, type.getElementType()),
                rewriter.getZeroAttr(type.getElementType())));
      };
      Value maskZero = zero(maskType);
      Value active = CompareOp::create(rewriter, loc, ComparePredicate::gt,
                                       mask, maskZero);
      Value resultZero = zero(resultType);
      result = WhereOp::create(rewriter, loc, active, result, resultZero);
    }
    rewriter.replaceOp(op, {result, stats, counts});
    return success();
  }
};
} // namespace

void to_linalg::populateContractionPatterns(TypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns.add<GemmLowering, MatMulLowering, ConvLowering,
               ConvTransposeLowering, ScaledContractionLowering>(
      converter, patterns.getContext());
}
