//===- Utils.cpp - Shared pieces of the gs-to-linalg lowering --*- C++ -*-===//

#include "Utils.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

#include <limits>

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::to_linalg;

Value to_linalg::emptyTensor(OpBuilder &b, Location loc,
                             RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value to_linalg::scalarConstant(OpBuilder &b, Location loc, Type type,
                                double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, floatType,
                                     b.getFloatAttr(floatType, value));
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc, static_cast<int64_t>(value));
  return arith::ConstantOp::create(
      b, loc, type, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Type to_linalg::signlessType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.clone(signlessType(tensor.getElementType()));
  if (auto integer = dyn_cast<IntegerType>(type);
      integer && !integer.isSignless())
    return IntegerType::get(type.getContext(), integer.getWidth());
  return type;
}

Value to_linalg::lowestValue(OpBuilder &b, Location loc, Type type) {
  if (isa<FloatType>(type))
    return scalarConstant(b, loc, type,
                          -std::numeric_limits<double>::infinity());
  auto intType = cast<IntegerType>(type);
  unsigned width = intType.getWidth();
  Type signless = signlessType(type);
  return arith::ConstantOp::create(
      b, loc, signless,
      b.getIntegerAttr(signless, intType.isUnsigned()
                                     ? APInt::getZero(width)
                                     : APInt::getSignedMinValue(width)));
}

Value to_linalg::filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                              double value) {
  Value scalar = scalarConstant(b, loc, type.getElementType(), value);
  return linalg::FillOp::create(b, loc, scalar, emptyTensor(b, loc, type))
      .getResult(0);
}

Value to_linalg::convertScalar(OpBuilder &b, Location loc, Value value,
                               Type from, Type to) {
  // Booleans read as unsigned: true is 1.
  bool fromUnsigned = from.isUnsignedInteger() || from.isInteger(1);
  bool toUnsigned = to.isUnsignedInteger();
  from = signlessType(from);
  to = signlessType(to);
  if (from == to)
    return value;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat)
    return toFloat.getWidth() > fromFloat.getWidth()
               ? arith::ExtFOp::create(b, loc, to, value).getResult()
               : arith::TruncFOp::create(b, loc, to, value).getResult();
  if (fromFloat) {
    if (to.isInteger(1))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   scalarConstant(b, loc, from, 0.0));
    return toUnsigned ? arith::FPToUIOp::create(b, loc, to, value).getResult()
                      : arith::FPToSIOp::create(b, loc, to, value).getResult();
  }
  if (toFloat)
    return fromUnsigned
               ? arith::UIToFPOp::create(b, loc, to, value).getResult()
               : arith::SIToFPOp::create(b, loc, to, value).getResult();
  if (to.isInteger(1))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                 scalarConstant(b, loc, from, 0));
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (toWidth == fromWidth)
    return value;
  if (toWidth < fromWidth)
    return arith::TruncIOp::create(b, loc, to, value);
  if (fromUnsigned)
    return arith::ExtUIOp::create(b, loc, to, value);
  return arith::ExtSIOp::create(b, loc, to, value);
}

SmallVector<utils::IteratorType> to_linalg::parallelIterators(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

/// The indexing map of an operand broadcast NumPy-style to `resultShape`.
static AffineMap broadcastMap(MLIRContext *context, ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> resultShape) {
  int64_t rank = resultShape.size();
  int64_t offset = rank - static_cast<int64_t>(shape.size());
  SmallVector<AffineExpr> exprs;
  for (auto [i, size] : llvm::enumerate(shape)) {
    int64_t d = offset + i;
    exprs.push_back(size == 1 && resultShape[d] != 1
                        ? getAffineConstantExpr(0, context)
                        : getAffineDimExpr(d, context));
  }
  return AffineMap::get(rank, 0, exprs, context);
}

Value to_linalg::elementwise(OpBuilder &b, Location loc,
                             RankedTensorType resultType, ValueRange operands,
                             BodyBuilder body) {
  MLIRContext *context = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value operand : operands)
    maps.push_back(broadcastMap(context, tensorTypeOf(operand).getShape(),
                                resultType.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, operands, emptyTensor(b, loc, resultType), maps,
      parallelIterators(resultType.getRank()),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, result);
      });
  return generic.getResult(0);
}

Value to_linalg::castTensor(OpBuilder &b, Location loc, Value value,
                            Type elementType) {
  RankedTensorType type = tensorTypeOf(value);
  if (type.getElementType() == signlessType(elementType))
    return value;
  return elementwise(b, loc, signlessType(type.clone(elementType)), value,
                     [&](OpBuilder &nb, Location nloc, ValueRange args) {
                       return convertScalar(nb, nloc, args[0], elementType);
                     });
}

Value to_linalg::reduce(
    OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> axes, Value init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  Type accType = init.getType();
  RankedTensorType type = tensorTypeOf(value);
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (reduced)
      continue;
    shape.push_back(type.getDimSize(d));
    outExprs.push_back(b.getAffineDimExpr(d));
  }
  auto resultType = RankedTensorType::get(shape, accType);
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, outExprs, b.getContext())};
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, value,
      linalg::FillOp::create(b, loc, init, emptyTensor(b, loc, resultType))
          .getResult(0),
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value element = convertScalar(nb, nloc, args[0], accType);
        linalg::YieldOp::create(nb, nloc, combine(nb, nloc, element, args[1]));
      });
  return generic.getResult(0);
}

Value to_linalg::reshapeTo(OpBuilder &b, Location loc, Value value,
                           RankedTensorType type) {
  RankedTensorType source = tensorTypeOf(value);
  if (source.getShape() == type.getShape())
    return value;
  // Nothing to move (reassociations cannot group zero-sized dimensions).
  if (type.getNumElements() == 0)
    return emptyTensor(b, loc, type);
  // To or from a scalar (all sizes 1): no dimension groups.
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, value,
                                           ArrayRef<ReassociationIndices>{});
  if (source.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, type, value,
                                         ArrayRef<ReassociationIndices>{});
  if (std::optional<SmallVector<ReassociationIndices>> groups =
          getReassociationIndicesForReshape(source, type)) {
    if (source.getRank() > type.getRank())
      return tensor::CollapseShapeOp::create(b, loc, type, value, *groups);
    return tensor::ExpandShapeOp::create(b, loc, type, value, *groups);
  }
  // Not a single collapse or expand: go through one dimension.
  auto flat =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  Value collapsed = reshapeTo(b, loc, value, flat);
  return reshapeTo(b, loc, collapsed, type);
}

Value to_linalg::pad(OpBuilder &b, Location loc, Value value,
                     ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                     Value padValue) {
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return value;
  RankedTensorType type = tensorTypeOf(value);
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> lowSizes, highSizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    shape.push_back(type.getDimSize(d) + low[d] + high[d]);
    lowSizes.push_back(b.getIndexAttr(low[d]));
    highSizes.push_back(b.getIndexAttr(high[d]));
  }
  return tensor::PadOp::create(b, loc, type.clone(shape), value, lowSizes,
                               highSizes, padValue);
}
