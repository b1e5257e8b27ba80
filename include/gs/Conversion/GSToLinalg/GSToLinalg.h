//===- GSToLinalg.h - gs tensor ops to linalg -------------------*- C++ -*-===//

#ifndef GS_CONVERSION_GSTOLINALG_GSTOLINALG_H
#define GS_CONVERSION_GSTOLINALG_GSTOLINALG_H

#include <cstdint>

namespace mlir {
class ConversionTarget;
class Location;
class OpBuilder;
class ValueRange;
class RewritePatternSet;
class TypeConverter;
} // namespace mlir

namespace mlir::gs {

/// Patterns lowering every gs tensor operation to linalg, tensor, arith and
/// math; `converter` maps the (tensor) types of their operands. With
/// `deviceCollectives`, gs.all_reduce reduces device buffers (the
/// convert-gs-to-linalg option of that name).
void populateGSToLinalgConversionPatterns(TypeConverter &converter,
                                          RewritePatternSet &patterns,
                                          bool deviceCollectives = false);

/// Marks the gs tensor operations illegal and their targets legal.
void configureGSToLinalgTarget(ConversionTarget &target);

/// Below this many positions per image (a convolution's output, a strided
/// transposed convolution's input), the images of a convolution computed
/// as a GEMM share one: a GEMM per image would be a few register panels
/// wide (8 of 32 columns at most).
constexpr int64_t kConvBatchImagesBelow = 256;

/// The body of a float GEMM-like linalg.generic (ins a, b; out acc):
/// yields acc + a * b, a and b widened to the accumulator's type.
void buildMultiplyAddBody(OpBuilder &b, Location loc, ValueRange args);

} // namespace mlir::gs

#endif // GS_CONVERSION_GSTOLINALG_GSTOLINALG_H
