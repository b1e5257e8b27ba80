//===- SplitReductions.cpp - Floating-point reductions in lanes -*- C++ -*-===//
//
// A large floating-point reduction becomes a generic with a partial result
// per lane (its innermost reduction loops made parallel) and a generic that
// combines the lanes in order. The split runs before the targets diverge,
// so the CPU's vectorized loops and the GPU's threads sum in the same order.
//
//===----------------------------------------------------------------------===//

#include "ConvolutionToGemm.h"

#include "gs/Conversion/LinalgReductions.h"
#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
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

/// Whether `op` is a contraction or convolution that the targets' GEMM and
/// convolution kernels compute. A sum of an elementwise product, whose
/// inputs all have one indexing map (batch normalization's backward sum of
/// dy * x-hat per channel), is a contraction to linalg but a reduction to
/// them.
bool isKernelContraction(linalg::GenericOp op) {
  if (linalg::isaConvolutionOpInterface(op))
    return true;
  if (!linalg::isaContractionOpInterface(op))
    return false;
  AffineMap first = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    return op.getMatchingIndexingMap(input) != first;
  });
}

/// How `op` is split, or nullopt where it is not. A contraction or
/// convolution is left to its kernel, unless `kernelContraction` is false
/// (no target has a kernel for it).
std::optional<SplitPlan> planSplit(linalg::GenericOp op, int64_t minPoints,
                                   int64_t maxLanes,
                                   bool kernelContraction = true) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op.getNumReductionLoops() < 2 ||
      (kernelContraction && isKernelContraction(op)))
    return std::nullopt;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<unsigned> reductionDims;
  op.getReductionDims(reductionDims);
  int64_t points = 1;
  for (unsigned dim : reductionDims)
    points *= sizes[dim];
  if (points < minPoints)
    return std::nullopt;

  std::optional<SmallVector<OutputReduction>> reductions =
      getOutputReductions(op);
  // Sums that are exact in any order are the targets' to split.
  if (!reductions || !isOrderDependent(*reductions))
    return std::nullopt;
  SplitPlan plan;
  for (auto [result, reduction] :
       llvm::zip_equal(op->getResults(), *reductions)) {
    AffineMap map = op.getIndexingMapMatchingResult(result);
    if (!map.isProjectedPermutation() ||
        llvm::any_of(reductionDims,
                     [&](unsigned dim) { return map.isFunctionOfDim(dim); }))
      return std::nullopt;
    plan.combiners.push_back(reduction.combiner);
    plan.identities.push_back(reduction.identity.value);
  }

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

/// Whether `conv` is a grouped convolution that no target's kernel
/// computes and whose lanes, the innermost kernel offsets, read
/// consecutive input elements: its groups fill no GEMM (fillsGroupGemm; the
/// GPU's kernels need more filters a group still) and its dilations are 1.
/// A depthwise convolution's weight gradient is one (the correlation's
/// dilations the forward strides), an output per filter offset summing
/// every image and output position: split, a stride-1 layer's ran 2.5x
/// faster on the CPU (28 x 28 images, 64 of them, 32 channels: 9.0 ms ->
/// 3.6-3.9 ms) and the GPU gets a thread per lane instead of one per output;
/// a stride-2 layer's, its lanes reading every other element, ran 2x
/// slower on the CPU and is not split.
bool isSplittableGroupedConvolution(linalg::Conv2DNgchwGfchwOp conv) {
  return conv.hasPureTensorSemantics() && !conv.hasDynamicShape() &&
         !fillsGroupGemm(conv) &&
         llvm::all_of(conv.getDilations().getValues<int64_t>(),
                      [](int64_t dilation) { return dilation == 1; });
}

/// The lanes of a flattened full reduction of `points` points: the most
/// that divide them, at most `maxLanes`, each lane combining at least
/// kMinPointsPerLane points; 0 where fewer than kMinLanes would.
int64_t flatLanes(int64_t points, int64_t maxLanes) {
  for (int64_t lanes = std::min(maxLanes, points / kMinPointsPerLane);
       lanes >= kMinLanes; --lanes)
    if (points % lanes == 0)
      return lanes;
  return 0;
}

/// Whether `op` reduces the whole of its inputs, read in order, into
/// scalars, at least one in an order-dependent way, over `minPoints` points
/// or more: then it can read its inputs as (points / lanes) x lanes
/// matrices instead, whatever their shape (flattenFullReduction). A 3x3
/// convolution's weight of 512 input channels has 9 lanes as it is (the
/// kernel's 3 x 3; 9 x 512 are more than 4096), too few to split.
bool isFlattenableFullReduction(linalg::GenericOp op, int64_t minPoints) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op.getNumParallelLoops() != 0 || op.getNumLoops() == 0 ||
      !op.getBody()->getOps<linalg::IndexOp>().empty())
    return false;
  for (OpOperand *input : op.getDpsInputOperands())
    if (!op.getMatchingIndexingMap(input).isIdentity())
      return false;
  if (llvm::any_of(op->getResults(), [&](OpResult result) {
        return op.getIndexingMapMatchingResult(result).getNumResults() != 0;
      }))
    return false;
  std::optional<SmallVector<OutputReduction>> reductions =
      getOutputReductions(op);
  return reductions && isOrderDependent(*reductions) &&
         computeProduct(op.getStaticLoopRanges()) >= minPoints;
}

/// `op` (isFlattenableFullReduction) over its inputs viewed as (points /
/// lanes) x lanes matrices, replacing it: the same elements in the same
/// order, two loops.
linalg::GenericOp flattenFullReduction(linalg::GenericOp op, int64_t lanes,
                                       RewriterBase &rewriter) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  int64_t points = computeProduct(op.getStaticLoopRanges());
  SmallVector<Value> matrices;
  for (Value input : op.getDpsInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    Value flat = input;
    if (type.getRank() != 1) {
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      flat = tensor::CollapseShapeOp::create(
          rewriter, loc, input, ArrayRef<ReassociationIndices>{all});
    }
    matrices.push_back(tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({points / lanes, lanes}, type.getElementType()),
        flat, ArrayRef<ReassociationIndices>{{0, 1}}));
  }
  MLIRContext *context = op.getContext();
  SmallVector<AffineMap> maps(matrices.size(),
                              AffineMap::getMultiDimIdentityMap(2, context));
  maps.append(op.getNumDpsInits(), AffineMap::get(2, 0, {}, context));
  auto flat = linalg::GenericOp::create(
      rewriter, loc, op->getResultTypes(), matrices, op.getDpsInits(), maps,
      SmallVector<utils::IteratorType>(2, utils::IteratorType::reduction));
  rewriter.inlineRegionBefore(op.getRegion(), flat.getRegion(),
                              flat.getRegion().end());
  rewriter.replaceOp(op, flat.getResults());
  return flat;
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
    IRRewriter rewriter(&getContext());
    splitGroupedConvolutions(rewriter);
    SmallVector<std::pair<linalg::GenericOp, SplitPlan>> splits;
    SmallVector<std::pair<linalg::GenericOp, int64_t>> flattenings;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<SplitPlan> plan = planSplit(op, minPoints, maxLanes))
        splits.emplace_back(op, std::move(*plan));
      else if (isFlattenableFullReduction(op, minPoints))
        if (int64_t lanes =
                flatLanes(computeProduct(op.getStaticLoopRanges()), maxLanes))
          flattenings.emplace_back(op, lanes);
    });
    for (auto [op, lanes] : flattenings) {
      linalg::GenericOp flat = flattenFullReduction(op, lanes, rewriter);
      if (std::optional<SplitPlan> plan = planSplit(flat, minPoints, maxLanes))
        splits.emplace_back(flat, std::move(*plan));
    }
    for (auto &[op, plan] : splits)
      splitReduction(op, plan, rewriter);
  }

  /// Splits the grouped convolutions isSplittableGroupedConvolution takes
  /// (as generics) where their sums are deep; the others stay named ops,
  /// for the CPU's kernel schedule.
  void splitGroupedConvolutions(RewriterBase &rewriter) {
    SmallVector<linalg::Conv2DNgchwGfchwOp> convs;
    getOperation()->walk([&](linalg::Conv2DNgchwGfchwOp conv) {
      if (isSplittableGroupedConvolution(conv))
        convs.push_back(conv);
    });
    for (linalg::Conv2DNgchwGfchwOp conv : convs) {
      // Planned on a generic copy, which replaces the op only if split.
      rewriter.setInsertionPoint(conv);
      auto copy = cast<linalg::Conv2DNgchwGfchwOp>(rewriter.clone(*conv));
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, copy);
      if (failed(generic)) {
        rewriter.eraseOp(copy);
        continue;
      }
      std::optional<SplitPlan> plan =
          planSplit(*generic, minPoints, maxLanes, /*kernelContraction=*/false);
      if (!plan) {
        rewriter.eraseOp(*generic);
        continue;
      }
      rewriter.replaceOp(conv, generic->getResults());
      splitReduction(*generic, *plan, rewriter);
    }
  }
};
} // namespace
