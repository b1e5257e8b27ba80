//===- CollapseInnerLoops.cpp - One innermost loop per row run --*- C++ -*-===//
//
// The innermost parallel loops of an elementwise or reduction generic that
// are contiguous in all its operands merge into one loop, so that LLVM
// vectorizes along memory instead of unrolling a short row and gathering
// across rows; so do the innermost reduction loops of reductions that are
// the same in any order. Operands whose buffers will not be contiguous
// along those loops (strided slices, slices of part of a row) keep them:
// their collapse would bufferize into a copy.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/LinalgReductions.h"
#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::gs {
#define GEN_PASS_DEF_COLLAPSEINNERLOOPS
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// Whether every output of `op` is a reduction whose result is the same in
/// any order (integer counts, and, or, max, min), which LLVM vectorizes
/// over a long loop (it keeps floating-point sums in order, scalar), or
/// is written at every point (an elementwise op's, fused with a reduction
/// by gs-fuse-siblings).
bool reducesInAnyOrder(linalg::GenericOp op) {
  return gs::outputsWrittenOrReduced(
      op, [](OpOperand &, const gs::OutputReduction &reduction) {
        return reduction.identity.orderIndependent;
      });
}

/// The strides, in elements, of the buffer that `value` will bufferize
/// into, as the IR shows them: a slice's are its source's times its own,
/// a destination-passing op's result's those of its destination (an
/// `scf.for`'s iteration argument's, those of its init), a reshape's
/// those of its source regrouped; any other tensor is a buffer of its own
/// (row-major). None where a size or a slice's stride is dynamic.
std::optional<SmallVector<int64_t>> bufferStrides(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> ownBuffer = computeStrides(type.getShape());
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (OpOperand *init = loop ? loop.getTiedLoopInit(arg) : nullptr)
      return bufferStrides(init->get());
    return ownBuffer;
  }
  Operation *def = value.getDefiningOp();
  auto result = cast<OpResult>(value);
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    std::optional<SmallVector<int64_t>> source =
        bufferStrides(slice.getSource());
    if (!source || ShapedType::isDynamicShape(slice.getStaticStrides()))
      return std::nullopt;
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<int64_t> strides;
    for (auto [d, step] : llvm::enumerate(slice.getStaticStrides()))
      if (!dropped.test(d))
        strides.push_back((*source)[d] * step);
    return strides;
  }
  if (auto loop = dyn_cast<scf::ForOp>(def))
    return bufferStrides(loop.getInitArgs()[result.getResultNumber()]);
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
    return bufferStrides(dps.getTiedOpOperand(result)->get());
  if (auto cast = dyn_cast<tensor::CastOp>(def))
    return bufferStrides(cast.getSource());
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    // A group that is not contiguous is copied into a buffer of its own.
    std::optional<SmallVector<int64_t>> source =
        bufferStrides(collapse.getSrc());
    ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
    if (!source)
      return std::nullopt;
    SmallVector<int64_t> strides;
    for (const ReassociationIndices &group :
         collapse.getReassociationIndices()) {
      for (size_t i = 0; i + 1 < group.size(); ++i)
        if ((*source)[group[i]] !=
            (*source)[group[i + 1]] * shape[group[i + 1]])
          return ownBuffer;
      strides.push_back((*source)[group.back()]);
    }
    return strides;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    std::optional<SmallVector<int64_t>> source = bufferStrides(expand.getSrc());
    if (!source)
      return std::nullopt;
    SmallVector<int64_t> strides(ownBuffer.size());
    for (auto [g, group] : llvm::enumerate(expand.getReassociationIndices())) {
      int64_t stride = (*source)[g];
      for (int64_t d : llvm::reverse(group)) {
        strides[d] = stride;
        stride *= type.getDimSize(d);
      }
    }
    return strides;
  }
  return ownBuffer;
}

/// Whether the loops `run` (consecutive, outermost first) of `op` can
/// merge into one with every operand's dimensions along them merged in
/// place: the loops are one sequence of dimensions in each operand's
/// indexing map (or absent from it), and each dimension of that sequence
/// lies in the operand's buffer a whole next dimension apart.
bool mergesInPlace(linalg::GenericOp op, ArrayRef<SmallVector<int64_t>> strides,
                   const ReassociationIndices &run) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!linalg::areDimSequencesPreserved(maps, {run}))
    return false;
  for (auto [operand, map] : llvm::zip(op->getOpOperands(), maps)) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type)
      continue;
    ArrayRef<int64_t> operandStrides = strides[operand.getOperandNumber()];
    SmallVector<int64_t> dims;
    for (int64_t loop : run)
      if (std::optional<unsigned> d =
              map.getResultPosition(getAffineDimExpr(loop, op.getContext())))
        dims.push_back(*d);
    for (size_t i = 0; i + 1 < dims.size(); ++i)
      if (operandStrides[dims[i]] !=
          operandStrides[dims[i + 1]] * type.getDimSize(dims[i + 1]))
        return false;
  }
  return true;
}

/// The dimensions of each input of `op` that its map reads at the constant
/// index 0 and that have size 1 (a 1 x C x 1 x 1 bias read as (0, c, 0,
/// 0)); empty where there are none. Fails where a map has another
/// constant or non-dimension index, or an output has such an index.
FailureOr<SmallVector<SmallVector<int64_t>>>
unitBroadcastDims(linalg::GenericOp op) {
  SmallVector<SmallVector<int64_t>> dims(op->getNumOperands());
  bool any = false;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      if (isa<AffineDimExpr>(expr))
        continue;
      auto constant = dyn_cast<AffineConstantExpr>(expr);
      if (!constant || constant.getValue() != 0 || !type ||
          type.getDimSize(d) != 1 || op.isDpsInit(&operand))
        return failure();
      dims[operand.getOperandNumber()].push_back(d);
      any = true;
    }
  }
  if (!any)
    dims.clear();
  return dims;
}

/// `op` with the inputs it broadcasts along unit dimensions by constant
/// indices (unitBroadcastDims) read through collapse_shapes without
/// those dimensions, so that every map is a projected permutation (the
/// bias of `x + b`, with x N x C x 7 x 7, then no longer keeps the rows of
/// 7 apart). Returns the new op, or null where there is none to drop or
/// the maps are otherwise not projected permutations.
linalg::GenericOp dropUnitBroadcasts(RewriterBase &rewriter,
                                     linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics())
    return nullptr;
  FailureOr<SmallVector<SmallVector<int64_t>>> dropped = unitBroadcastDims(op);
  if (failed(dropped) || dropped->empty())
    return nullptr;
  rewriter.setInsertionPoint(op);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    ArrayRef<int64_t> unit = (*dropped)[operand.getOperandNumber()];
    if (unit.empty()) {
      maps.push_back(map);
      if (!op.isDpsInit(&operand))
        inputs.push_back(operand.get());
      continue;
    }
    // Each kept dimension grouped with the dropped ones before it; the
    // dropped ones at the end join the last group.
    SmallVector<AffineExpr> kept;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      pending.push_back(d);
      if (llvm::is_contained(unit, static_cast<int64_t>(d)))
        continue;
      kept.push_back(expr);
      groups.push_back(pending);
      pending.clear();
    }
    if (!groups.empty())
      llvm::append_range(groups.back(), pending);
    inputs.push_back(tensor::CollapseShapeOp::create(rewriter, op.getLoc(),
                                                     operand.get(), groups));
    maps.push_back(AffineMap::get(map.getNumDims(), 0, kept, op.getContext()));
  }
  auto normalized = linalg::GenericOp::create(
      rewriter, op.getLoc(), op.getResultTypes(), inputs, op.getDpsInits(),
      maps, op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), normalized.getRegion(),
                              normalized.getRegion().begin());
  rewriter.replaceOp(op, normalized.getResults());
  return normalized;
}

/// The loops of `op` grouped for collapsing: its innermost loops of one
/// kind, as many as merge in place (mergesInPlace), as one group, every
/// other loop alone. Empty where there is nothing to merge. Parallel
/// loops, or reduction loops where the reductions are the same in any
/// order (reducesInAnyOrder): merged, a 4-D count over a tensor is one
/// long vectorized loop instead of rows of 56 or 7 elements, and visits its
/// elements in the same order all the same.
SmallVector<ReassociationIndices> innerLoopRun(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      linalg::isaContractionOpInterface(op) ||
      linalg::isaConvolutionOpInterface(op))
    return {};
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Windows (o + k) and broadcasts by constant indices are left alone.
  if (!llvm::all_of(maps,
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return {};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t numLoops = op.getNumLoops();
  if (iterators.back() == utils::IteratorType::reduction &&
      !reducesInAnyOrder(op))
    return {};
  SmallVector<SmallVector<int64_t>> strides;
  for (Value operand : op->getOperands()) {
    std::optional<SmallVector<int64_t>> operandStrides = bufferStrides(operand);
    if (!operandStrides && isa<RankedTensorType>(operand.getType()))
      return {};
    strides.push_back(operandStrides.value_or(SmallVector<int64_t>()));
  }
  int64_t first = numLoops;
  while (first > 0 && iterators[first - 1] == iterators.back()) {
    ReassociationIndices run;
    for (int64_t d = first - 1; d < numLoops; ++d)
      run.push_back(d);
    if (!mergesInPlace(op, strides, run))
      break;
    --first;
  }
  if (numLoops - first < 2)
    return {};
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < first; ++d)
    groups.push_back({d});
  ReassociationIndices run;
  for (int64_t d = first; d < numLoops; ++d)
    run.push_back(d);
  groups.push_back(run);
  return groups;
}

/// The most steps of the reduction loops outside a merged run that move
/// inside it (which LLVM then unrolls, vectorizing the run).
constexpr int64_t kMaxInnerReductionSteps = 16;

/// Where all loops but the merged (last) one are reductions of few steps
/// (a sum over a batch of 8 into lanes per position), the merged loop
/// outermost: each lane then sums its few steps in registers and is
/// written once, where each step read and wrote every lane's partial sum.
/// Each output sums its terms in the same order.
void moveShortReductionsInside(RewriterBase &rewriter, linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    return;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  unsigned merged = iterators.size() - 1;
  if (iterators[merged] != utils::IteratorType::parallel)
    return;
  int64_t steps = 1;
  for (unsigned d = 0; d < merged; ++d) {
    if (iterators[d] != utils::IteratorType::reduction)
      return;
    steps *= ranges[d];
  }
  if (merged == 0 || steps > kMaxInnerReductionSteps)
    return;
  SmallVector<unsigned> order = {merged};
  for (unsigned d = 0; d < merged; ++d)
    order.push_back(d);
  rewriter.setInsertionPoint(generic);
  (void)linalg::interchangeGenericOp(rewriter, generic, order);
}

struct CollapseInnerLoopsPass
    : gs::impl::CollapseInnerLoopsBase<CollapseInnerLoopsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, SmallVector<ReassociationIndices>>>
        collapses;
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics) {
      if (linalg::GenericOp normalized = dropUnitBroadcasts(rewriter, op))
        op = normalized;
      SmallVector<ReassociationIndices> groups = innerLoopRun(op);
      if (!groups.empty())
        collapses.emplace_back(op, std::move(groups));
    }
    for (auto &[op, groups] : collapses) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, groups, rewriter);
      if (failed(collapsed))
        continue;
      rewriter.replaceOp(op, collapsed->results);
      moveShortReductionsInside(rewriter, collapsed->collapsedOp);
    }
  }
};
} // namespace
