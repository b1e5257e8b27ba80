//===- PrefetchBlockOutputs.cpp - Outputs in L2 before a block -*- C++ -*-===//
//
// A register block loads its accumulators from the output and stores them
// back after its steps. Before the steps, the rows the next panel's block
// at the same rows will load are prefetched into the L2 cache.
//
//===----------------------------------------------------------------------===//

#include "gs/Pipelines/Passes.h"

#include "RegisterBlockLoops.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::gs {
#define GEN_PASS_DEF_PREFETCHBLOCKOUTPUTS
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// The L2 cache (x86's prefetcht1): the lines wait there for their block
/// without taking the L1 cache from the one running.
constexpr uint32_t kL2Locality = 2;

/// A cache line.
constexpr int64_t kLineBytes = 64;

/// Prefetches the row that `read` (an accumulator row of a block `width`
/// columns wide) reads, `width` columns further along, in the buffer that
/// its memref views through subviews; the last columns the row of that
/// buffer can hold at most. One prefetch per line: only reads that start a
/// line's worth of columns into the block (with AVX2, every other read).
/// Skips reads it cannot place.
void prefetchNextPanelRow(RewriterBase &rewriter, vector::TransferReadOp read) {
  auto view = dyn_cast<MemRefType>(read.getBase().getType());
  auto vector = read.getVectorType();
  std::optional<int64_t> columnInBlock =
      read.getIndices().empty() ? std::nullopt
                                : getConstantIntValue(read.getIndices().back());
  if (!view || vector.getRank() != 1 || vector.isScalable() ||
      !read.getPermutationMap().isMinorIdentity() ||
      ShapedType::isDynamic(view.getShape().back()) || !columnInBlock ||
      (*columnInBlock * view.getElementTypeBitWidth() / 8) % kLineBytes != 0)
    return;
  int64_t width = view.getShape().back();
  Location loc = read.getLoc();
  rewriter.setInsertionPoint(read);
  Value memref = read.getBase();
  SmallVector<Value> indices(read.getIndices());
  while (auto subview = memref.getDefiningOp<memref::SubViewOp>()) {
    SmallVector<Value> resolved;
    affine::resolveIndicesIntoOpWithOffsetsAndStrides(
        rewriter, loc, subview.getMixedOffsets(), subview.getMixedStrides(),
        subview.getDroppedDims(), indices, resolved);
    indices = std::move(resolved);
    memref = subview.getSource();
  }
  auto buffer = cast<MemRefType>(memref.getType());
  int64_t rowLength = buffer.getShape().back();
  if (ShapedType::isDynamic(rowLength) || rowLength < vector.getNumElements())
    return;
  // min(column + width, rowLength - lanes): within the row.
  AffineExpr column = rewriter.getAffineDimExpr(0);
  AffineMap next = AffineMap::get(
      1, 0,
      {column + width,
       rewriter.getAffineConstantExpr(rowLength - vector.getNumElements())},
      rewriter.getContext());
  indices.back() = affine::makeComposedAffineMin(
                       rewriter, loc, next, {getAsOpFoldResult(indices.back())})
                       .getResult();
  memref::PrefetchOp::create(rewriter, loc, memref, indices,
                             /*isWrite=*/false, kL2Locality,
                             /*isDataCache=*/true);
}

struct PrefetchBlockOutputsPass
    : gs::impl::PrefetchBlockOutputsBase<PrefetchBlockOutputsPass> {
  void runOnOperation() override {
    SmallVector<vector::TransferReadOp> reads;
    getOperation()->walk([&](scf::ForOp loop) {
      if (!gs::isRegisterBlockSteps(loop))
        return;
      for (Value init : loop.getInitArgs())
        if (auto read = init.getDefiningOp<vector::TransferReadOp>())
          reads.push_back(read);
    });
    IRRewriter rewriter(&getContext());
    for (vector::TransferReadOp read : reads)
      prefetchNextPanelRow(rewriter, read);
  }
};
} // namespace
