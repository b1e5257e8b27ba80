//===- IndexingVJP.cpp - Gradients of slice and gather ops ------*- C++ -*-===//
//
// The gradient of an op that picks elements goes back to the positions it
// picked, with zeros elsewhere. Slices spread the gradient out with zero
// blocks (concat and reshape, no scatter); gathers compare the indices with
// an iota (a one-hot mask) and sum what each position received, the
// gather's one-hot mask meeting the gradient in a matmul.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

/// `value` with dimension `dim` of size `size` split in two: (size, 1).
static Value appendUnitDim(OpBuilder &b, Location loc, Value value,
                           int64_t dim) {
  SmallVector<int64_t> shape(typeOf(value).getShape());
  shape.insert(shape.begin() + dim + 1, 1);
  return reshape(b, loc, value, typeOf(value).clone(shape));
}

/// `value` with `before` zeros in front of it and `after` behind it along
/// `dim`.
static Value padWithZeros(OpBuilder &b, Location loc, Value value, int64_t dim,
                          int64_t before, int64_t after) {
  RankedTensorType type = typeOf(value);
  auto zeros = [&](int64_t size) {
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = size;
    return splat(b, loc, type.clone(shape), 0.0);
  };
  SmallVector<Value, 3> pieces;
  if (before > 0)
    pieces.push_back(zeros(before));
  pieces.push_back(value);
  if (after > 0)
    pieces.push_back(zeros(after));
  if (pieces.size() == 1)
    return value;
  return ConcatOp::create(b, loc, pieces, dim);
}

/// Along `dim`, element j of `value` moved to position start + j * step of
/// a dimension of size `size` (step >= 1), zeros between and around.
static Value spread(OpBuilder &b, Location loc, Value value, int64_t dim,
                    int64_t start, int64_t step, int64_t size) {
  RankedTensorType type = typeOf(value);
  int64_t count = type.getDimSize(dim);
  if (step > 1) {
    // (count, 1) + zeros (count, step - 1) -> count * step, cut after the
    // last element.
    Value column = appendUnitDim(b, loc, value, dim);
    Value strided = padWithZeros(b, loc, column, dim + 1, 0, step - 1);
    SmallVector<int64_t> flat(type.getShape());
    flat[dim] = count * step;
    value = reshape(b, loc, strided, type.clone(flat));
    SmallVector<int64_t> starts(type.getRank(), 0), steps(type.getRank(), 1);
    SmallVector<int64_t> ends(flat);
    ends[dim] = (count - 1) * step + 1;
    value = SliceOp::create(b, loc, value, starts, ends, steps);
  }
  int64_t used = typeOf(value).getDimSize(dim);
  return padWithZeros(b, loc, value, dim, start, size - start - used);
}

namespace {
/// Each sliced dimension spread back out; a negative step first reversed.
struct SliceVJP : DifferentiableOpInterface::ExternalModel<SliceVJP, SliceOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto slice = cast<SliceOp>(op);
    Location loc = op->getLoc();
    RankedTensorType inType = typeOf(slice.getInput());
    Value g = gradients[0];
    if (typeOf(g).getNumElements() == 0) {
      operandGradients.push_back(splat(b, loc, inType, 0.0));
      return success();
    }
    int64_t rank = inType.getRank();
    for (int64_t d = 0; d < rank; ++d) {
      int64_t start = slice.getStarts()[d], step = slice.getSteps()[d];
      int64_t count = typeOf(g).getDimSize(d);
      if (step < 0) {
        SmallVector<int64_t> starts(rank, 0), ends(typeOf(g).getShape()),
            steps(rank, 1);
        starts[d] = count - 1;
        ends[d] = -1;
        steps[d] = -1;
        g = SliceOp::create(b, loc, g, starts, ends, steps);
        start -= (count - 1) * -step;
        step = -step;
      }
      g = spread(b, loc, g, d, start, step, inType.getDimSize(d));
    }
    operandGradients.push_back(g);
    return success();
  }
};

} // namespace

/// `indices` with negative entries counted from the end of a dimension of
/// `size` and clamped into range, as the gather ops read them.
static Value normalizedIndices(OpBuilder &b, Location loc, Value indices,
                               int64_t size) {
  Type element = typeOf(indices).getElementType();
  Value zero = scalar(b, loc, element, 0);
  Value negative =
      CompareOp::create(b, loc, ComparePredicate::lt, indices, zero);
  Value wrapped = WhereOp::create(
      b, loc, negative,
      AddOp::create(b, loc, indices, scalar(b, loc, element, size)), indices);
  Value atLeastZero = MaxOp::create(b, loc, wrapped, zero);
  return MinOp::create(b, loc, atLeastZero, scalar(b, loc, element, size - 1));
}

/// 0, 1, ..., size - 1 along dimension `dim` of a rank-`rank` tensor whose
/// other dimensions are 1.
static Value iota(OpBuilder &b, Location loc, Type element, int64_t size,
                  int64_t rank, int64_t dim) {
  SmallVector<int64_t> shape(rank, 1);
  shape[dim] = size;
  SmallVector<APInt> values;
  unsigned width = element.getIntOrFloatBitWidth();
  for (int64_t i = 0; i < size; ++i)
    values.push_back(APInt(width, i, /*isSigned=*/true));
  return ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get(shape, element), values));
}

namespace {
/// gather(data, indices, axis) with data A x S x B (flattened around the
/// axis) and P indices. A dense mask: for a large vocabulary (embeddings)
/// a scatter-add would do O(P x B) instead of O(S x P x B) work.
///   ddata[a, s, b] = sum_p onehot[p, s] * dy[a, p, b] = (onehot^T dy)[a]
struct GatherVJP
    : DifferentiableOpInterface::ExternalModel<GatherVJP, GatherOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto gather = cast<GatherOp>(op);
    Location loc = op->getLoc();
    RankedTensorType dataType = typeOf(gather.getData());
    RankedTensorType indexType = typeOf(gather.getIndices());
    int64_t axis = gather.getAxis(), size = dataType.getDimSize(axis);
    ArrayRef<int64_t> shape = dataType.getShape();
    int64_t outer = 1, inner = 1, count = indexType.getNumElements();
    for (int64_t d = 0; d < axis; ++d)
      outer *= shape[d];
    for (int64_t d = axis + 1; d < dataType.getRank(); ++d)
      inner *= shape[d];

    Value indices =
        reshape(b, loc, normalizedIndices(b, loc, gather.getIndices(), size),
                indexType.clone({count, 1}));
    Value hit =
        CompareOp::create(b, loc, ComparePredicate::eq, indices,
                          iota(b, loc, indexType.getElementType(), size, 2, 1));
    Type element = dataType.getElementType();
    Value oneHot = CastOp::create(b, loc, typeOf(hit).clone(element), hit);
    Value dy =
        reshape(b, loc, gradients[0], dataType.clone({outer, count, inner}));
    Value transposed = TransposeOp::create(b, loc, oneHot, {1, 0});
    Value ddata = MatMulOp::create(b, loc, transposed, dy);
    operandGradients.push_back(reshape(b, loc, ddata, dataType));
    operandGradients.push_back(Value());
    return success();
  }
};

/// gather_elements(data, indices, axis): each gradient element goes to the
/// position its index names along the axis, through a mask with one extra
/// dimension (the data's positions) summed over the indices' positions.
struct GatherElementsVJP
    : DifferentiableOpInterface::ExternalModel<GatherElementsVJP,
                                               GatherElementsOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, ValueRange gradients,
                         SmallVectorImpl<Value> &operandGradients) const {
    auto gather = cast<GatherElementsOp>(op);
    Location loc = op->getLoc();
    RankedTensorType dataType = typeOf(gather.getData());
    int64_t axis = gather.getAxis(), size = dataType.getDimSize(axis);
    int64_t rank = dataType.getRank();

    Value indices = appendUnitDim(
        b, loc, normalizedIndices(b, loc, gather.getIndices(), size), axis);
    Type indexElement = typeOf(indices).getElementType();
    Value hit =
        CompareOp::create(b, loc, ComparePredicate::eq, indices,
                          iota(b, loc, indexElement, size, rank + 1, axis + 1));
    Value dy = appendUnitDim(b, loc, gradients[0], axis);
    Value picked = selectOrZero(b, loc, hit, dy);
    Value summed = ReduceSumOp::create(b, loc, picked, ArrayRef<int64_t>{axis},
                                       /*keepdims=*/false);
    // Off the axis, indices may cover only the leading part of the data.
    for (int64_t d = 0; d < rank; ++d)
      summed =
          padWithZeros(b, loc, summed, d, 0,
                       dataType.getDimSize(d) - typeOf(summed).getDimSize(d));
    operandGradients.push_back(summed);
    operandGradients.push_back(Value());
    return success();
  }
};
} // namespace

void mlir::gs::registerIndexingVJPs(MLIRContext *context) {
  SliceOp::attachInterface<SliceVJP>(*context);
  GatherOp::attachInterface<GatherVJP>(*context);
  GatherElementsOp::attachInterface<GatherElementsVJP>(*context);
}
