//===- RegisterBlockLoops.cpp - The step loops of register blocks ---------===//

#include "RegisterBlockLoops.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

bool gs::isRegisterBlockSteps(scf::ForOp loop) {
  std::optional<APInt> step = loop.getConstantStep();
  if (!step || !step->isStrictlyPositive() ||
      loop.getBody()
          ->walk([&](LoopLikeOpInterface inner) {
            return inner == loop ? WalkResult::advance()
                                 : WalkResult::interrupt();
          })
          .wasInterrupted())
    return false;
  int64_t accumulators = 0;
  for (auto [arg, yielded] :
       llvm::zip(loop.getRegionIterArgs(), loop.getYieldedValues())) {
    // A chain of FMAs (one per step, where unrolled) from the argument.
    Value value = yielded;
    auto fma = value.getDefiningOp<vector::FMAOp>();
    for (; fma && fma->getBlock() == loop.getBody();
         fma = value.getDefiningOp<vector::FMAOp>())
      value = fma.getAcc();
    if (value == arg && yielded != arg)
      ++accumulators;
  }
  return accumulators >= kMinBlockAccumulators;
}
