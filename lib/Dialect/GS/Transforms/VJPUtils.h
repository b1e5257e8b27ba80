//===- VJPUtils.h - Building blocks of vector-Jacobian products -*- C++ -*-===//

#ifndef GS_DIALECT_GS_TRANSFORMS_VJPUTILS_H
#define GS_DIALECT_GS_TRANSFORMS_VJPUTILS_H

#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::gs::vjp {

/// A constant of `type` with every element `value`.
Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value);

/// A rank-0 constant of `elementType`, which broadcasts against any tensor.
Value scalar(OpBuilder &b, Location loc, Type elementType, double value);

/// `value` reshaped to `type` (the same element count); itself if equal.
Value reshape(OpBuilder &b, Location loc, Value value, RankedTensorType type);

/// `value` cast to the element type of `type` where it differs.
Value castLike(OpBuilder &b, Location loc, Value value, RankedTensorType type);

/// The gradient of an operand that NumPy broadcasting expanded to the
/// result: `gradient` summed over the dimensions broadcasting added or
/// stretched, then reshaped (and cast) to the operand's type `target`.
Value unbroadcast(OpBuilder &b, Location loc, Value gradient,
                  RankedTensorType target);

/// `value` (the shape of `input` with `axes` reduced away, or kept as 1s)
/// broadcast back to the shape of `input`.
Value expandReduced(OpBuilder &b, Location loc, Value value,
                    RankedTensorType input, ArrayRef<int64_t> axes);

/// 0, 2, 3, ..., rank - 1: every axis of an N x C x ... tensor but the
/// channels.
SmallVector<int64_t> nonChannelAxes(int64_t rank);

/// `mask ? value : 0`, broadcasting.
Value selectOrZero(OpBuilder &b, Location loc, Value mask, Value value);

/// The tensor type of `value`.
inline RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Whether `value` is a float tensor, the values that carry gradients.
inline bool isDifferentiable(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// Whether `value` is an FP16 tensor.
inline bool isHalf(Value value) {
  return isDifferentiable(value) && typeOf(value).getElementType().isF16();
}

/// The ops that multiply and accumulate (in FP32 for FP16 operands).
inline bool isContraction(Operation *op) {
  return isa<GemmOp, MatMulOp, ConvOp, ConvTransposeOp>(op);
}

} // namespace mlir::gs::vjp

namespace mlir::gs {
// The families' models, registered together by
// registerDifferentiableOpInterfaceModels.
void registerConvolutionVJPs(MLIRContext *context);
void registerElementwiseVJPs(MLIRContext *context);
void registerIndexingVJPs(MLIRContext *context);
void registerLinearAlgebraVJPs(MLIRContext *context);
void registerLossVJPs(MLIRContext *context);
void registerNormalizationVJPs(MLIRContext *context);
void registerShapeVJPs(MLIRContext *context);
} // namespace mlir::gs

#endif // GS_DIALECT_GS_TRANSFORMS_VJPUTILS_H
