//===- FuseElementwise.cpp - Elementwise fusion around GEMMs ---*- C++ -*-===//

#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::gs {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// Whether `op` is a linalg op with a reduction (a GEMM, a convolution, a
/// pooling or a reduction).
bool hasReduction(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumReductionLoops() > 0;
}

/// Whether `op` is a linalg.generic whose loops are all parallel.
bool isElementwise(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.getNumParallelLoops() == generic.getNumLoops();
}

/// The most users among which a producer is recomputed.
constexpr unsigned kMaxRecomputingUsers = 3;

/// Whether `producer` is cheaper to compute again in each of its users
/// than to write and read back: an elementwise op of one arithmetic
/// operation (a gradient's unscaling, a cast), every user an elementwise op
/// or a reduction that would absorb it. Not a GEMM or convolution, which
/// would compute it again for every block that reads the element.
bool recomputedInUsers(Operation *producer) {
  if (!isElementwise(producer) || producer->getNumResults() != 1 ||
      !llvm::hasNItemsOrLess(producer->getUses(), kMaxRecomputingUsers))
    return false;
  Block &body = producer->getRegion(0).front();
  if (body.getOperations().size() != 2 ||
      !isa_and_present<arith::ArithDialect>(body.front().getDialect()))
    return false;
  return llvm::all_of(producer->getUses(), [](OpOperand &use) {
    auto user = dyn_cast<linalg::GenericOp>(use.getOwner());
    return user && user.isDpsInput(&use) &&
           user.getMatchingIndexingMap(&use).isPermutation() &&
           !linalg::isaContractionOpInterface(user) &&
           !linalg::isaConvolutionOpInterface(user);
  });
}

/// Whether `producer` is an elementwise op with several results, each
/// used by few elementwise ops (an optimizer step's new weight by the skip
/// guard's select and by its FP16 rounding): fused into each user (which
/// computes it again), it is then gone.
bool fusesIntoEveryUser(Operation *producer) {
  return isElementwise(producer) && producer->getNumResults() > 1 &&
         llvm::all_of(producer->getResults(), [](Value result) {
           return llvm::hasNItemsOrLess(result.getUses(),
                                        kMaxRecomputingUsers) &&
                  llvm::all_of(result.getUsers(), isElementwise);
         });
}

/// Generalizes a linalg.transpose whose one user is a generic other than a
/// contraction or convolution, for the elementwise fusion to fold into it.
struct GeneralizeTransposeIntoUser : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || !op->hasOneUse())
      return failure();
    OpOperand &use = *op->getUses().begin();
    auto user = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!user || !user.isDpsInput(&use) ||
        linalg::isaContractionOpInterface(user) ||
        linalg::isaConvolutionOpInterface(user))
      return failure();
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

/// The most operands a fused elementwise op may have. Each fusion copies
/// the consumer's operands, so fusing a chain of n ops without a bound
/// costs O(n^2) (a Sum of 5,000 inputs took minutes); past the bound a
/// chain becomes several fused ops.
constexpr unsigned kMaxFusedOperands = 64;

struct FuseElementwisePass
    : gs::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    // A producer with other users would be computed twice: only one
    // that is cheaper so (recomputedInUsers), or with multi-result one
    // whose results each have an elementwise user (fusesIntoEveryUser),
    // whose copies gs-fuse-siblings merges again.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [multiResult = bool(multiResult)](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          return producer &&
                 (producer->hasOneUse() || recomputedInUsers(producer) ||
                  (multiResult && fusesIntoEveryUser(producer))) &&
                 producer->getNumOperands() +
                         fused->getOwner()->getNumOperands() <=
                     kMaxFusedOperands;
        });
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, [](OpOperand *fused) {
          return !hasReduction(fused->getOwner()) &&
                 !hasReduction(fused->get().getDefiningOp());
        });
    if (transposes)
      patterns.add<GeneralizeTransposeIntoUser>(context);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
