//===- GSToLinalg.h - gs tensor ops to linalg -------------------*- C++ -*-===//

#ifndef GS_CONVERSION_GSTOLINALG_GSTOLINALG_H
#define GS_CONVERSION_GSTOLINALG_GSTOLINALG_H

namespace mlir {
class ConversionTarget;
class RewritePatternSet;
class TypeConverter;
} // namespace mlir

namespace mlir::gs {

/// Patterns lowering every gs tensor operation to linalg, tensor, arith and
/// math; `converter` maps the (tensor) types of their operands.
void populateGSToLinalgConversionPatterns(TypeConverter &converter,
                                          RewritePatternSet &patterns);

/// Marks the gs tensor operations illegal and their targets legal.
void configureGSToLinalgTarget(ConversionTarget &target);

} // namespace mlir::gs

#endif // GS_CONVERSION_GSTOLINALG_GSTOLINALG_H
