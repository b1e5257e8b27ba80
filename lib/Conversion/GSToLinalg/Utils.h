//===- Utils.h - Shared pieces of the gs-to-linalg lowering -----*- C++ -*-===//

#ifndef GS_LIB_CONVERSION_GSTOLINALG_UTILS_H
#define GS_LIB_CONVERSION_GSTOLINALG_UTILS_H

#include "gs/Conversion/ScalarArith.h"
#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

namespace mlir::gs::to_linalg {

using BodyBuilder =
    function_ref<Value(OpBuilder &b, Location loc, ValueRange args)>;

/// tensor.empty of `type`.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type);

/// A tensor of `type` filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   double value);

/// A scalar constant of a float or integer type.
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value);

/// `type` (an element or tensor type) as it is after lowering: arith and
/// linalg compute on signless integers, so unsigned elements become
/// signless ones of their width. The gs op a value comes from says how to
/// read its bits.
Type signlessType(Type type);
inline RankedTensorType signlessType(RankedTensorType type) {
  return cast<RankedTensorType>(signlessType(Type(type)));
}

/// True if the elements of `type` (an element or tensor type) are unsigned
/// integers.
inline bool isUnsignedElement(Type type) {
  return getElementTypeOrSelf(type).isUnsignedInteger();
}

/// The least value of an element type, -inf for floats, as a constant of
/// its signless type.
Value lowestValue(OpBuilder &b, Location loc, Type type);

/// Converts a scalar to another element type with the semantics of
/// gs.cast: IEEE round-to-nearest-even between floats, truncation toward
/// zero from float to integer, `x != 0` to i1, and between integers
/// widening by the signedness of `from` and narrowing by dropping high bits.
/// `from` and `to` are the gs element types (possibly unsigned); `value`
/// and the result have their signless types.
Value convertScalar(OpBuilder &b, Location loc, Value value, Type from,
                    Type to);
/// The same from `value`'s own (signless or float) type.
inline Value convertScalar(OpBuilder &b, Location loc, Value value, Type to) {
  return convertScalar(b, loc, value, value.getType(), to);
}

/// A linalg.generic producing `resultType` from operands that broadcast to
/// it NumPy-style (a size-1 or missing dimension repeats); `body` maps the
/// operands' scalars to the result's.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange operands, BodyBuilder body);

/// `value` converted elementwise to `elementType` (a no-op if it has it).
Value castTensor(OpBuilder &b, Location loc, Value value, Type elementType);

/// Reduces `value` over `axes` (dropping them) with `combine`, starting
/// from `init`, a scalar of the accumulator's type.
Value reduce(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> axes,
             Value init,
             function_ref<Value(OpBuilder &, Location, Value, Value)> combine);

/// Reshapes between static shapes with collapse/expand_shape.
Value reshapeTo(OpBuilder &b, Location loc, Value value, RankedTensorType type);

/// Pads `value` with `low`/`high` elements of `padValue` per dimension.
Value pad(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> low,
          ArrayRef<int64_t> high, Value padValue);

/// The accumulation type of a computation on `elementType`: f32 for f16.
inline Type accumulationType(Type elementType) {
  return elementType.isF16() ? Float32Type::get(elementType.getContext())
                             : elementType;
}

/// The type long sums (reductions, normalization statistics, pooling over
/// whole images) accumulate in: f32 for f16, f64 for f32 and f64, so that
/// sums of 10^4-10^5 f32 terms keep f32 accuracy; integers themselves.
inline Type sumType(Type elementType) {
  MLIRContext *context = elementType.getContext();
  if (!isa<FloatType>(elementType))
    return elementType;
  if (elementType.isF16())
    return Float32Type::get(context);
  return Float64Type::get(context);
}

/// The type normalization statistics and losses are computed in: f32, or
/// f64 for f64 data.
inline Type statisticsType(Type elementType) {
  return elementType.isF64() ? elementType
                             : Float32Type::get(elementType.getContext());
}

inline RankedTensorType tensorTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Identity and parallel iterator lists for linalg.generic.
SmallVector<utils::IteratorType> parallelIterators(int64_t rank);

//===----------------------------------------------------------------------===//
// Pattern families
//===----------------------------------------------------------------------===//

void populateElementwisePatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns);
void populateContractionPatterns(TypeConverter &converter,
                                 RewritePatternSet &patterns);
void populateNormalizationPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns);
void populatePoolingPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns);
void populateShapePatterns(TypeConverter &converter,
                           RewritePatternSet &patterns);
void populateReductionPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns);
/// !gs.stats as the tensor<7xf64> that Scaling.cpp fills and reads.
void addStatsTypeConversion(TypeConverter &converter);
/// Whether `op` casts a !gs.stats (to its lowered type): such casts are
/// resolved by the scaling patterns.
bool isStatsLowering(UnrealizedConversionCastOp op);
void populateScalingPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns);
/// gs.all_reduce and gs.world_size: calls of the runtime's collectives,
/// on device buffers with `deviceCollectives`.
void populateCollectivePatterns(TypeConverter &converter,
                                RewritePatternSet &patterns,
                                bool deviceCollectives);
void populateOptimizerPatterns(TypeConverter &converter,
                               RewritePatternSet &patterns);

} // namespace mlir::gs::to_linalg

#endif // GS_LIB_CONVERSION_GSTOLINALG_UTILS_H
