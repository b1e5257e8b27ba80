//===- FuseTileConsumers.cpp - Epilogues in the producing tile loop -------===//
//
// An elementwise op or order-free statistic that reads the result of a
// tile loop (a GEMM's or convolution's loop over blocks of its output) is
// computed in that loop, a tile at a time, right after the tile: the CPU
// twin of a GPU kernel's epilogue. A gradient's rescale, rounding to FP16
// and underflow counts, or a ReLU mask and batch normalization's backward
// product, had read the whole result back from memory in a pass of their
// own.
//
//===----------------------------------------------------------------------===//

#include "MoveDefinitions.h"
#include "gs/Conversion/LinalgReductions.h"
#include "gs/Pipelines/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::gs {
#define GEN_PASS_DEF_FUSETILECONSUMERS
#include "gs/Pipelines/Passes.h.inc"
} // namespace mlir::gs

using namespace mlir;

namespace {
/// The fewest elements of a tile worth a consumer's loop nest per tile.
constexpr int64_t kMinTileElements = 512;
/// The most elements of a reduction's output (its running value, which
/// every tile reads and writes) that stays in the L1 cache.
constexpr int64_t kMaxReductionElements = 4096;

/// How a tile loop writes one of its results.
struct TileWrite {
  /// The insert of the iteration's tile, yielded.
  tensor::InsertSliceOp insert;
  /// The dimension along which the loop's induction variable moves it.
  unsigned dim;
};

/// How `loop` writes its result `index`, if each iteration writes a tile of
/// it that no other iteration reads or writes, and the tiles cover it: the
/// iteration inserts its tile at offsets that are 0 but for one, the
/// induction variable, stepping from 0 to that dimension's size by the
/// tile's size, and reads the result's running value only where it
/// writes, as its tile's destination. A tile is then final at the end of
/// its iteration, and holds what the whole loop leaves there.
std::optional<TileWrite> getTileWrite(scf::ForOp loop, unsigned index) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto insert = yield.getOperand(index).getDefiningOp<tensor::InsertSliceOp>();
  BlockArgument running = loop.getRegionIterArg(index);
  if (!insert || insert->getBlock() != loop.getBody() ||
      insert.getDest() != running || !insert.hasUnitStride() ||
      insert.getSourceType().getRank() != insert.getDestType().getRank() ||
      !insert.getDestType().hasStaticShape() ||
      !llvm::equal(insert.getStaticSizes(), insert.getSourceType().getShape()))
    return std::nullopt;
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (lower != 0 || !upper || !step)
    return std::nullopt;
  std::optional<unsigned> movingDim;
  ArrayRef<int64_t> shape = insert.getDestType().getShape();
  for (auto [dim, offset] : llvm::enumerate(insert.getMixedOffsets())) {
    int64_t size = insert.getStaticSizes()[dim];
    if (offset == OpFoldResult(loop.getInductionVar())) {
      if (movingDim || size != *step || *upper != shape[dim])
        return std::nullopt;
      movingDim = dim;
    } else if (getConstantIntValue(offset) != 0 || size != shape[dim]) {
      return std::nullopt;
    }
  }
  if (!movingDim)
    return std::nullopt;
  for (OpOperand &use : running.getUses()) {
    if (use.getOwner() == insert)
      continue;
    auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
    if (!slice || !slice.isSameAs(insert, [](OpFoldResult a, OpFoldResult b) {
          return a == b;
        }))
      return std::nullopt;
  }
  return TileWrite{insert, *movingDim};
}

/// Whether every output of `op` is written once per point (an elementwise
/// op's) or is a small reduction (a count, a per-channel sum), combined
/// in an order `inOrder` allows: any order for integer counts, max and
/// min; floating-point sums only where the tiles keep the loops' order
/// (`inOrder`). A large one (batch normalization's sums over the images
/// into a lane per channel and position) would be read and written again
/// for every tile, where its own pass sums each lane in registers.
bool reducesAsTiled(linalg::GenericOp op, bool inOrder) {
  return gs::outputsWrittenOrReduced(
      op, [&](OpOperand &init, const gs::OutputReduction &reduction) {
        return (reduction.identity.orderIndependent || inOrder) &&
               cast<RankedTensorType>(init.get().getType()).getNumElements() <=
                   kMaxReductionElements;
      });
}

/// A consumer fused into its producer's tile loop.
struct Candidate {
  linalg::GenericOp consumer;
  scf::ForOp loop;
  unsigned result;
  TileWrite write;
  /// The consumer's iteration domain over a tile: offsets and sizes.
  SmallVector<OpFoldResult> offsets, sizes;
};

/// `consumer` and the tile loop whose result it reads, if it can be
/// computed a tile at a time there: of the loops whose results it reads,
/// the last one (the others are there before it), read through one
/// permutation map (each tile is a block of its iterations), not as an
/// output; its outputs are elementwise or reduce in any order, or in
/// order where the tiles run along its outermost loop (floating-point
/// sums); a tile holds enough elements.
std::optional<Candidate> matchCandidate(linalg::GenericOp consumer) {
  if (!consumer.hasPureTensorSemantics() || consumer.hasDynamicShape())
    return std::nullopt;
  scf::ForOp loop;
  for (Value operand : consumer->getOperands()) {
    auto producer = operand.getDefiningOp<scf::ForOp>();
    if (producer && producer->getBlock() == consumer->getBlock() &&
        (!loop || loop->isBeforeInBlock(producer)))
      loop = producer;
  }
  if (!loop)
    return std::nullopt;
  std::optional<unsigned> result;
  AffineMap readMap;
  for (OpOperand &operand : consumer->getOpOperands()) {
    if (operand.get().getDefiningOp() != loop)
      continue;
    AffineMap map = consumer.getMatchingIndexingMap(&operand);
    unsigned number = cast<OpResult>(operand.get()).getResultNumber();
    if (consumer.isDpsInit(&operand) || !map.isPermutation() ||
        (result && (*result != number || readMap != map)))
      return std::nullopt;
    result = number;
    readMap = map;
  }
  std::optional<TileWrite> write = getTileWrite(loop, *result);
  if (!write)
    return std::nullopt;
  // The consumer's iterations over a tile.
  unsigned numLoops = consumer.getNumLoops();
  Candidate found{consumer,
                  loop,
                  *result,
                  *write,
                  SmallVector<OpFoldResult>(numLoops),
                  SmallVector<OpFoldResult>(numLoops)};
  SmallVector<int64_t> ranges = consumer.getStaticLoopRanges();
  tensor::InsertSliceOp insert = write->insert;
  int64_t tileElements = 1;
  for (unsigned dim = 0; dim < readMap.getNumResults(); ++dim) {
    unsigned loopDim = readMap.getDimPosition(dim);
    found.offsets[loopDim] = insert.getMixedOffsets()[dim];
    found.sizes[loopDim] = insert.getMixedSizes()[dim];
    tileElements *= insert.getStaticSizes()[dim];
  }
  // Tiles along the outermost loop (or outside loops of one iteration)
  // keep every point's place in the loops' order.
  unsigned tiledDim = readMap.getDimPosition(write->dim);
  bool inOrder = llvm::all_of(ArrayRef(ranges).take_front(tiledDim),
                              [](int64_t range) { return range == 1; });
  if (tileElements < kMinTileElements || !reducesAsTiled(consumer, inOrder))
    return std::nullopt;
  return found;
}

/// `candidate`'s consumer computed in its loop, a tile after each tile:
/// the loop carries the consumer's outputs, each iteration computing the
/// consumer over its tile's iterations (its outputs' slices, the
/// reductions' running values) from the tile itself.
scf::ForOp fuseIntoLoop(RewriterBase &rewriter, Candidate &candidate) {
  linalg::GenericOp consumer = candidate.consumer;
  scf::ForOp loop = candidate.loop;
  Value result = loop.getResult(candidate.result);
  tensor::InsertSliceOp insert = candidate.write.insert;
  SmallVector<Value> inits = consumer.getDpsInits();
  auto yieldTiles = [&](OpBuilder &builder, Location loc,
                        ArrayRef<BlockArgument> running) {
    // The consumer reading the loop's running result, the tile just
    // inserted, and writing the running outputs...
    IRMapping mapping;
    mapping.map(result, insert.getResult());
    auto whole = cast<linalg::GenericOp>(builder.clone(*consumer, mapping));
    for (auto [init, arg] :
         llvm::zip_equal(whole.getDpsInitsMutable(), running))
      init.set(arg);
    // ... then over the tile's iterations only.
    FailureOr<TilingResult> tiled =
        cast<TilingInterface>(*whole).getTiledImplementation(
        builder, candidate.offsets, candidate.sizes);
    assert(succeeded(tiled) && "a generic tiles at any offsets and sizes");
    // The tile's slice of the running result is the tile; a slice of all
    // of a tensor (a reduction's running value) is the tensor.
    for (Operation *slice : tiled->generatedSlices) {
      auto extract = dyn_cast<tensor::ExtractSliceOp>(slice);
      if (!extract)
        continue;
      if (extract.getSource() == insert.getResult() &&
          extract.isSameAs(insert, [](OpFoldResult a, OpFoldResult b) {
            return isEqualConstantIntOrValue(a, b);
          }))
        rewriter.replaceOp(extract, insert.getSource());
      else if (extract.getSourceType() == extract.getType() &&
               areAllConstantIntValue(extract.getMixedOffsets(), 0))
        rewriter.replaceOp(extract, extract.getSource());
    }
    SmallVector<Value> yielded;
    for (auto [i, tile] : llvm::enumerate(tiled->tiledValues)) {
      SmallVector<OpFoldResult> offsets, sizes;
      LogicalResult position =
          cast<TilingInterface>(*whole).getResultTilePosition(
          builder, i, candidate.offsets, candidate.sizes, offsets, sizes);
      assert(succeeded(position) && "a generic's result tiles are slices");
      (void)position;
      if (offsets.empty()) {
        yielded.push_back(tile);
        continue;
      }
      SmallVector<OpFoldResult> strides(offsets.size(),
                                        builder.getIndexAttr(1));
      yielded.push_back(tensor::InsertSliceOp::create(
          builder, loc, tile, running[i], offsets, sizes, strides));
    }
    rewriter.eraseOp(whole);
    return yielded;
  };
  FailureOr<LoopLikeOpInterface> fused = loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false, yieldTiles);
  assert(succeeded(fused) && "scf.for carries more values");
  rewriter.replaceOp(consumer, (*fused)->getResults().take_back(inits.size()));
  return cast<scf::ForOp>(fused->getOperation());
}

/// `loop` without its iteration argument and result `index`, which nothing
/// reads: the loop yields the argument unchanged, and nothing else uses it.
void dropIterArg(RewriterBase &rewriter, scf::ForOp loop, unsigned index) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  rewriter.modifyOpInPlace(yield, [&] { yield->eraseOperand(index); });
  SmallVector<Value> inits(loop.getInitArgs());
  Value dropped = inits[index];
  inits.erase(inits.begin() + index);
  rewriter.setInsertionPoint(loop);
  auto shorter = scf::ForOp::create(
      rewriter, loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
      loop.getStep(), inits, /*bodyBuilder=*/nullptr, loop.getUnsignedCmp());
  shorter->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  // The body moves over; the dropped argument, unused, stands for its
  // initial value.
  Block *body = shorter.getBody();
  if (!body->empty())
    rewriter.eraseOp(body->getTerminator());
  SmallVector<Value> arguments(body->getArguments());
  arguments.insert(arguments.begin() + 1 + index, dropped);
  rewriter.mergeBlocks(loop.getBody(), body, arguments);
  SmallVector<Value> results(shorter.getResults());
  results.insert(results.begin() + index, dropped);
  rewriter.replaceOp(loop, results);
}

/// Where nothing reads tile loop `loop`'s result `index` any more (its
/// consumers run in the loop now) and that result starts empty or filled
/// with a value, each iteration computes its tile into a tensor of its own,
/// empty or filled likewise (the tile's value at the start of its
/// iteration), and the loop stops carrying the result: the whole tensor is
/// never written, and one tile's buffer serves every iteration, in the
/// cache. False, changing nothing, elsewhere.
bool computeIntoOwnTiles(RewriterBase &rewriter, scf::ForOp loop,
                         unsigned index) {
  std::optional<TileWrite> write = getTileWrite(loop, index);
  if (!loop.getResult(index).use_empty() || !write ||
      !write->insert->hasOneUse())
    return false;
  Value init = loop.getInitArgs()[index];
  auto fill = init.getDefiningOp<linalg::FillOp>();
  Value empty = fill ? fill.getOutputs()[0] : init;
  if (!empty.getDefiningOp<tensor::EmptyOp>())
    return false;
  BlockArgument running = loop.getRegionIterArg(index);
  for (Operation *user : llvm::make_early_inc_range(running.getUsers())) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    if (!slice)
      continue;
    rewriter.setInsertionPoint(slice);
    Value tile = tensor::EmptyOp::create(rewriter, slice.getLoc(),
                                         slice.getType().getShape(),
                                         slice.getType().getElementType());
    if (fill)
      tile = linalg::FillOp::create(rewriter, fill.getLoc(), fill.value(), tile)
                 .getResult(0);
    rewriter.replaceOp(slice, tile);
  }
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(index, running); });
  rewriter.eraseOp(write->insert);
  // The result, carried unchanged now, goes.
  dropIterArg(rewriter, loop, index);
  // And its initial value, where nothing else reads it.
  if (fill && fill->use_empty())
    rewriter.eraseOp(fill);
  if (empty.use_empty())
    rewriter.eraseOp(empty.getDefiningOp());
  return true;
}

struct FuseTileConsumersPass
    : public gs::impl::FuseTileConsumersBase<FuseTileConsumersPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> consumers;
    getOperation()->walk([&](linalg::GenericOp op) {
      consumers.push_back(op);
    });
    for (linalg::GenericOp consumer : consumers) {
      std::optional<Candidate> candidate = matchCandidate(consumer);
      if (!candidate)
        continue;
      // What the consumer reads besides the tile must be there before the
      // loop (its outputs' initial values may move up).
      SetVector<Value> captured;
      getUsedValuesDefinedAbove(consumer.getRegion(), captured);
      SmallVector<Value> used;
      for (Value operand : consumer->getOperands())
        if (operand.getDefiningOp() != candidate->loop)
          used.push_back(operand);
      used.append(captured.begin(), captured.end());
      DominanceInfo dominance;
      if (!gs::moveDefinitionsAbove(used, candidate->loop, dominance))
        continue;
      rewriter.setInsertionPoint(candidate->loop);
      scf::ForOp loop = fuseIntoLoop(rewriter, *candidate);
      computeIntoOwnTiles(rewriter, loop, candidate->result);
    }
  }
};
} // namespace
