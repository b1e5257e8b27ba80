//===- Passes.h - Transformations of the gs dialect -------------*- C++ -*-===//

#ifndef GS_DIALECT_GS_TRANSFORMS_PASSES_H
#define GS_DIALECT_GS_TRANSFORMS_PASSES_H

#include "gs/Dialect/GS/IR/GSAttrs.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
namespace arith {
class ArithDialect;
} // namespace arith
namespace scf {
class SCFDialect;
} // namespace scf
namespace tensor {
class TensorDialect;
} // namespace tensor
} // namespace mlir

namespace mlir::gs {
class BackwardOp;

/// gs-loss-scaling's `mode`.
enum class LossScalingMode { None, Fixed, Dynamic };

/// gs-gradient-scaling's `relu-mask`: where the half-normal model halves the
/// variance of a contraction's incoming gradient.
enum class ReluMaskRule { Structural, Always, Never };

/// The choices of the rounding options, for their --help and parsing.
llvm::cl::ValuesClass roundingValues();
/// The choices of the scale-model options (half_normal only at
/// contractions).
llvm::cl::ValuesClass scaleModelValues(bool withHalfNormal);
/// The choices of `relu-mask`.
llvm::cl::ValuesClass reluMaskValues();

#define GEN_PASS_DECL
#include "gs/Dialect/GS/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gs/Dialect/GS/Transforms/Passes.h.inc"

/// Fills the empty region of `backward` with the gradients of its `of`
/// value with respect to its `wrt` values (what gs-autodiff does to each
/// gradient request), starting from the region's argument, the seed;
/// reports failures on the op.
LogicalResult differentiate(BackwardOp backward);

/// Attaches DifferentiableOpInterface (the vector-Jacobian products) to the
/// gs ops that have one.
void registerDifferentiableOpInterfaceModels(DialectRegistry &registry);

} // namespace mlir::gs

#endif // GS_DIALECT_GS_TRANSFORMS_PASSES_H
