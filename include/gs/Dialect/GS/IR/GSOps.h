//===- GSOps.h - GradScale operations ---------------------------*- C++ -*-===//

#ifndef GS_DIALECT_GS_IR_GSOPS_H
#define GS_DIALECT_GS_IR_GSOPS_H

#include "gs/Dialect/GS/IR/GSAttrs.h"
#include "gs/Dialect/GS/IR/GSDialect.h"
#include "gs/Dialect/GS/IR/GSTypes.h"
#include "gs/Support/Telemetry.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gs {

/// On a train or eval step function: the index of the result that is the
/// loss (a function cloned from the one a gs.training trains returns its
/// results in the same order).
constexpr llvm::StringLiteral kLossResultAttr = "gs.loss_result";

/// The state behind gs.param symbols, for memory effects.
struct ParamResource : public SideEffects::Resource::Base<ParamResource> {
  StringRef getName() final { return "gs.param"; }
};

/// Per-spatial-dimension geometry of a convolution or pooling op, with
/// defaults filled in.
struct WindowGeometry {
  SmallVector<int64_t> strides;
  SmallVector<int64_t> padsBegin;
  SmallVector<int64_t> padsEnd;
  SmallVector<int64_t> dilations;
};

/// Result type of a NumPy-broadcasting binary op; emits an error at `loc`
/// when the shapes are incompatible.
LogicalResult inferBroadcastResultType(std::optional<Location> loc,
                                       StringRef opName, Type lhs, Type rhs,
                                       SmallVectorImpl<Type> &inferred);

/// Reports result types that differ from the inferred ones.
LogicalResult reportResultTypeMismatch(Operation *op, TypeRange inferred);

/// Verifies an op whose shape rules live in its `inferReturnTypes`: running
/// inference reports the first broken rule with an op-specific message, then
/// the declared result types are compared with the inferred ones.
template <typename OpTy> LogicalResult verifyByInference(OpTy op) {
  SmallVector<Type> inferred;
  if (failed(OpTy::inferReturnTypes(op.getContext(), op.getLoc(),
                                    typename OpTy::Adaptor(op), inferred)))
    return failure();
  if (!OpTy::isCompatibleReturnTypes(inferred, op->getResultTypes()))
    return reportResultTypeMismatch(op, inferred);
  return success();
}

} // namespace mlir::gs

#include "gs/Dialect/GS/IR/GSOpInterfaces.h.inc"

#define GET_OP_CLASSES
#include "gs/Dialect/GS/IR/GSOps.h.inc"

#endif // GS_DIALECT_GS_IR_GSOPS_H
