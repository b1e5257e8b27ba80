//===- MoveDefinitions.h - Initial values moved up to a new user -*- C++ -*-===//

#ifndef GS_LIB_PIPELINES_MOVEDEFINITIONS_H
#define GS_LIB_PIPELINES_MOVEDEFINITIONS_H

#include "mlir/IR/Dominance.h"

namespace mlir::gs {
/// Moves the definitions of `values` that `point` does not dominate above
/// `point`, with those of their operands, where each is in `point`'s block
/// and cheap to move: an empty tensor, a constant or a fill (an op's
/// output initial values). False, moving nothing, where one is not.
bool moveDefinitionsAbove(ArrayRef<Value> values, Operation *point,
                          DominanceInfo &dominance);
} // namespace mlir::gs

#endif // GS_LIB_PIPELINES_MOVEDEFINITIONS_H
