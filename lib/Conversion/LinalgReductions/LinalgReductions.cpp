//===- LinalgReductions.cpp - How a linalg.generic reduces ------*- C++ -*-===//

#include "gs/Conversion/LinalgReductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gs;

Operation *mlir::gs::getReductionCombiner(linalg::GenericOp op,
                                          unsigned output) {
  Block &body = op.getRegion().front();
  BlockArgument current =
      op.getMatchingBlockArgument(op.getDpsInitOperand(output));
  Operation *combiner =
      body.getTerminator()->getOperand(output).getDefiningOp();
  if (!combiner || combiner->getBlock() != &body ||
      combiner->getNumOperands() != 2 || combiner->getNumResults() != 1 ||
      combiner->getNumRegions() != 0 || !current.hasOneUse() ||
      !llvm::is_contained(combiner->getOperands(), current) ||
      combiner->getOperand(0) == combiner->getOperand(1))
    return nullptr;
  return combiner;
}

std::optional<CombinerIdentity>
mlir::gs::getCombinerIdentity(Operation *combiner, Type type) {
  Builder b(combiner->getContext());
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    auto exact = [&](const APInt &bits) -> std::optional<CombinerIdentity> {
      return CombinerIdentity{b.getIntegerAttr(type, bits),
                              /*orderIndependent=*/true};
    };
    return TypeSwitch<Operation *, std::optional<CombinerIdentity>>(combiner)
        .Case<arith::AndIOp, arith::MinUIOp>(
            [&](auto) { return exact(APInt::getAllOnes(width)); })
        .Case<arith::OrIOp, arith::XOrIOp, arith::AddIOp, arith::MaxUIOp>(
            [&](auto) { return exact(APInt::getZero(width)); })
        .Case<arith::MulIOp>([&](auto) { return exact(APInt(width, 1)); })
        .Case<arith::MaxSIOp>(
            [&](auto) { return exact(APInt::getSignedMinValue(width)); })
        .Case<arith::MinSIOp>(
            [&](auto) { return exact(APInt::getSignedMaxValue(width)); })
        .Default([](Operation *) { return std::nullopt; });
  }
  auto real = dyn_cast<FloatType>(type);
  if (!real)
    return std::nullopt;
  const llvm::fltSemantics &semantics = real.getFloatSemantics();
  auto value = [&](const APFloat &v, bool orderIndependent) {
    return CombinerIdentity{b.getFloatAttr(type, v), orderIndependent};
  };
  // maximumf and minimumf order -0 below +0 and propagate NaN: the same
  // result in any order (maxnumf and minnumf may return either zero).
  if (isa<arith::MaximumFOp>(combiner))
    return value(APFloat::getInf(semantics, /*Negative=*/true), true);
  if (isa<arith::MinimumFOp>(combiner))
    return value(APFloat::getInf(semantics), true);
  // -0 + x is x for every x, +0 + -0 being +0.
  if (isa<arith::AddFOp>(combiner))
    return value(APFloat::getZero(semantics, /*Negative=*/true), false);
  if (isa<arith::MulFOp>(combiner))
    return value(APFloat::getOne(semantics), false);
  return std::nullopt;
}

std::optional<OutputReduction>
mlir::gs::getOutputReduction(linalg::GenericOp op, unsigned output) {
  Operation *combiner = getReductionCombiner(op, output);
  if (!combiner)
    return std::nullopt;
  std::optional<CombinerIdentity> identity = getCombinerIdentity(
      combiner, getElementTypeOrSelf(op.getDpsInits()[output].getType()));
  if (!identity)
    return std::nullopt;
  return OutputReduction{combiner, *identity};
}

std::optional<SmallVector<OutputReduction>>
mlir::gs::getOutputReductions(linalg::GenericOp op) {
  SmallVector<OutputReduction> reductions;
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
    std::optional<OutputReduction> reduction = getOutputReduction(op, i);
    if (!reduction)
      return std::nullopt;
    reductions.push_back(*reduction);
  }
  return reductions;
}

bool mlir::gs::isOrderDependent(ArrayRef<OutputReduction> reductions) {
  return llvm::any_of(reductions, [](const OutputReduction &reduction) {
    return !reduction.identity.orderIndependent;
  });
}

bool mlir::gs::outputsWrittenOrReduced(
    linalg::GenericOp op,
    llvm::function_ref<bool(OpOperand &init, const OutputReduction &)> accept) {
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    if (op.getMatchingIndexingMap(&init).isPermutation())
      continue;
    std::optional<OutputReduction> reduction = getOutputReduction(op, i);
    if (!reduction || !accept(init, *reduction))
      return false;
  }
  return true;
}
