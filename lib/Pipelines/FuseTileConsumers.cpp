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
  /// How far along `dim` the tiles reach: the dimension's size, or less
  /// where the loop was peeled and an edge tile after it covers the rest.
  int64_t covered;
};

/// How `loop` writes its result `index`, if each iteration writes a tile of
/// it that no other iteration reads or writes: the iteration inserts its
/// tile at offsets that are 0 but for one, the induction variable,
/// stepping from 0 by the tile's size up to that dimension's size or a
/// multiple of the tile's size short of it, and reads the result's running
/// value only where it writes, as its tile's destination. A tile is then
/// final at the end of its iteration, and holds what the whole loop leaves
/// there.
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
      if (movingDim || size != *step || *upper > shape[dim] ||
          *upper % *step != 0)
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
  return TileWrite{insert, *movingDim, *upper};
}

/// A tile loop's result as its readers see it: the loop's result, or where
/// the loop was peeled (a GEMM's panels of 24 columns over 128 on AVX2),
/// the edge tile inserted after it.
struct TiledResult {
  scf::ForOp loop;
  unsigned index;
  TileWrite write;
  /// The edge tile's insert into the loop's result, covering what the
  /// tiles do not; null where they cover it all.
  tensor::InsertSliceOp edge;
  /// What readers read: the loop's result or the edge's insert.
  Value value() { return edge ? edge.getResult() : loop.getResult(index); }
};

/// Whether a slice at `offsets` of `sizes` (all static) is the part of
/// the whole tensor that tile write `write` leaves to an edge tile: from
/// `write.covered` on along the tiles' dimension, all of every other one.
bool isEdgeRegion(ArrayRef<OpFoldResult> offsets, ArrayRef<int64_t> sizes,
                  TileWrite write) {
  ArrayRef<int64_t> shape = write.insert.getDestType().getShape();
  for (auto [dim, offset, size] : llvm::enumerate(offsets, sizes)) {
    int64_t start = dim == write.dim ? write.covered : 0;
    if (getConstantIntValue(offset) != start || size != shape[dim] - start)
      return false;
  }
  return true;
}

/// The tiled result that `value` is, if it is one whose tiles, and edge
/// tile, cover it: a tile loop's result, or the edge tile inserted into
/// one, where nothing but the edge reads the loop's result (to take the
/// edge's initial value) and one reader reads the whole: fused there, the
/// whole result is never written. Where other readers keep it, the tiles
/// of a peeled loop cost more than they save (AVX2's 24-column panels:
/// the MLP's step 0.41 ms against 0.40 with its forward layer's bias and
/// ReLU, whose f32 result the backward reads too, in the loop).
std::optional<TiledResult> getTiledResult(Value value) {
  auto edge = value.getDefiningOp<tensor::InsertSliceOp>();
  Value whole = edge ? edge.getDest() : value;
  auto loop = whole.getDefiningOp<scf::ForOp>();
  if (!loop)
    return std::nullopt;
  unsigned index = cast<OpResult>(whole).getResultNumber();
  std::optional<TileWrite> write = getTileWrite(loop, index);
  if (!write)
    return std::nullopt;
  int64_t size = write->insert.getDestType().getDimSize(write->dim);
  if (!edge)
    return write->covered == size
               ? std::optional(TiledResult{loop, index, *write, nullptr})
               : std::nullopt;
  if (write->covered == size || edge->getBlock() != loop->getBlock() ||
      !edge->hasOneUse() || !edge.hasUnitStride() ||
      edge.getSourceType().getShape() != edge.getStaticSizes() ||
      !isEdgeRegion(edge.getMixedOffsets(), edge.getStaticSizes(), *write))
    return std::nullopt;
  for (Operation *user : whole.getUsers()) {
    if (user == edge)
      continue;
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    if (!slice || !slice.hasUnitStride() ||
        slice.getType().getShape() != slice.getStaticSizes() ||
        !isEdgeRegion(slice.getMixedOffsets(), slice.getStaticSizes(), *write))
      return std::nullopt;
  }
  return TiledResult{loop, index, *write, edge};
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
  TiledResult tiled;
  /// The consumer's iteration domain over a tile, and over the edge tile
  /// (if any): offsets and sizes.
  SmallVector<OpFoldResult> offsets, sizes, edgeOffsets, edgeSizes;
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
  // The loop an operand comes from, directly or through an edge tile.
  auto loopOf = [](Value operand) {
    if (auto edge = operand.getDefiningOp<tensor::InsertSliceOp>())
      operand = edge.getDest();
    return operand.getDefiningOp<scf::ForOp>();
  };
  scf::ForOp loop;
  for (Value operand : consumer->getOperands()) {
    scf::ForOp producer = loopOf(operand);
    if (producer && producer->getBlock() == consumer->getBlock() &&
        (!loop || loop->isBeforeInBlock(producer)))
      loop = producer;
  }
  if (!loop)
    return std::nullopt;
  std::optional<Value> read;
  AffineMap readMap;
  for (OpOperand &operand : consumer->getOpOperands()) {
    if (loopOf(operand.get()) != loop)
      continue;
    AffineMap map = consumer.getMatchingIndexingMap(&operand);
    if (consumer.isDpsInit(&operand) || !map.isPermutation() ||
        (read && (*read != operand.get() || readMap != map)))
      return std::nullopt;
    read = operand.get();
    readMap = map;
  }
  std::optional<TiledResult> tiled = getTiledResult(*read);
  if (!tiled)
    return std::nullopt;
  // The consumer's iterations over a tile and over the edge.
  unsigned numLoops = consumer.getNumLoops();
  Candidate found{consumer, *tiled};
  auto iterationsOf = [&](auto slice, SmallVectorImpl<OpFoldResult> &offsets,
                          SmallVectorImpl<OpFoldResult> &sizes) {
    offsets.resize(numLoops);
    sizes.resize(numLoops);
    for (unsigned dim = 0; dim < readMap.getNumResults(); ++dim) {
      unsigned loopDim = readMap.getDimPosition(dim);
      offsets[loopDim] = slice.getMixedOffsets()[dim];
      sizes[loopDim] = slice.getMixedSizes()[dim];
    }
  };
  tensor::InsertSliceOp insert = tiled->write.insert;
  iterationsOf(insert, found.offsets, found.sizes);
  if (tiled->edge)
    iterationsOf(tiled->edge, found.edgeOffsets, found.edgeSizes);
  int64_t tileElements = insert.getSourceType().getNumElements();
  // Tiles along the outermost loop (or outside loops of one iteration)
  // keep every point's place in the loops' order; so does the edge tile,
  // the last along it.
  SmallVector<int64_t> ranges = consumer.getStaticLoopRanges();
  unsigned tiledDim = readMap.getDimPosition(tiled->write.dim);
  bool inOrder = llvm::all_of(ArrayRef(ranges).take_front(tiledDim),
                              [](int64_t range) { return range == 1; });
  if (tileElements < kMinTileElements || !reducesAsTiled(consumer, inOrder))
    return std::nullopt;
  return found;
}

/// `consumer`, reading `read`, computed over the iterations at `offsets` of
/// `sizes` that read the tile `insert` inserts (into `read` or into the
/// running value it stands for), from the tile itself, into the running
/// outputs `running`: the outputs after it, the elementwise ones' slices
/// inserted.
SmallVector<Value> computeOnTile(RewriterBase &rewriter, OpBuilder &builder,
                                 linalg::GenericOp consumer, Value read,
                                 tensor::InsertSliceOp insert,
                                 ArrayRef<OpFoldResult> offsets,
                                 ArrayRef<OpFoldResult> sizes,
                                 ValueRange running) {
  Location loc = consumer.getLoc();
  // The consumer reading the running result, the tile just inserted, and
  // writing the running outputs...
  IRMapping mapping;
  mapping.map(read, insert.getResult());
  auto whole = cast<linalg::GenericOp>(builder.clone(*consumer, mapping));
  for (auto [init, arg] : llvm::zip_equal(whole.getDpsInitsMutable(), running))
    init.set(arg);
  // ... then over the tile's iterations only.
  FailureOr<TilingResult> tiled =
      cast<TilingInterface>(*whole).getTiledImplementation(builder, offsets,
                                                           sizes);
  assert(succeeded(tiled) && "a generic tiles at any offsets and sizes");
  // The tile's slice of the running result is the tile; a slice of all of
  // a tensor (a reduction's running value) is the tensor.
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
  SmallVector<Value> outputs;
  for (auto [i, tile] : llvm::enumerate(tiled->tiledValues)) {
    SmallVector<OpFoldResult> tileOffsets, tileSizes;
    LogicalResult position =
        cast<TilingInterface>(*whole).getResultTilePosition(
            builder, i, offsets, sizes, tileOffsets, tileSizes);
    assert(succeeded(position) && "a generic's result tiles are slices");
    (void)position;
    if (tileOffsets.empty()) {
      outputs.push_back(tile);
      continue;
    }
    SmallVector<OpFoldResult> strides(tileOffsets.size(),
                                      builder.getIndexAttr(1));
    outputs.push_back(tensor::InsertSliceOp::create(
        builder, loc, tile, running[i], tileOffsets, tileSizes, strides));
  }
  rewriter.eraseOp(whole);
  return outputs;
}

/// Replaces `slice`, of a tensor that is empty or `fill`ed, by a tensor of
/// its own of the slice's shape, empty or filled likewise.
void replaceWithOwnTile(RewriterBase &rewriter, tensor::ExtractSliceOp slice,
                        linalg::FillOp fill) {
  rewriter.setInsertionPoint(slice);
  Value tile = tensor::EmptyOp::create(rewriter, slice.getLoc(),
                                       slice.getType().getShape(),
                                       slice.getType().getElementType());
  if (fill)
    tile = linalg::FillOp::create(rewriter, fill.getLoc(), fill.value(), tile)
               .getResult(0);
  rewriter.replaceOp(slice, tile);
}

/// `candidate`'s consumer computed in its loop, a tile after each tile:
/// the loop carries the consumer's outputs, each iteration computing the
/// consumer over its tile's iterations (its outputs' slices, the
/// reductions' running values) from the tile itself; and after the edge
/// tile, if any, over the edge's. The edge then starts from the loop's
/// initial value, which the loop leaves there (a fill or empty tensor of
/// the edge's size where it is one of the whole).
scf::ForOp fuseIntoLoop(RewriterBase &rewriter, Candidate &candidate) {
  linalg::GenericOp consumer = candidate.consumer;
  TiledResult &tiled = candidate.tiled;
  Value read = tiled.value();
  SmallVector<Value> inits = consumer.getDpsInits();
  auto yieldTiles = [&](OpBuilder &builder, Location,
                        ArrayRef<BlockArgument> running) {
    return computeOnTile(rewriter, builder, consumer, read, tiled.write.insert,
                         candidate.offsets, candidate.sizes,
                         ValueRange(running));
  };
  FailureOr<LoopLikeOpInterface> fused = tiled.loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false, yieldTiles);
  assert(succeeded(fused) && "scf.for carries more values");
  auto loop = cast<scf::ForOp>(fused->getOperation());
  ValueRange outputs = loop.getResults().take_back(inits.size());
  if (!tiled.edge) {
    rewriter.replaceOp(consumer, outputs);
    return loop;
  }
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(tiled.edge);
  SmallVector<Value> final =
      computeOnTile(rewriter, rewriter, consumer, read, tiled.edge,
                    candidate.edgeOffsets, candidate.edgeSizes, outputs);
  rewriter.replaceOp(consumer, final);
  // The edge's start: the initial value there, a fill of the edge's size
  // where the whole was filled.
  Value result = loop.getResult(tiled.index);
  Value init = loop.getInitArgs()[tiled.index];
  auto fill = init.getDefiningOp<linalg::FillOp>();
  for (Operation *user : llvm::make_early_inc_range(result.getUsers())) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    if (!slice)
      continue;
    if (!fill && !init.getDefiningOp<tensor::EmptyOp>()) {
      rewriter.modifyOpInPlace(slice,
                               [&] { slice.getSourceMutable().set(init); });
      continue;
    }
    replaceWithOwnTile(rewriter, slice, fill);
  }
  // The consumer was the edge's one reader (getTiledResult).
  rewriter.eraseOp(tiled.edge);
  return loop;
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
    replaceWithOwnTile(rewriter, slice, fill);
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
      Value read = candidate->tiled.value();
      for (Value operand : consumer->getOperands())
        if (operand != read)
          used.push_back(operand);
      used.append(captured.begin(), captured.end());
      DominanceInfo dominance;
      if (!gs::moveDefinitionsAbove(used, candidate->tiled.loop, dominance))
        continue;
      rewriter.setInsertionPoint(candidate->tiled.loop);
      scf::ForOp loop = fuseIntoLoop(rewriter, *candidate);
      computeIntoOwnTiles(rewriter, loop, candidate->tiled.index);
    }
  }
};
} // namespace
