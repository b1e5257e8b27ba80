//===- FillPadFrames.cpp - Padding fills only the frame ---------*- C++ -*-===//
//
// tensor.pad bufferizes into a fill of the whole padded buffer and a copy
// of the source into its interior: every element written twice. Here a pad
// by a constant becomes fills of the frame alone, one slab per padded side
// of each dimension (the dimensions before it restricted to the interior,
// so the slabs are disjoint), and the source inserted into the interior.
//
//===----------------------------------------------------------------------===//

#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::gs {
#define GEN_PASS_DEF_FILLPADFRAMES
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
struct PadAsFrame : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::PadOp pad,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = pad.getResultType();
    Value value = pad.getConstantPaddingValue();
    if (!value || !type.hasStaticShape() ||
        !pad.getSourceType().hasStaticShape() || pad.getNofold() ||
        ShapedType::isDynamicShape(pad.getStaticLow()) ||
        ShapedType::isDynamicShape(pad.getStaticHigh()) ||
        llvm::any_of(pad.getStaticLow(), [](int64_t v) { return v < 0; }) ||
        llvm::any_of(pad.getStaticHigh(), [](int64_t v) { return v < 0; }))
      return rewriter.notifyMatchFailure(pad, "needs a static, constant pad");
    Location loc = pad.getLoc();
    ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
    ArrayRef<int64_t> source = pad.getSourceType().getShape();
    int64_t rank = type.getRank();
    SmallVector<int64_t> ones(rank, 1);
    Value frame = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    // Fills the box at `offsets` of `sizes` with the padding value.
    auto fill = [&](ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
      Value box = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get(sizes, type.getElementType()),
          frame, ValueRange(), ValueRange(), ValueRange(), offsets, sizes,
          ones);
      Value filled =
          linalg::FillOp::create(rewriter, loc, value, box).getResult(0);
      frame = tensor::InsertSliceOp::create(rewriter, loc, filled, frame,
                                            ValueRange(), ValueRange(),
                                            ValueRange(), offsets, sizes, ones);
    };
    // Dimension d's slabs: the interior of the dimensions before it, the
    // whole of those after it.
    SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape());
    for (int64_t d = 0; d < rank; ++d) {
      if (low[d] > 0) {
        offsets[d] = 0;
        sizes[d] = low[d];
        fill(offsets, sizes);
      }
      if (high[d] > 0) {
        offsets[d] = low[d] + source[d];
        sizes[d] = high[d];
        fill(offsets, sizes);
      }
      offsets[d] = low[d];
      sizes[d] = source[d];
    }
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        pad, pad.getSource(), frame, ValueRange(), ValueRange(), ValueRange(),
        low, source, ones);
    return success();
  }
};

struct FillPadFramesPass : gs::impl::FillPadFramesBase<FillPadFramesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PadAsFrame>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
