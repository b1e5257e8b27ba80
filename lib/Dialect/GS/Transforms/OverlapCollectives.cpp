//===- OverlapCollectives.cpp - All-reduces as early as they can go -------===//
//
// gs-data-parallel sums each gradient after the backward pass (where the
// scaling passes unscale it) and each statistics record just before the
// decision reading it. Lowered, an
// all-reduce starts where it stands and is waited for at its result's first
// use, so moving it up to where its input is ready lets the transport run
// it beside the ops in between: the backward pass of the earlier layers for
// a gradient, the rest of the step for a loss.
//
//===----------------------------------------------------------------------===//

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"

namespace mlir::gs {
#define GEN_PASS_DEF_OVERLAPCOLLECTIVES
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

namespace {
/// Whether `op` only builds the input of the op using it, cheaply: a
/// gradient's unscaling or cast to FP32, the flattening and concatenation
/// of a bucket of gradients.
bool onlyBuildsInput(Operation *op) {
  return isa<UnscaleOp, RescaleOp, CastOp, ReshapeOp, ConcatOp>(op) &&
         op->hasOneUse();
}

/// Moves `op` to just after the last op of its block that defines one of
/// its operands (to the start of the block if none does), having first
/// moved so those of its operand-building ops.
void hoist(Operation *op) {
  Block *block = op->getBlock();
  Operation *last = nullptr;
  for (Value operand : op->getOperands()) {
    Operation *definition = operand.getDefiningOp();
    if (!definition)
      continue;
    definition = block->findAncestorOpInBlock(*definition);
    if (!definition)
      continue;
    if (onlyBuildsInput(definition))
      hoist(definition);
    if (!last || last->isBeforeInBlock(definition))
      last = definition;
  }
  if (last)
    op->moveAfter(last);
  else
    op->moveBefore(&block->front());
}

struct OverlapCollectivesPass
    : public mlir::gs::impl::OverlapCollectivesBase<OverlapCollectivesPass> {
  void runOnOperation() override {
    // Last first: those whose inputs come from the same op keep their
    // order after it.
    SmallVector<AllReduceOp> allReduces;
    getOperation()->walk([&](AllReduceOp op) { allReduces.push_back(op); });
    for (AllReduceOp op : llvm::reverse(allReduces))
      hoist(op);
  }
};
} // namespace
