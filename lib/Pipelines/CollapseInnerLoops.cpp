//===- CollapseInnerLoops.cpp - One innermost loop per row run --*- C++ -*-===//
//
// The innermost parallel loops of an elementwise or reduction generic that
// are contiguous in all its operands merge into one loop, so that LLVM
// vectorizes along memory instead of unrolling a short row and gathering
// across rows; so do the innermost reduction loops of reductions that are
// the same in any order.
//
//===----------------------------------------------------------------------===//

#include "gs/Conversion/LinalgReductions.h"
#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::gs {
#define GEN_PASS_DEF_COLLAPSEINNERLOOPS
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// Whether every output of `op` is a reduction whose result is the same in
/// any order (integer counts, and, or, max, min), which LLVM vectorizes
/// over a long loop; it keeps floating-point sums in order, scalar.
bool reducesInAnyOrder(linalg::GenericOp op) {
  std::optional<SmallVector<gs::OutputReduction>> reductions =
      gs::getOutputReductions(op);
  return reductions && !gs::isOrderDependent(*reductions);
}

/// The loops of `op` grouped for collapsing: its innermost loops of one
/// kind, as many as are contiguous in every operand, as one group, every
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
  int64_t first = numLoops;
  while (first > 0 && iterators[first - 1] == iterators.back()) {
    ReassociationIndices run;
    for (int64_t d = first - 1; d < numLoops; ++d)
      run.push_back(d);
    if (!linalg::areDimSequencesPreserved(maps, {run}))
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
    getOperation()->walk([&](linalg::GenericOp op) {
      SmallVector<ReassociationIndices> groups = innerLoopRun(op);
      if (!groups.empty())
        collapses.emplace_back(op, std::move(groups));
    });
    IRRewriter rewriter(&getContext());
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
