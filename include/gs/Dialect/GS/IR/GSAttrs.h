//===- GSAttrs.h - GradScale attributes and enums ---------------*- C++ -*-===//

#ifndef GS_DIALECT_GS_IR_GSATTRS_H
#define GS_DIALECT_GS_IR_GSATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "gs/Dialect/GS/IR/GSEnums.h.inc"

#include "gs/Dialect/GS/IR/GSAttrInterfaces.h.inc"

namespace mlir::gs {
/// Parses a double-precision attribute parameter (an integer or float
/// literal).
FailureOr<APFloat> parseF64Parameter(AsmParser &parser);
} // namespace mlir::gs

#define GET_ATTRDEF_CLASSES
#include "gs/Dialect/GS/IR/GSAttrs.h.inc"

#endif // GS_DIALECT_GS_IR_GSATTRS_H
