//===- InlineBackward.cpp - gs.backward regions to straight-line code -----===//
//
// Once the passes that transform the backward pass have run, a
// differentiated gs.backward region is ordinary code: its body moves in
// front of it, its seed (ones when it has none) replaces the region's
// argument, and its results become the gradients it yields.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"

namespace mlir::gs {
#define GEN_PASS_DEF_INLINEBACKWARD
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

namespace {
void inlineRegion(BackwardOp backward) {
  Block &body = backward.getBody().front();
  Value seed = backward.getSeed();
  if (!seed) {
    OpBuilder b(backward);
    seed = vjp::splat(b, backward.getLoc(), vjp::typeOf(backward.getOf()), 1.0);
  }
  body.getArgument(0).replaceAllUsesWith(seed);
  auto yield = cast<YieldOp>(body.getTerminator());
  backward.replaceAllUsesWith(yield.getGradients());
  yield.erase();
  backward->getBlock()->getOperations().splice(backward->getIterator(),
                                               body.getOperations());
  backward.erase();
}

struct InlineBackwardPass
    : mlir::gs::impl::InlineBackwardBase<InlineBackwardPass> {
  void runOnOperation() override {
    SmallVector<BackwardOp> computed;
    getOperation()->walk([&](BackwardOp op) {
      if (op.isComputed())
        computed.push_back(op);
    });
    for (BackwardOp backward : computed)
      inlineRegion(backward);
  }
};
} // namespace
