//===- Passes.h - Transformations of the gs dialect -------------*- C++ -*-===//

#ifndef GS_DIALECT_GS_TRANSFORMS_PASSES_H
#define GS_DIALECT_GS_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
namespace arith {
class ArithDialect;
} // namespace arith
namespace tensor {
class TensorDialect;
} // namespace tensor
} // namespace mlir

namespace mlir::gs {

#define GEN_PASS_DECL
#include "gs/Dialect/GS/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gs/Dialect/GS/Transforms/Passes.h.inc"

/// Attaches DifferentiableOpInterface (the vector-Jacobian products) to the
/// gs ops that have one.
void registerDifferentiableOpInterfaceModels(DialectRegistry &registry);

} // namespace mlir::gs

#endif // GS_DIALECT_GS_TRANSFORMS_PASSES_H
