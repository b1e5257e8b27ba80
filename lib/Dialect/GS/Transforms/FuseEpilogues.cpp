//===- FuseEpilogues.cpp - Backward GEMMs with their scaling epilogue -----===//
//
// gs-gradient-scaling measures and rescales each FP16 data gradient a
// contraction produces: the FP32 product is rescaled, its rounding to FP16
// counted and cast, and the cast result's statistics feed the next scale.
// One gs.scaled_contraction stands for all of it, and for the ReLU
// backward that masks the result, so that a target can compute the
// epilogue where the product is (docs/GPU.md).
//
//===----------------------------------------------------------------------===//

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::gs {
#define GEN_PASS_DEF_FUSEEPILOGUES
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

namespace {
/// A contraction into FP32 that gs.scaled_contraction can hold.
bool isFusable(Operation *op) {
  return op && ScaledContractionOp::canHold(op) &&
         cast<RankedTensorType>(op->getResult(0).getType())
             .getElementType()
             .isF32();
}

/// Whether `value` is a gs.constant splat of +0 (or, unless `positive`, of
/// -0).
bool isZero(Value value, bool positive = false) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return false;
  auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
  if (!splat || !isa<FloatType>(splat.getElementType()))
    return false;
  APFloat zero = splat.getSplatValue<APFloat>();
  return positive ? zero.isPosZero() : zero.isZero();
}

/// Fuses the ReLU backward that is the only user of `fused`'s result,
/// gs.where(gs.compare gt %m, 0, result, +0) with an f16 %m (the kernel's
/// mask) of the result's shape, into its epilogue (its statistics stay
/// those of the values before).
void fuseReluMask(RewriterBase &rewriter, DominanceInfo &dominance,
                  ScaledContractionOp fused) {
  Value result = fused.getResult();
  if (!result.hasOneUse())
    return;
  auto where = dyn_cast<WhereOp>(*result.getUsers().begin());
  // The epilogue writes +0 where the mask is off.
  if (!where || where.getX() != result ||
      !isZero(where.getY(), /*positive=*/true) ||
      where.getType() != result.getType())
    return;
  auto compare = where.getCondition().getDefiningOp<CompareOp>();
  if (!compare || compare.getPredicate() != ComparePredicate::gt ||
      !isZero(compare.getRhs()))
    return;
  Value mask = compare.getLhs();
  auto maskType = dyn_cast<RankedTensorType>(mask.getType());
  ArrayRef<int64_t> shape = fused.getResult().getType().getShape();
  if (!maskType || maskType.getShape() != shape ||
      !maskType.getElementType().isF16() ||
      !dominance.properlyDominates(mask, fused))
    return;
  rewriter.modifyOpInPlace(fused,
                           [&] { fused.getReluMaskMutable().assign(mask); });
  SetVector<Operation *> zeros;
  zeros.insert(where.getY().getDefiningOp());
  zeros.insert(compare.getRhs().getDefiningOp());
  rewriter.replaceOp(where, result);
  // What only the ReLU backward used.
  if (compare->use_empty())
    rewriter.eraseOp(compare);
  for (Operation *zero : zeros)
    if (zero->use_empty())
      rewriter.eraseOp(zero);
}

/// Fuses cast(rescale(product, scale)) to FP16, with its gs.cast_stats and
/// the gs.grad_stats of its result, into one gs.scaled_contraction; fails
/// when the shape of the IR does not allow it.
LogicalResult fuseScaledProduct(RewriterBase &rewriter,
                                DominanceInfo &dominance, CastOp cast) {
  auto rescale = cast.getInput().getDefiningOp<RescaleOp>();
  if (!rescale || !cast.getType().getElementType().isF16())
    return failure();
  Operation *producer = rescale.getInput().getDefiningOp();
  if (!isFusable(producer) || !producer->hasOneUse())
    return failure();
  if (llvm::any_of(rescale->getUsers(), [&](Operation *user) {
        return user != cast && !isa<CastStatsOp>(user);
      }))
    return failure();

  rewriter.setInsertionPoint(rescale);
  auto fused = ScaledContractionOp::create(
      rewriter, producer->getLoc(), cast.getType(),
      StatsType::get(cast.getContext()),
      RankedTensorType::get({telemetry::NumCastCounts}, rewriter.getI64Type()),
      rescale.getScale(), /*relu_mask=*/Value());
  Block *body = rewriter.createBlock(&fused.getBody());
  rewriter.moveOpBefore(producer, body, body->end());
  rewriter.setInsertionPointToEnd(body);
  YieldOp::create(rewriter, producer->getLoc(), producer->getResults());
  for (Operation *user : llvm::make_early_inc_range(rescale->getUsers()))
    if (isa<CastStatsOp>(user))
      rewriter.replaceOp(user, fused.getCastCounts());
  for (Operation *user : llvm::make_early_inc_range(cast->getUsers()))
    if (isa<GradStatsOp>(user))
      rewriter.replaceOp(user, fused.getStats());
  rewriter.replaceOp(cast, fused.getResult());
  rewriter.eraseOp(rescale);
  fuseReluMask(rewriter, dominance, fused);
  return success();
}

struct FuseEpiloguesPass
    : mlir::gs::impl::FuseEpiloguesBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    // Only the fusions: the rest of the IR stays as it is.
    SmallVector<CastOp> casts;
    getOperation()->walk([&](CastOp cast) { casts.push_back(cast); });
    IRRewriter rewriter(&getContext());
    DominanceInfo &dominance = getAnalysis<DominanceInfo>();
    for (CastOp cast : casts)
      (void)fuseScaledProduct(rewriter, dominance, cast);
  }
};
} // namespace
