//===- GSDialect.h - GradScale dialect --------------------------*- C++ -*-===//

#ifndef GS_DIALECT_GS_IR_GSDIALECT_H
#define GS_DIALECT_GS_IR_GSDIALECT_H

#include "mlir/IR/Dialect.h"

#include "gs/Dialect/GS/IR/GSDialect.h.inc"

#endif // GS_DIALECT_GS_IR_GSDIALECT_H
