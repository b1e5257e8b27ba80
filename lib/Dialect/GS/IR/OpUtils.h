//===- OpUtils.h - Helpers shared by the gs op implementations -*- C++ -*-===//

#ifndef GS_LIB_DIALECT_GS_IR_OPUTILS_H
#define GS_LIB_DIALECT_GS_IR_OPUTILS_H

#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/IR/Diagnostics.h"

#include <string>

namespace mlir::gs {

/// Reports a broken shape rule of `OpTy` from type inference, worded like
/// `emitOpError` so that inference and verification read the same.
template <typename OpTy, typename... Args>
LogicalResult inferError(std::optional<Location> loc, Args &&...args) {
  return emitOptionalError(loc, "'", OpTy::getOperationName(), "' op ",
                           std::forward<Args>(args)...);
}

/// "2x3x4" (or "scalar" for rank 0), for diagnostics.
std::string formatShape(ArrayRef<int64_t> shape);

inline ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}
inline ArrayRef<int64_t> shapeOf(Type type) {
  return cast<RankedTensorType>(type).getShape();
}
inline Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

/// Checks that `axis` indexes a tensor of rank `rank` (0 <= axis < rank, or
/// <= rank with `inclusive`). Returns false and reports otherwise.
template <typename OpTy>
LogicalResult checkAxis(std::optional<Location> loc, StringRef name,
                        int64_t axis, int64_t rank, bool inclusive = false) {
  int64_t limit = inclusive ? rank : rank - 1;
  if (axis < 0 || axis > limit)
    return inferError<OpTy>(loc, name, " ", axis, " is out of range [0, ",
                            limit, "] for rank ", rank);
  return success();
}

/// Checks a list of axes: each in [0, rank), strictly increasing.
template <typename OpTy>
LogicalResult checkAxesList(std::optional<Location> loc, StringRef name,
                            ArrayRef<int64_t> axes, int64_t rank) {
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (failed(checkAxis<OpTy>(loc, name, axis, rank)))
      return failure();
    if (i > 0 && axes[i - 1] >= axis)
      return inferError<OpTy>(loc, name,
                              " must be sorted and free of duplicates");
  }
  return success();
}

/// Fills in the ONNX defaults of a window's geometry (stride 1, no padding,
/// dilation 1) without checking it.
WindowGeometry makeGeometry(int64_t spatialRank, ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> pads,
                            ArrayRef<int64_t> dilations);

/// Checks the geometry attributes of a windowed op and returns them with
/// defaults filled in.
template <typename OpTy>
FailureOr<WindowGeometry>
resolveGeometry(std::optional<Location> loc, int64_t spatialRank,
                ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                ArrayRef<int64_t> dilations) {
  auto checkCount = [&](StringRef name, ArrayRef<int64_t> values,
                        int64_t expected) -> LogicalResult {
    if (!values.empty() && static_cast<int64_t>(values.size()) != expected)
      return inferError<OpTy>(loc, "expects ", expected, " '", name,
                              "' values for ", spatialRank,
                              " spatial dimensions, got ", values.size());
    return success();
  };
  if (failed(checkCount("strides", strides, spatialRank)) ||
      failed(checkCount("pads", pads, 2 * spatialRank)) ||
      failed(checkCount("dilations", dilations, spatialRank)))
    return failure();
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }))
    return inferError<OpTy>(loc, "expects strides >= 1");
  if (llvm::any_of(dilations, [](int64_t d) { return d < 1; }))
    return inferError<OpTy>(loc, "expects dilations >= 1");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return inferError<OpTy>(loc, "expects pads >= 0");
  return makeGeometry(spatialRank, strides, pads, dilations);
}

/// An optional array attribute's values, empty when absent.
inline ArrayRef<int64_t> orEmpty(std::optional<ArrayRef<int64_t>> values) {
  return values.value_or(ArrayRef<int64_t>());
}

/// Result types of contraction-like ops may widen f16 to f32.
bool isCompatibleContractionResult(TypeRange inferred, TypeRange actual);

} // namespace mlir::gs

#endif // GS_LIB_DIALECT_GS_IR_OPUTILS_H
