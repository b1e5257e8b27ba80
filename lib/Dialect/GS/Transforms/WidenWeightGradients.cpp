//===- WidenWeightGradients.cpp - FP32 weight-gradient results --*- C++ -*-===//
//
// In a differentiated gs.backward region, a contraction or a sum whose
// FP16 result is only cast to FP32 (a weight or bias gradient), possibly
// through transposes, reshapes and slices, produces FP32 directly: it
// accumulates in FP32 already, so the FP16 rounding in between goes. A sum
// of a contraction's partial results (a split weight gradient) widens
// the contraction too.
//
//===----------------------------------------------------------------------===//

#include "VJPUtils.h"

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"

namespace mlir::gs {
#define GEN_PASS_DEF_WIDENWEIGHTGRADIENTS
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;
using namespace mlir::gs::vjp;

/// Appends to `chain` the ops of `body` that make `value`: back through
/// single-use layout ops to the first other op.
static void appendProducers(Value value, Block &body,
                            SmallVectorImpl<Operation *> &chain) {
  while (Operation *def = value.getDefiningOp()) {
    if (!value.hasOneUse() || def->getBlock() != &body)
      return;
    chain.push_back(def);
    if (!isa<TransposeOp, ReshapeOp, SliceOp>(def))
      return;
    value = def->getOperand(0);
  }
}

/// Widens the contractions of one backward region.
static void widenContractionResults(Block &body) {
  SmallVector<CastOp> casts;
  for (auto castOp : body.getOps<CastOp>())
    if (isHalf(castOp.getInput()) &&
        typeOf(castOp.getResult()).getElementType().isF32())
      casts.push_back(castOp);
  for (CastOp castOp : casts) {
    // The cast's input, back through single-use layout ops, to a
    // contraction or a sum (a bias gradient, or a contraction's partial
    // results summed).
    SmallVector<Operation *> chain;
    appendProducers(castOp.getInput(), body, chain);
    if (auto sum = dyn_cast_if_present<ReduceSumOp>(
            chain.empty() ? nullptr : chain.back())) {
      SmallVector<Operation *> partials;
      appendProducers(sum.getInput(), body, partials);
      if (!partials.empty() && isContraction(partials.back()))
        chain.append(partials);
    }
    if (chain.empty() ||
        !(isContraction(chain.back()) || isa<ReduceSumOp>(chain.back())))
      continue;
    Type f32 = typeOf(castOp.getResult()).getElementType();
    if (auto sum = dyn_cast<ReduceSumOp>(chain.back())) {
      // A sum of FP16 values accumulates in FP32 already; read them as
      // FP32 so that its result is not rounded to FP16.
      OpBuilder b(sum);
      Value input = sum.getInput();
      sum.getInputMutable().assign(
          CastOp::create(b, sum.getLoc(), typeOf(input).clone(f32), input));
    }
    for (Operation *op : chain)
      op->getResult(0).setType(typeOf(op->getResult(0)).clone(f32));
    castOp.replaceAllUsesWith(castOp.getInput());
    castOp.erase();
  }
}

namespace {
struct WidenWeightGradientsPass
    : gs::impl::WidenWeightGradientsBase<WidenWeightGradientsPass> {
  void runOnOperation() override {
    getOperation()->walk([](BackwardOp backward) {
      if (backward.isComputed())
        widenContractionResults(backward.getBody().front());
    });
  }
};
} // namespace
