//===- TrainingState.h - State parameters the passes create -----*- C++ -*-===//
//
// Training state that lives across steps as `state` parameters: the step
// counter and optimizer moments (gs-train-step), loss and gradient scales,
// counters and telemetry (the scaling passes).
//
//===----------------------------------------------------------------------===//

#ifndef GS_DIALECT_GS_TRANSFORMS_TRAININGSTATE_H
#define GS_DIALECT_GS_TRANSFORMS_TRAININGSTATE_H

#include "gs/Dialect/GS/IR/GSOps.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::gs {

/// A new `state` parameter `name` of `type` filled with `fill`, created
/// before `anchor`; an error naming `purpose` where the symbol is taken.
FailureOr<ParamOp> createState(SymbolTable &symbols, Operation *anchor,
                               StringRef name, RankedTensorType type,
                               Attribute fill, StringRef purpose);

/// The state parameter `name` of `type`, created with zeros before
/// `anchor` when missing; an error where the symbol is something else.
FailureOr<ParamOp> getOrCreateState(SymbolTable &symbols, Operation *anchor,
                                    StringRef name, RankedTensorType type);

} // namespace mlir::gs

#endif // GS_DIALECT_GS_TRANSFORMS_TRAININGSTATE_H
