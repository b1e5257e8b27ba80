//===- MoveDefinitions.cpp - Initial values moved up to a new user --------===//

#include "MoveDefinitions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;

bool gs::moveDefinitionsAbove(ArrayRef<Value> values, Operation *point,
                              DominanceInfo &dominance) {
  // The ops to move, operands first.
  SetVector<Operation *> moved;
  std::function<bool(Value)> reachable = [&](Value value) {
    if (dominance.properlyDominates(value, point))
      return true;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != point->getBlock() ||
        !isa<tensor::EmptyOp, arith::ConstantOp, linalg::FillOp>(def))
      return false;
    if (!llvm::all_of(def->getOperands(), reachable))
      return false;
    moved.insert(def);
    return true;
  };
  if (!llvm::all_of(values, reachable))
    return false;
  for (Operation *op : moved)
    op->moveBefore(point);
  return true;
}
