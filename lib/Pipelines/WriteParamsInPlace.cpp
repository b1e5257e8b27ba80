//===- WriteParamsInPlace.cpp - New parameter values in place --*- C++ -*-===//
//
// A parameter write is a copy of the new value into the parameter's memref
// global. Where the value comes from a linalg op that computes it into an
// empty tensor, the op can compute it into the global itself, provided no
// op between the two touches the global: then the write is the op.
//
//===----------------------------------------------------------------------===//

#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::gs {
#define GEN_PASS_DEF_WRITEPARAMSINPLACE
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// Whether an op from `from` (excluded) to `to` (excluded), in their block,
/// or one nested in them, uses the global that `get` names: reads `get`
/// or gets the global anew.
bool globalUsedBetween(Operation *from, Operation *to,
                       memref::GetGlobalOp get) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    WalkResult walk = op->walk([&](Operation *nested) {
      auto other = dyn_cast<memref::GetGlobalOp>(nested);
      bool uses = (other && other != get && other.getName() == get.getName()) ||
                  llvm::is_contained(nested->getOperands(), get.getResult());
      return uses ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return true;
  }
  return false;
}

/// Whether `value` is the global that `get` names, as a tensor: the op
/// would then read what it overwrites (unless through the copy that
/// convert-gs-params-to-memref makes of such a read).
bool readsGlobal(Value value, memref::GetGlobalOp get) {
  auto read = value.getDefiningOp<bufferization::ToTensorOp>();
  if (!read)
    return false;
  auto other = read.getBuffer().getDefiningOp<memref::GetGlobalOp>();
  return other && other.getName() == get.getName();
}

/// Makes the linalg op computing the value `write` copies into a global
/// compute it there; fails if it cannot.
LogicalResult computeInPlace(bufferization::MaterializeInDestinationOp write) {
  auto get = write.getDest().getDefiningOp<memref::GetGlobalOp>();
  auto value = dyn_cast<OpResult>(write.getSource());
  if (!get || !value)
    return failure();
  auto producer = dyn_cast<linalg::LinalgOp>(value.getOwner());
  if (!producer || !producer.hasPureTensorSemantics() || !value.hasOneUse() ||
      producer->getBlock() != write->getBlock())
    return failure();
  OpOperand *init = producer.getDpsInitOperand(value.getResultNumber());
  auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
  if (!empty || producer.payloadUsesValueFromOperand(init) ||
      empty.getType() != value.getType() ||
      llvm::any_of(producer.getDpsInputs(),
                   [&](Value input) { return readsGlobal(input, get); }) ||
      globalUsedBetween(producer, write, get))
    return failure();
  OpBuilder b(producer);
  auto global = memref::GetGlobalOp::create(b, get.getLoc(), get.getType(),
                                            get.getName());
  Value destination = bufferization::ToTensorOp::create(
      b, write.getLoc(), value.getType(), global, /*restrict=*/b.getUnitAttr(),
      /*writable=*/b.getUnitAttr());
  init->set(destination);
  // One value for the global, so that the copy is of a buffer into itself.
  write.getDestMutable().assign(global);
  // The write stays, the result's one use (linalg on tensors has no side
  // effects); it now copies the global into itself, which bufferization
  // folds away.
  return success();
}

struct WriteParamsInPlacePass
    : gs::impl::WriteParamsInPlaceBase<WriteParamsInPlacePass> {
  void runOnOperation() override {
    SmallVector<bufferization::MaterializeInDestinationOp> writes;
    getOperation().walk([&](bufferization::MaterializeInDestinationOp write) {
      if (isa<BaseMemRefType>(write.getDest().getType()))
        writes.push_back(write);
    });
    for (bufferization::MaterializeInDestinationOp write : writes)
      (void)computeInPlace(write);
  }
};
} // namespace
