//===- FuseEpilogues.cpp - Backward GEMMs with their scaling epilogue -----===//
//
// gs-gradient-scaling measures and rescales each FP16 data gradient a
// contraction produces: the FP32 product is rescaled, its rounding to FP16
// counted and cast, and the cast result's statistics feed the next scale.
// One gs.fused_gemm stands for all of it, so that a target can compute
// the epilogue where the product is (docs/GPU.md).
//
//===----------------------------------------------------------------------===//

#include "gs/Dialect/GS/IR/GSOps.h"
#include "gs/Dialect/GS/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::gs {
#define GEN_PASS_DEF_FUSEEPILOGUES
#include "gs/Dialect/GS/Transforms/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;
using namespace mlir::gs;

namespace {
/// The operands of a 2-D FP16 product into FP32 that gs.fused_gemm can
/// compute: gs.gemm without C, alpha and beta 1, or gs.matmul of matrices.
struct Product {
  Value a, b;
  bool transA = false, transB = false;
};

std::optional<Product> matchProduct(Operation *op) {
  Product product;
  if (auto gemm = dyn_cast_or_null<GemmOp>(op)) {
    if (gemm.getC() || !gemm.getAlpha().isExactlyValue(1.0) ||
        !gemm.getBeta().isExactlyValue(1.0))
      return std::nullopt;
    product = {gemm.getA(), gemm.getB(), gemm.getTransA(), gemm.getTransB()};
  } else if (auto matmul = dyn_cast_or_null<MatMulOp>(op)) {
    product = {matmul.getLhs(), matmul.getRhs()};
  } else {
    return std::nullopt;
  }
  for (Value operand : {product.a, product.b}) {
    auto type = cast<RankedTensorType>(operand.getType());
    if (type.getRank() != 2 || !type.getElementType().isF16())
      return std::nullopt;
  }
  if (!cast<RankedTensorType>(op->getResult(0).getType())
           .getElementType()
           .isF32())
    return std::nullopt;
  return product;
}

/// Fuses cast(rescale(product, scale)) to FP16, with its gs.cast_stats and
/// the gs.grad_stats of its result, into one gs.fused_gemm; fails when the
/// shape of the IR does not allow it.
LogicalResult fuseScaledProduct(RewriterBase &rewriter, CastOp cast) {
  auto rescale = cast.getInput().getDefiningOp<RescaleOp>();
  if (!rescale || !cast.getType().getElementType().isF16())
    return failure();
  Operation *producer = rescale.getInput().getDefiningOp();
  std::optional<Product> product = matchProduct(producer);
  if (!product || !producer->hasOneUse())
    return failure();
  if (llvm::any_of(rescale->getUsers(), [&](Operation *user) {
        return user != cast && !isa<CastStatsOp>(user);
      }))
    return failure();

  rewriter.setInsertionPoint(rescale);
  auto fused = FusedGemmOp::create(
      rewriter, producer->getLoc(), cast.getType(),
      StatsType::get(cast.getContext()),
      RankedTensorType::get({telemetry::NumCastCounts}, rewriter.getI64Type()),
      product->a, product->b, rescale.getScale(), /*bias=*/Value(),
      product->transA, product->transB);
  for (Operation *user : llvm::make_early_inc_range(rescale->getUsers()))
    if (isa<CastStatsOp>(user))
      rewriter.replaceOp(user, fused.getCastCounts());
  for (Operation *user : llvm::make_early_inc_range(cast->getUsers()))
    if (isa<GradStatsOp>(user))
      rewriter.replaceOp(user, fused.getStats());
  rewriter.replaceOp(cast, fused.getResult());
  rewriter.eraseOp(rescale);
  rewriter.eraseOp(producer);
  return success();
}

struct FuseEpiloguesPass
    : mlir::gs::impl::FuseEpiloguesBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    // Only the fusions: the rest of the IR stays as it is.
    SmallVector<CastOp> casts;
    getOperation()->walk([&](CastOp cast) { casts.push_back(cast); });
    IRRewriter rewriter(&getContext());
    for (CastOp cast : casts)
      (void)fuseScaledProduct(rewriter, cast);
  }
};
} // namespace
