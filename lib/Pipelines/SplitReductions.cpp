//===- SplitReductions.cpp - Floating-point reductions in lanes -*- C++ -*-===//
//
// A large floating-point reduction becomes a generic with a partial result
// per lane (its innermost reduction loops made parallel) and a generic that
// combines the lanes in order. The split runs before the targets diverge,
// so the CPU's vectorized loops and the GPU's threads sum in the same order.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/LinalgReductions.h"
#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::gs {
#define GEN_PASS_DEF_SPLITREDUCTIONS
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

namespace {
/// Fewer lanes than this are not worth a second op.
constexpr int64_t kMinLanes = 32;
/// Nor are lanes that each combine fewer points than this.
constexpr int64_t kMinPointsPerLane = 8;

/// How one generic is split.
struct SplitPlan {
  /// The reduction loops that become the lanes, innermost last.
  SmallVector<unsigned> laneDims;
  /// Each output's combiner in the body and its identity.
  SmallVector<Operation *> combiners;
  SmallVector<TypedAttr> identities;
};

std::optional<SplitPlan> planSplit(linalg::GenericOp op, int64_t minPoints,
                                   int64_t maxLanes) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op.getNumReductionLoops() < 2 || linalg::isaContractionOpInterface(op) ||
      linalg::isaConvolutionOpInterface(op))
    return std::nullopt;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<unsigned> reductionDims;
  op.getReductionDims(reductionDims);
  int64_t points = 1;
  for (unsigned dim : reductionDims)
    points *= sizes[dim];
  if (points < minPoints)
    return std::nullopt;

  SplitPlan plan;
  bool orderDependent = false;
  for (auto [i, init] : llvm::enumerate(op.getDpsInits())) {
    Operation *combiner = getReductionCombiner(op, i);
    if (!combiner)
      return std::nullopt;
    std::optional<CombinerIdentity> identity =
        getCombinerIdentity(combiner, getElementTypeOrSelf(init.getType()));
    AffineMap map = op.getIndexingMapMatchingResult(op->getResult(i));
    if (!identity || !map.isProjectedPermutation() ||
        llvm::any_of(reductionDims,
                     [&](unsigned dim) { return map.isFunctionOfDim(dim); }))
      return std::nullopt;
    orderDependent |= !identity->orderIndependent;
    plan.combiners.push_back(combiner);
    plan.identities.push_back(identity->value);
  }
  // Sums that are exact in any order are the targets' to split.
  if (!orderDependent)
    return std::nullopt;

  // The innermost reduction loops that fit, keeping the outermost one.
  int64_t lanes = 1;
  for (unsigned dim : llvm::reverse(ArrayRef(reductionDims).drop_front())) {
    if (lanes * sizes[dim] > maxLanes)
      break;
    lanes *= sizes[dim];
    plan.laneDims.insert(plan.laneDims.begin(), dim);
  }
  if (lanes < kMinLanes || points / lanes < kMinPointsPerLane)
    return std::nullopt;
  return plan;
}

/// `map` with the loops of `dims` appended to its results.
AffineMap withResults(AffineMap map, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> results(map.getResults());
  for (unsigned dim : dims)
    results.push_back(getAffineDimExpr(dim, map.getContext()));
  return AffineMap::get(map.getNumDims(), 0, results, map.getContext());
}

void splitReduction(linalg::GenericOp op, const SplitPlan &plan,
                    RewriterBase &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  rewriter.setInsertionPoint(op);

  // 1. The partials: the op itself, its lane loops parallel, an output per
  // lane started from the identity.
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned dim : plan.laneDims)
    iterators[dim] = utils::IteratorType::parallel;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands())
    maps.push_back(op.getMatchingIndexingMap(input));
  SmallVector<Value> partialInits;
  SmallVector<AffineMap> resultMaps;
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    AffineMap resultMap = op.getIndexingMapMatchingResult(result);
    resultMaps.push_back(resultMap);
    AffineMap partialMap = withResults(resultMap, plan.laneDims);
    maps.push_back(partialMap);
    SmallVector<int64_t> shape;
    for (AffineExpr expr : partialMap.getResults())
      shape.push_back(sizes[cast<AffineDimExpr>(expr).getPosition()]);
    auto type = cast<RankedTensorType>(result.getType());
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
    Value identity =
        arith::ConstantOp::create(rewriter, loc, plan.identities[i]);
    partialInits.push_back(
        linalg::FillOp::create(rewriter, loc, identity, empty).getResult(0));
  }
  auto partials = linalg::GenericOp::create(
      rewriter, loc, ValueRange(partialInits).getTypes(), op.getDpsInputs(),
      partialInits, maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), partials.getRegion(),
                              partials.getRegion().end());

  // 2. Each initial value combined with its lanes in order: the loops are
  // the op's parallel ones and the lanes, in the op's order.
  SmallVector<utils::IteratorType> combineIterators;
  SmallVector<AffineExpr> renumbered(sizes.size());
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
    bool lane = llvm::is_contained(plan.laneDims, dim);
    if (!lane && iterator == utils::IteratorType::reduction)
      continue;
    renumbered[dim] = getAffineDimExpr(combineIterators.size(), context);
    combineIterators.push_back(iterator);
  }
  auto renumber = [&](AffineMap map) {
    return map.replaceDimsAndSymbols(renumbered, {}, combineIterators.size(),
                                     0);
  };
  SmallVector<AffineMap> combineMaps;
  for (AffineMap resultMap : resultMaps)
    combineMaps.push_back(renumber(withResults(resultMap, plan.laneDims)));
  for (AffineMap resultMap : resultMaps)
    combineMaps.push_back(renumber(resultMap));
  unsigned numOutputs = op.getNumDpsInits();
  auto combine = linalg::GenericOp::create(
      rewriter, loc, op->getResultTypes(), partials.getResults(),
      op.getDpsInits(), combineMaps, combineIterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        SmallVector<Value> combined;
        for (auto [i, combiner] : llvm::enumerate(plan.combiners)) {
          // The combiner with the running value in its place and the lane's
          // partial in the other's.
          Block *body = combiner->getBlock();
          BlockArgument current = body->getArgument(partials.getNumDpsInputs() +
                                                    static_cast<unsigned>(i));
          IRMapping mapping;
          for (Value operand : combiner->getOperands())
            mapping.map(operand,
                        operand == current ? args[numOutputs + i] : args[i]);
          combined.push_back(b.clone(*combiner, mapping)->getResult(0));
        }
        linalg::YieldOp::create(b, loc, combined);
      });
  rewriter.replaceOp(op, combine.getResults());
}

struct SplitReductionsPass
    : mlir::gs::impl::SplitReductionsBase<SplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, SplitPlan>> splits;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<SplitPlan> plan = planSplit(op, minPoints, maxLanes))
        splits.emplace_back(op, std::move(*plan));
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, plan] : splits)
      splitReduction(op, plan, rewriter);
  }
};
} // namespace
