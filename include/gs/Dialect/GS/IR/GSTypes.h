//===- GSTypes.h - GradScale types ------------------------------*- C++ -*-===//

#ifndef GS_DIALECT_GS_IR_GSTYPES_H
#define GS_DIALECT_GS_IR_GSTYPES_H

#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "gs/Dialect/GS/IR/GSTypes.h.inc"

#endif // GS_DIALECT_GS_IR_GSTYPES_H
