//===- VJPUtils.cpp - Building blocks of vector-Jacobian products -*- C++ -*-=//

#include "VJPUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::gs;

Value vjp::splat(OpBuilder &b, Location loc, RankedTensorType type,
                 double value) {
  Type element = type.getElementType();
  Attribute scalarAttr =
      isa<FloatType>(element)
          ? Attribute(b.getFloatAttr(element, value))
          : Attribute(b.getIntegerAttr(element, static_cast<int64_t>(value)));
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, scalarAttr));
}

Value vjp::scalar(OpBuilder &b, Location loc, Type elementType, double value) {
  return splat(b, loc, RankedTensorType::get({}, elementType), value);
}

Value vjp::reshape(OpBuilder &b, Location loc, Value value,
                   RankedTensorType type) {
  if (typeOf(value).getShape() == type.getShape())
    return value;
  return ReshapeOp::create(b, loc, typeOf(value).clone(type.getShape()), value);
}

Value vjp::castLike(OpBuilder &b, Location loc, Value value,
                    RankedTensorType type) {
  RankedTensorType from = typeOf(value);
  if (from.getElementType() == type.getElementType())
    return value;
  return CastOp::create(b, loc, from.clone(type.getElementType()), value);
}

Value vjp::unbroadcast(OpBuilder &b, Location loc, Value gradient,
                       RankedTensorType target) {
  ArrayRef<int64_t> shape = typeOf(gradient).getShape();
  int64_t leading = shape.size() - target.getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (d < leading || (target.getDimSize(d - leading) == 1 && shape[d] != 1))
      axes.push_back(d);
  Value summed = gradient;
  if (!axes.empty())
    summed = ReduceSumOp::create(b, loc, gradient, b.getDenseI64ArrayAttr(axes),
                                 /*keepdims=*/nullptr);
  return castLike(b, loc, reshape(b, loc, summed, target), target);
}

Value vjp::expandReduced(OpBuilder &b, Location loc, Value value,
                         RankedTensorType input, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept(input.getShape());
  for (int64_t axis : axes)
    kept[axis] = 1;
  Value withOnes = reshape(b, loc, value,
                           RankedTensorType::get(kept, input.getElementType()));
  if (ArrayRef<int64_t>(kept) == input.getShape())
    return withOnes;
  return ExpandOp::create(b, loc, typeOf(value).clone(input.getShape()),
                          withOnes);
}

Value vjp::selectOrZero(OpBuilder &b, Location loc, Value mask, Value value) {
  Value zero = scalar(b, loc, typeOf(value).getElementType(), 0.0);
  return WhereOp::create(b, loc, mask, value, zero);
}

SmallVector<int64_t> vjp::nonChannelAxes(int64_t rank) {
  SmallVector<int64_t> axes = {0};
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  return axes;
}
