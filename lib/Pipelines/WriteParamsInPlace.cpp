//===- WriteParamsInPlace.cpp - New parameter values in place --*- C++ -*-===//
//
// A parameter write is a copy of the new value into the parameter's memref
// global. Where the value comes from a linalg op that computes it into an
// empty tensor, the op can compute it into the global itself, provided no
// op between the two touches the global: then the write is the op.
//
// A read of a parameter that a later op writes is a copy of the global,
// made where it is read. The copy is not needed where every op reading it
// runs before the write, or is the op writing the global in place reading
// each element where it writes it (an elementwise update): those ops read
// the global itself.
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

/// The global that `value` reads: a bufferization.to_tensor of a
/// memref.get_global, or null.
memref::GetGlobalOp globalRead(Value value) {
  auto read = value.getDefiningOp<bufferization::ToTensorOp>();
  return read ? read.getBuffer().getDefiningOp<memref::GetGlobalOp>()
              : memref::GetGlobalOp();
}

/// Whether `value` is the global that `get` names, as a tensor: the op
/// would then read what it overwrites (unless through the copy that
/// convert-gs-params-to-memref makes of such a read).
bool readsGlobal(Value value, memref::GetGlobalOp get) {
  memref::GetGlobalOp other = globalRead(value);
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

/// The first op of `block` that writes, or may write, the global `name`
/// (or holds such an op): a materialize_in_destination into it, a writable
/// to_tensor of it (right before the op computing into it), or another use
/// of it as a buffer.
Operation *firstWrite(Block &block, StringRef name) {
  auto isGlobal = [&](Value value) {
    auto get = value.getDefiningOp<memref::GetGlobalOp>();
    return get && get.getName() == name;
  };
  for (Operation &op : block) {
    WalkResult walk = op.walk([&](Operation *nested) {
      if (auto read = dyn_cast<bufferization::ToTensorOp>(nested)) {
        if (isGlobal(read.getBuffer()) && read.getWritable())
          return WalkResult::interrupt();
        return WalkResult::advance();
      }
      if (isa<memref::GetGlobalOp>(nested))
        return WalkResult::advance();
      return llvm::any_of(nested->getOperands(), isGlobal)
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return &op;
  }
  return nullptr;
}

/// Whether `producer` computes, in place, into the global that `get` names
/// through an init whose indexing map is `map`, all its loops parallel, so
/// that reading an input through the same map reads each element of the
/// global before it overwrites it, and no other.
bool updatesElementwise(linalg::LinalgOp producer, AffineMap map,
                        memref::GetGlobalOp get) {
  if (!map.isPermutation() ||
      producer.getNumLoops() != producer.getNumParallelLoops())
    return false;
  return llvm::any_of(producer.getDpsInitsMutable(), [&](OpOperand &init) {
    return readsGlobal(init.get(), get) &&
           producer.getMatchingIndexingMap(&init) == map;
  });
}

/// Whether every use of `value` (and of views of it) only reads it, in an
/// op before `write` in `block` or in the op that `write` writes in place
/// reading elementwise.
bool onlyReadBefore(Value value, Operation *write, memref::GetGlobalOp get) {
  Block *block = write->getBlock();
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
            tensor::ExtractSliceOp, tensor::CastOp>(user)) {
      if (!onlyReadBefore(user->getResult(0), write, get))
        return false;
      continue;
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
    bool input = linalgOp && linalgOp.isDpsInput(&use);
    if (!input && !isa<tensor::ExtractOp>(user))
      return false;
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (!ancestor)
      return false;
    if (ancestor->isBeforeInBlock(write))
      continue;
    if (!input || ancestor != user ||
        !updatesElementwise(linalgOp, linalgOp.getMatchingIndexingMap(&use),
                            get))
      return false;
  }
  return true;
}

/// `value` with the reshapes that define it looked through.
Value throughReshapes(Value value) {
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  return value;
}

/// Replaces the copy that a read of a parameter made (of the global, or a
/// reshape of it, into an empty tensor) by what it copies, where
/// onlyReadBefore allows; fails otherwise.
LogicalResult elideReadCopy(linalg::CopyOp copy) {
  if (!copy.hasPureTensorSemantics())
    return failure();
  Value read = copy.getInputs().front();
  memref::GetGlobalOp get = globalRead(throughReshapes(read));
  if (!get || !throughReshapes(copy.getOutputs().front())
                   .getDefiningOp<tensor::EmptyOp>())
    return failure();
  Operation *write = firstWrite(*copy->getBlock(), get.getName());
  if (!write || !copy->isBeforeInBlock(write) ||
      !onlyReadBefore(copy.getResult(0), write, get))
    return failure();
  copy.getResult(0).replaceAllUsesWith(read);
  copy.erase();
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
    SmallVector<linalg::CopyOp> copies;
    getOperation().walk([&](linalg::CopyOp copy) { copies.push_back(copy); });
    for (linalg::CopyOp copy : copies)
      (void)elideReadCopy(copy);
  }
};
} // namespace
