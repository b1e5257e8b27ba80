//===- ShapeOps.cpp - Shape manipulation and reductions --------*- C++ -*-===//

#include "OpUtils.h"
#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/IR/ShapeUtils.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::gs;

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  if (numElements(in) != numElements(out))
    return emitOpError("cannot reshape ")
           << formatShape(in) << " (" << numElements(in) << " elements) to "
           << formatShape(out) << " (" << numElements(out) << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  return {};
}

namespace {
/// reshape(reshape(x)) -> reshape(x).
struct FoldReshapeChain : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<ReshapeOp>();
    if (!producer)
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(),
                                           producer.getInput());
    return success();
  }
};

/// Rewrites a shape op whose effect is a plain reshape into gs.reshape, so
/// that reshape folding sees through it.
template <typename OpTy> struct ToReshape : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};
} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldReshapeChain>(context);
}

void FlattenOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ToReshape<FlattenOp>>(context);
}

void SqueezeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ToReshape<SqueezeOp>>(context);
}

void UnsqueezeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ToReshape<UnsqueezeOp>>(context);
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  int64_t rank = inputType.getRank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return inferError<TransposeOp>(loc, "expects a permutation of ", rank,
                                   " dimensions, got ", perm.size());
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return inferError<TransposeOp>(loc, "expects a permutation of [0, ", rank,
                                     "), got [", formatShape(perm), "]");
    seen[p] = true;
    shape.push_back(inputType.getDimSize(p));
  }
  types.push_back(inputType.clone(shape));
  return success();
}

LogicalResult TransposeOp::verify() { return verifyByInference(*this); }

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPermutation()))
    if (static_cast<int64_t>(i) != p)
      return {};
  return getInput();
}

namespace {
/// transpose(transpose(x, p), q) -> transpose(x, p o q).
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<TransposeOp>();
    if (!producer)
      return failure();
    ArrayRef<int64_t> inner = producer.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t p : op.getPermutation())
      composed.push_back(inner[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, producer.getInput(), composed);
    return success();
  }
};

/// A transpose that moves only dimensions of size 1 keeps every element in
/// place: a reshape (1x8x28x28 -> 8x1x28x28, the autodiff's regrouping of
/// a layer's single image or channel), which folds into the reshapes around
/// it instead of becoming a copy.
struct UnitDimTransposeToReshape : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> shape = op.getInput().getType().getShape();
    int64_t previous = -1;
    for (int64_t p : op.getPermutation()) {
      if (shape[p] == 1)
        continue;
      if (p < previous)
        return failure();
      previous = p;
    }
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes, UnitDimTransposeToReshape>(context);
}

//===----------------------------------------------------------------------===//
// ConcatOp / SplitOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  auto firstType = cast<RankedTensorType>(inputs.front().getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<ConcatOp>(loc, "axis", axis, firstType.getRank())))
    return failure();
  SmallVector<int64_t> shape(firstType.getShape());
  shape[axis] = 0;
  for (auto [i, input] : llvm::enumerate(inputs)) {
    ArrayRef<int64_t> s = shapeOf(input);
    if (s.size() != shape.size())
      return inferError<ConcatOp>(loc, "expects inputs of one rank; input ", i,
                                  " is ", formatShape(s));
    for (auto [d, size] : llvm::enumerate(s))
      if (static_cast<int64_t>(d) != axis && size != shape[d])
        return inferError<ConcatOp>(loc, "input ", i, " (", formatShape(s),
                                    ") differs from input 0 (",
                                    formatShape(firstType.getShape()),
                                    ") outside the concatenation axis");
    shape[axis] += s[axis];
  }
  types.push_back(firstType.clone(shape));
  return success();
}

LogicalResult ConcatOp::verify() { return verifyByInference(*this); }

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

LogicalResult SplitOp::verify() {
  auto inputType = getInput().getType();
  int64_t axis = getAxis();
  if (failed(checkAxis<SplitOp>(getLoc(), "axis", axis, inputType.getRank())))
    return failure();
  if (getResults().empty())
    return emitOpError("expects at least one result");
  int64_t total = 0;
  for (auto [i, result] : llvm::enumerate(getResults())) {
    ArrayRef<int64_t> s = shapeOf(result);
    auto resultType = cast<RankedTensorType>(result.getType());
    bool sameOffAxis = s.size() == inputType.getShape().size();
    for (int64_t d = 0; sameOffAxis && d < inputType.getRank(); ++d)
      sameOffAxis = d == axis || s[d] == inputType.getDimSize(d);
    if (!sameOffAxis ||
        resultType.getElementType() != inputType.getElementType())
      return emitOpError("result ")
             << i << " (" << result.getType()
             << ") must match the input outside the split axis";
    total += s[axis];
  }
  if (total != inputType.getDimSize(axis))
    return emitOpError("result sizes along axis ")
           << axis << " add up to " << total << ", but the input has "
           << inputType.getDimSize(axis);
  return success();
}

LogicalResult SplitOp::fold(FoldAdaptor,
                            SmallVectorImpl<OpFoldResult> &results) {
  if (getNumResults() != 1)
    return failure();
  results.push_back(getInput());
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
  int64_t axis = adaptor.getAxis();
  if (dataType.getRank() == 0)
    return inferError<GatherOp>(loc, "expects data of rank >= 1");
  if (failed(checkAxis<GatherOp>(loc, "axis", axis, dataType.getRank())))
    return failure();
  if (dataType.getDimSize(axis) == 0)
    return inferError<GatherOp>(loc, "cannot gather from the empty axis ",
                                axis);
  SmallVector<int64_t> shape(dataType.getShape().take_front(axis));
  llvm::append_range(shape, shapeOf(adaptor.getIndices()));
  llvm::append_range(shape, dataType.getShape().drop_front(axis + 1));
  types.push_back(dataType.clone(shape));
  return success();
}

LogicalResult GatherOp::verify() { return verifyByInference(*this); }

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
  ArrayRef<int64_t> indices = shapeOf(adaptor.getIndices());
  int64_t axis = adaptor.getAxis(), rank = dataType.getRank();
  if (rank == 0)
    return inferError<GatherElementsOp>(loc, "expects data of rank >= 1");
  if (failed(checkAxis<GatherElementsOp>(loc, "axis", axis, rank)))
    return failure();
  if (static_cast<int64_t>(indices.size()) != rank)
    return inferError<GatherElementsOp>(loc,
                                        "expects indices of the rank of data (",
                                        rank, "), got rank ", indices.size());
  if (dataType.getDimSize(axis) == 0)
    return inferError<GatherElementsOp>(
        loc, "cannot gather from the empty axis ", axis);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices[d] > dataType.getDimSize(d))
      return inferError<GatherElementsOp>(
          loc, "indices shape ", formatShape(indices),
          " exceeds the data shape ", formatShape(dataType.getShape()),
          " in dimension ", d);
  types.push_back(dataType.clone(indices));
  return success();
}

LogicalResult GatherElementsOp::verify() { return verifyByInference(*this); }

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> starts = adaptor.getStarts();
  ArrayRef<int64_t> ends = adaptor.getEnds();
  ArrayRef<int64_t> steps = adaptor.getSteps();
  int64_t rank = inputType.getRank();
  if (static_cast<int64_t>(starts.size()) != rank ||
      static_cast<int64_t>(ends.size()) != rank ||
      static_cast<int64_t>(steps.size()) != rank)
    return inferError<SliceOp>(loc,
                               "expects one start, end and step per "
                               "dimension (",
                               rank, ")");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = inputType.getDimSize(d);
    int64_t start = starts[d], end = ends[d], step = steps[d];
    if (step == 0)
      return inferError<SliceOp>(loc, "step of dimension ", d, " is zero");
    bool clamped = step > 0
                       ? (0 <= start && start <= dim && 0 <= end && end <= dim)
                       : (0 <= start && start < dim && -1 <= end && end < dim);
    if (!clamped)
      return inferError<SliceOp>(loc, "bounds [", start, ", ", end,
                                 ") with step ", step, " of dimension ", d,
                                 " are not clamped to its size ", dim);
    shape.push_back(sliceSize(start, end, step));
  }
  types.push_back(inputType.clone(shape));
  return success();
}

LogicalResult SliceOp::verify() { return verifyByInference(*this); }

OpFoldResult SliceOp::fold(FoldAdaptor) {
  auto type = getInput().getType();
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (getStarts()[d] != 0 || getSteps()[d] != 1 ||
        getEnds()[d] != type.getDimSize(d))
      return {};
  return getInput();
}

//===----------------------------------------------------------------------===//
// FlattenOp / SqueezeOp / UnsqueezeOp / ExpandOp
//===----------------------------------------------------------------------===//

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<FlattenOp>(loc, "axis", axis, inputType.getRank(),
                                  /*inclusive=*/true)))
    return failure();
  ArrayRef<int64_t> shape = inputType.getShape();
  types.push_back(inputType.clone({numElements(shape.take_front(axis)),
                                   numElements(shape.drop_front(axis))}));
  return success();
}

LogicalResult FlattenOp::verify() { return verifyByInference(*this); }

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  if (failed(checkAxesList<SqueezeOp>(loc, "axes", axes, inputType.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < inputType.getRank(); ++d) {
    if (!llvm::is_contained(axes, d)) {
      shape.push_back(inputType.getDimSize(d));
      continue;
    }
    if (inputType.getDimSize(d) != 1)
      return inferError<SqueezeOp>(loc, "cannot squeeze dimension ", d,
                                   " of size ", inputType.getDimSize(d));
  }
  types.push_back(inputType.clone(shape));
  return success();
}

LogicalResult SqueezeOp::verify() { return verifyByInference(*this); }

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  int64_t rank = inputType.getRank() + axes.size();
  if (failed(checkAxesList<UnsqueezeOp>(loc, "axes", axes, rank)))
    return failure();
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> remaining = inputType.getShape();
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d)) {
      shape.push_back(1);
      continue;
    }
    shape.push_back(remaining.front());
    remaining = remaining.drop_front();
  }
  types.push_back(inputType.clone(shape));
  return success();
}

LogicalResult UnsqueezeOp::verify() { return verifyByInference(*this); }

LogicalResult ExpandOp::verify() {
  if (!isBroadcastableTo(getInput().getType().getShape(), getType().getShape()))
    return emitOpError("cannot broadcast ")
           << formatShape(getInput().getType().getShape()) << " to "
           << formatShape(getType().getShape());
  return success();
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
      dense && dense.isSplat())
    return dense.resizeSplat(getType());
  return {};
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename OpTy>
static LogicalResult inferReduction(std::optional<Location> loc,
                                    typename OpTy::Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  if (failed(checkAxesList<OpTy>(loc, "axes", axes, inputType.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < inputType.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(inputType.getDimSize(d));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  types.push_back(inputType.clone(shape));
  return success();
}

#define GS_DEFINE_REDUCTION(OpTy)                                              \
  LogicalResult OpTy::inferReturnTypes(                                        \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    return inferReduction<OpTy>(loc, adaptor, types);                          \
  }                                                                            \
  LogicalResult OpTy::verify() { return verifyByInference(*this); }            \
  OpFoldResult OpTy::fold(FoldAdaptor) {                                       \
    return getAxes().empty() ? OpFoldResult(getInput()) : OpFoldResult();      \
  }

GS_DEFINE_REDUCTION(ReduceSumOp)
GS_DEFINE_REDUCTION(ReduceMeanOp)
GS_DEFINE_REDUCTION(ReduceMaxOp)

#undef GS_DEFINE_REDUCTION
