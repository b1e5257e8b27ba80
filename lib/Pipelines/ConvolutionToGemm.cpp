//===- ConvolutionToGemm.cpp - 2-D convolutions as GEMMs -------*- C++ -*-===//
//
// out[n, f, oh, ow] += sum_{c, kh, kw} in[n, c, oh*sh + kh*dh, ow*sw + kw*dw]
//                                     * w[f, c, kh, kw]
// is a GEMM of the filter (F x CK, CK = C*KH*KW) with the input's windows
// laid out as columns (im2col), in one of two orientations:
// - per image: col[n, ck, o] (O = OH*OW), out[n] = w * col[n]: N GEMMs of
//   F x CK x O, which suits forward and input-gradient convolutions;
// - images batched: col[ck, (n, o)], out^T = w * col: one GEMM of
//   F x CK x N*O between two transposes of the (small) output, which suits
//   outputs of a few positions: weight gradients (N = input channels, O =
//   the kernel's positions) and the last layers of deep networks.
// The window copy reads the input through an affine map, so strides and
// dilations cost nothing; FP16 inputs are widened to the accumulator's type
// as they are copied. Many images are taken a group at a time, so that the
// columns stay in blocks malloc reuses.
//
//===----------------------------------------------------------------------===//

#include "ConvolutionToGemm.h"
#include "gs/Conversion/GSToLinalg/GSToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;

/// The most bytes of columns that batched images build at once; more
/// images are taken a group at a time. (Blocks above glibc's largest mmap
/// threshold, 32 MiB, would be mapped afresh, and page-faulted, at every
/// step.) On an AVX-512 Xeon with 2 MiB of L2 cache, 8 MiB beat 16 by 7%
/// on ResNet-18's 14x14 3x3 layer (4 images of 196 columns a group, not 8)
/// and tied on its 7x7 one; 4 MiB lost 10% there (a group of 196 columns
/// leaves an edge panel of 4 columns).
static constexpr int64_t kMaxBatchedColumnBytes = 8 << 20;

/// The most bytes of columns one image, or one group, builds at once: more
/// are built a block at a time (of output rows, or of the reduction), so
/// that the GEMM reads the columns from the L2 cache where they were just
/// written. ResNet-18's 56x56 layer at batch 8 (AVX-512 Xeon, one thread):
/// train step 73-75 -> 62-67 ms for the forward and input gradient's blocks
/// of 8 output rows, 69 -> 60 ms more for the weight gradient's blocks.
static constexpr int64_t kColumnBlockBytes = 1 << 20;

/// `value` converted to the float type `type` (a no-op when it has it).
static Value widen(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return arith::ExtFOp::create(b, loc, type, value);
}

/// `value` (of a static shape) with dimensions grouped as `groups` says.
static Value collapse(OpBuilder &b, Location loc, Value value,
                      ArrayRef<ReassociationIndices> groups) {
  return tensor::CollapseShapeOp::create(b, loc, value, groups);
}

namespace {
/// The convolution's operands and sizes, as the GEMMs see them.
struct ConvShape {
  Operation *conv;
  Value input, filter, init;
  RankedTensorType outType;
  int64_t n, f, c, kh, kw, oh, ow;
  SmallVector<int64_t> strides, dilations;
};

/// The loops of the window copy: images, channels, kernel positions,
/// output positions.
enum WindowLoop { N, C, KH, KW, OH, OW };
} // namespace

/// Windows at least this wide (half a 512-bit vector of f32), and wider
/// than the output, are copied into transposed columns, along the window's
/// rows. Narrower ones lost so: ResNet-18's 7x7 layers (windows of 7 in
/// their weight gradients) ran their train steps 21-37% slower. Windows of
/// 14 won: ResNet-18's 14x14 3x3 layer step 3.6% faster, ResNeXt-50's
/// grouped one (16 channels and filters a group, whose GEMMs are too
/// narrow to hide the copy of runs of 3) 2x.
static constexpr int64_t kShortestTransposedRun = 8;

/// Dilated windows are copied into transposed columns only for outputs of
/// this many positions or more (a 512-bit vector of f32).
static constexpr int64_t kFewestDilatedPositions = 16;

/// Loops of linalg.conv_2d_nchw_fchw: (n, f, oh, ow, c, kh, kw).
static constexpr unsigned kImagesLoop = 0, kOutputRowsLoop = 2,
                          kChannelsLoop = 4, kWindowRowsLoop = 5;

/// The group loop of linalg.conv_2d_ngchw_gfchw: (n, g, f, oh, ow, c, kh,
/// kw).
static constexpr unsigned kGroupsLoop = 1;

/// The fewest filters, and reduction steps (channels x kernel positions), a
/// group for its convolution to run as a GEMM: fewer leave a register
/// block mostly empty. Depthwise convolutions (a filter and a channel a
/// group) stay loops.
static constexpr int64_t kMinGroupFilters = 4, kMinGroupSteps = 16;

/// The reduction steps of a GEMM panel (CPUKernelSchedule's kc).
static constexpr int64_t kPanelSteps = 256;

/// The largest divisor of `n` not above `limit` (at least 1).
static int64_t largestDivisorAtMost(int64_t n, int64_t limit) {
  int64_t divisor = std::clamp<int64_t>(limit, 1, n);
  while (n % divisor)
    --divisor;
  return divisor;
}

/// The rows of the columns matrix are padded to an odd number of cache
/// lines: the GEMM reads a panel of B as 256 rows at the row stride, and a
/// stride of an even number of lines (3136 floats at 56x56) maps those rows
/// onto a fraction of the L1 cache's sets, which then evict each other.
static int64_t paddedRowLength(int64_t length, Type element) {
  int64_t bytes = element.getIntOrFloatBitWidth() / 8;
  int64_t perLine = std::max<int64_t>(1, 64 / bytes);
  int64_t lines = llvm::divideCeil(length, perLine);
  return (lines % 2 ? lines : lines + 1) * perLine;
}

/// The input's windows as the GEMM's operand: the copy's loops in `order`
/// (a permutation of n, c, kh, kw, oh, ow), grouped into the operand's
/// dimensions by `groups`, in rows padded as paddedRowLength says; of
/// element type `element`.
static Value copyWindows(RewriterBase &rewriter, const ConvShape &s,
                         ArrayRef<WindowLoop> order,
                         ArrayRef<ReassociationIndices> groups, Type element) {
  MLIRContext *ctx = rewriter.getContext();
  Location loc = s.conv->getLoc();
  int64_t sizes[] = {s.n, s.c, s.kh, s.kw, s.oh, s.ow};
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> dims(6);
  for (auto [position, loop] : llvm::enumerate(order)) {
    shape.push_back(sizes[loop]);
    dims[loop] = getAffineDimExpr(position, ctx);
  }
  SmallVector<int64_t> matrixShape;
  for (const ReassociationIndices &group : groups) {
    int64_t size = 1;
    for (int64_t d : group)
      size *= shape[d];
    matrixShape.push_back(size);
  }
  SmallVector<int64_t> paddedShape(matrixShape);
  paddedShape.back() = paddedRowLength(matrixShape.back(), element);
  Value padded = tensor::EmptyOp::create(rewriter, loc, paddedShape, element);
  int64_t rank = matrixShape.size();
  Value matrix = tensor::ExtractSliceOp::create(
      rewriter, loc, RankedTensorType::get(matrixShape, element), padded,
      ValueRange(), ValueRange(), ValueRange(), SmallVector<int64_t>(rank, 0),
      matrixShape, SmallVector<int64_t>(rank, 1));
  Value target = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, element), matrix, groups);
  AffineMap windows = AffineMap::get(
      6, 0,
      {dims[N], dims[C], dims[OH] * s.strides[0] + dims[KH] * s.dilations[0],
       dims[OW] * s.strides[1] + dims[KW] * s.dilations[1]},
      ctx);
  Value copied =
      linalg::GenericOp::create(
          rewriter, loc, target.getType(), s.input, target,
          ArrayRef<AffineMap>{windows, rewriter.getMultiDimIdentityMap(6)},
          SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
          [&](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(b, l, widen(b, l, args[0], element));
          })
          .getResult(0);
  return collapse(rewriter, loc, copied, groups);
}

/// An empty tensor of `value`'s shape with its dimensions permuted.
static Value emptyPermuted(OpBuilder &b, Location loc, Value value,
                           ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(type.getDimSize(p));
  return tensor::EmptyOp::create(b, loc, shape, type.getElementType());
}

/// `value` with its dimensions permuted, into an empty tensor.
static Value transposed(OpBuilder &b, Location loc, Value value,
                        ArrayRef<int64_t> permutation) {
  return linalg::TransposeOp::create(b, loc, value,
                                     emptyPermuted(b, loc, value, permutation),
                                     permutation)
      ->getResult(0);
}

/// The accumulator of a GEMM computing the convolution's output with its
/// dimensions permuted: the init permuted, or, where the init is a fill
/// (an output accumulated from zeros), a fill of the permuted shape.
static Value permutedAccumulator(OpBuilder &b, Location loc, Value init,
                                 ArrayRef<int64_t> permutation) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return transposed(b, loc, init, permutation);
  return linalg::FillOp::create(b, loc, fill.getInputs(),
                                emptyPermuted(b, loc, init, permutation))
      .getResult(0);
}

/// The tensor that a GEMM's permuted result is transposed back into: the
/// init (so that a tile's result lands in its slice of the output), or a
/// fill's destination, where permutedAccumulator took the fill's place.
static Value resultDestination(Value init) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return fill.getOutputs().front();
  return init;
}

/// acc[m, n] += a[m, k] * b[k, n], as a generic.
static linalg::GenericOp matrixProduct(OpBuilder &b, Location loc, Value a,
                                       Value bMatrix, Value acc) {
  MLIRContext *ctx = b.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto par = utils::IteratorType::parallel;
  return linalg::GenericOp::create(
      b, loc, acc.getType(), ValueRange{a, bMatrix}, acc,
      ArrayRef<AffineMap>{AffineMap::get(3, 0, {d(0), d(2)}, ctx),
                          AffineMap::get(3, 0, {d(2), d(1)}, ctx),
                          AffineMap::get(3, 0, {d(0), d(1)}, ctx)},
      {par, par, utils::IteratorType::reduction}, gs::buildMultiplyAddBody);
}

/// Per image: (n, f, o, k) += w[f, k] * columns[n, k, o].
static linalg::LinalgOp gemmPerImage(RewriterBase &rewriter, const ConvShape &s,
                                     Value filterMatrix, Value columns) {
  MLIRContext *ctx = rewriter.getContext();
  Location loc = s.conv->getLoc();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto par = utils::IteratorType::parallel;
  Value acc = collapse(rewriter, loc, s.init, {{0}, {1}, {2, 3}});
  auto gemm = linalg::GenericOp::create(
      rewriter, loc, acc.getType(), ValueRange{filterMatrix, columns}, acc,
      ArrayRef<AffineMap>{AffineMap::get(4, 0, {d(1), d(3)}, ctx),
                          AffineMap::get(4, 0, {d(0), d(3), d(2)}, ctx),
                          AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)},
      {par, par, par, utils::IteratorType::reduction},
      gs::buildMultiplyAddBody);
  Value result = tensor::ExpandShapeOp::create(
      rewriter, loc, s.outType, gemm.getResult(0),
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  rewriter.replaceOp(s.conv, result);
  return cast<linalg::LinalgOp>(gemm.getOperation());
}

/// How a GEMM of batched images lays the output out: its dimensions
/// permuted, then grouped into the GEMM's matrix.
struct GemmLayout {
  SmallVector<int64_t, 4> permutation;
  SmallVector<ReassociationIndices, 2> groups;
};

/// out^T[f, (n, o)]: filters by the images' output positions.
static GemmLayout filtersByPositions() {
  return {{1, 0, 2, 3}, {{0}, {1, 2, 3}}};
}

/// out[(n, o), f]: the images' output positions by filters.
static GemmLayout positionsByFilters() {
  return {{0, 2, 3, 1}, {{0, 1, 2}, {3}}};
}

/// The accumulator of a GEMM computing the output in `layout`.
static Value gemmAccumulator(RewriterBase &rewriter, const ConvShape &s,
                             const GemmLayout &layout) {
  Location loc = s.conv->getLoc();
  return collapse(
      rewriter, loc,
      permutedAccumulator(rewriter, loc, s.init, layout.permutation),
      layout.groups);
}

/// Replaces the convolution by a GEMM's result `acc` in `layout`,
/// transposed back into the init (so that a tile's, or a block loop's,
/// result accumulates in place).
static void replaceByGemmResult(RewriterBase &rewriter, const ConvShape &s,
                                Value acc, const GemmLayout &layout) {
  Location loc = s.conv->getLoc();
  SmallVector<int64_t> shape;
  for (int64_t p : layout.permutation)
    shape.push_back(s.outType.getDimSize(p));
  Value result = tensor::ExpandShapeOp::create(
      rewriter, loc, s.outType.clone(shape), acc, layout.groups);
  SmallVector<int64_t> back = invertPermutationVector(layout.permutation);
  rewriter.replaceOp(
      s.conv, linalg::TransposeOp::create(rewriter, loc, result,
                                          resultDestination(s.init), back)
                  ->getResult(0));
}

/// Images batched: out^T[f, (n, o)] += w[f, k] * columns[k, (n, o)].
static linalg::LinalgOp gemmImagesBatched(RewriterBase &rewriter,
                                          const ConvShape &s,
                                          Value filterMatrix, Value columns) {
  linalg::GenericOp gemm =
      matrixProduct(rewriter, s.conv->getLoc(), filterMatrix, columns,
                    gemmAccumulator(rewriter, s, filtersByPositions()));
  replaceByGemmResult(rewriter, s, gemm.getResult(0), filtersByPositions());
  return cast<linalg::LinalgOp>(gemm.getOperation());
}

/// Images batched, the reduction `channels` input channels at a time: each
/// block's columns built and multiplied into one accumulator out^T[f,
/// (n, o)] while they are in the L2 cache, the accumulator transposed once
/// after the last block. (A whole group's columns, 7 MiB for ResNet-18's
/// 14x14 layers, were written out of the cache and read back.)
static linalg::LinalgOp gemmImagesBatchedByChannels(RewriterBase &rewriter,
                                                    const ConvShape &s,
                                                    Value filterMatrix,
                                                    int64_t channels) {
  Location loc = s.conv->getLoc();
  Type accType = s.outType.getElementType();
  Value accT = gemmAccumulator(rewriter, s, filtersByPositions());
  auto inType = cast<RankedTensorType>(s.input.getType());
  int64_t window = s.kh * s.kw;
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  // Named one by one: argument evaluation order is unspecified.
  Value first = index(0);
  Value end = index(s.c);
  Value step = index(channels);
  auto loop =
      scf::ForOp::create(rewriter, loc, first, end, step, ValueRange{accT});
  linalg::GenericOp gemm;
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(loop.getBody());
    Value channel = loop.getInductionVar();
    ConvShape block = s;
    block.c = channels;
    block.input = tensor::ExtractSliceOp::create(
        rewriter, loc,
        RankedTensorType::get(
            {s.n, channels, inType.getDimSize(2), inType.getDimSize(3)},
            inType.getElementType()),
        s.input, ValueRange{channel}, ValueRange(), ValueRange(),
        ArrayRef<int64_t>{0, ShapedType::kDynamic, 0, 0},
        ArrayRef<int64_t>{s.n, channels, inType.getDimSize(2),
                          inType.getDimSize(3)},
        ArrayRef<int64_t>{1, 1, 1, 1});
    Value firstRow =
        arith::MulIOp::create(rewriter, loc, channel, index(window));
    auto filterType = cast<RankedTensorType>(filterMatrix.getType());
    Value filterBlock = tensor::ExtractSliceOp::create(
        rewriter, loc,
        RankedTensorType::get({s.f, channels * window},
                              filterType.getElementType()),
        filterMatrix, ValueRange{firstRow}, ValueRange(), ValueRange(),
        ArrayRef<int64_t>{0, ShapedType::kDynamic},
        ArrayRef<int64_t>{s.f, channels * window}, ArrayRef<int64_t>{1, 1});
    Value columns = copyWindows(rewriter, block, {C, KH, KW, N, OH, OW},
                                {{0, 1, 2}, {3, 4, 5}}, accType);
    gemm = matrixProduct(rewriter, loc, filterBlock, columns,
                         loop.getRegionIterArgs().front());
    scf::YieldOp::create(rewriter, loc, gemm.getResult(0));
  }
  replaceByGemmResult(rewriter, s, loop.getResult(0), filtersByPositions());
  return cast<linalg::LinalgOp>(gemm.getOperation());
}

/// Images batched, the columns transposed: out[(n, o), f] += colT[(n, o), k]
/// * w^T[k, f], for windows wider than the output (weight gradients: the
/// window is an image, the output a kernel's few positions), whose copy then
/// runs along the window's rows where the other orientation's runs along
/// output rows of a few elements.
static linalg::LinalgOp gemmImagesBatchedTransposed(RewriterBase &rewriter,
                                                    const ConvShape &s,
                                                    Value filterMatrix,
                                                    Value columnsT) {
  Location loc = s.conv->getLoc();
  Value filterT = transposed(rewriter, loc, filterMatrix, {1, 0});
  linalg::GenericOp gemm =
      matrixProduct(rewriter, loc, columnsT, filterT,
                    gemmAccumulator(rewriter, s, positionsByFilters()));
  replaceByGemmResult(rewriter, s, gemm.getResult(0), positionsByFilters());
  return cast<linalg::LinalgOp>(gemm.getOperation());
}

/// The output rows of a block of per-image columns: a divisor of `rows`
/// not above `limit`, the largest whose block of columns ends in a whole
/// 16-lane vector or wastes at most 3% of the last one, else the one
/// wasting the least. The GEMM computes an edge panel of a few columns at
/// a whole vector's cost: 7 rows of 28 (196 columns, an edge of 4) ran
/// ResNet-18's 28x28 3x3 layer 8% slower than 4 rows (112 columns).
static int64_t outputRowsPerBlock(int64_t rows, int64_t width, int64_t limit) {
  auto usedFraction = [&](int64_t blockRows) {
    int64_t columns = blockRows * width;
    return static_cast<double>(columns) / llvm::alignTo(columns, 16);
  };
  int64_t best = 1;
  for (int64_t d = std::clamp<int64_t>(limit, 1, rows); d >= 1; --d) {
    if (rows % d)
      continue;
    if (usedFraction(d) >= 0.97)
      return d;
    if (usedFraction(d) > usedFraction(best))
      best = d;
  }
  return best;
}

/// Tiles `loop` of `op` by `size` (a divisor of its extent, so that the
/// tile's shapes stay static), replacing it; returns the tile's op. Along a
/// parallel loop, an output accumulated from a fill is filled tile by tile
/// instead, so that the tile's GEMM sees the fill (and makes its own, where
/// it accumulates in another layout).
static FailureOr<linalg::LinalgOp> tileFillingTiles(RewriterBase &rewriter,
                                                    linalg::LinalgOp op,
                                                    unsigned loop,
                                                    int64_t size) {
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (op.getIteratorTypesArray()[loop] != utils::IteratorType::parallel)
    fill = nullptr;
  scf::SCFTilingOptions options;
  SmallVector<int64_t> sizes(op.getNumLoops(), 0);
  sizes[loop] = size;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return rewriter.notifyMatchFailure(op, "could not be tiled");
  rewriter.replaceOp(op, tiled->replacements);
  auto tile = cast<linalg::LinalgOp>(tiled->tiledOps.front());
  if (fill) {
    auto tileLoop = cast<scf::ForOp>(tiled->loops.front().getOperation());
    rewriter.setInsertionPoint(tile);
    Value filled = linalg::FillOp::create(rewriter, fill.getLoc(),
                                          fill.getInputs(), tile.getDpsInits())
                       .getResult(0);
    rewriter.modifyOpInPlace(tile,
                             [&] { tile.getDpsInitsMutable()[0].set(filled); });
    rewriter.modifyOpInPlace(tileLoop, [&] {
      tileLoop.getInitArgsMutable()[0].set(fill.getOutputs().front());
    });
  }
  return tile;
}

/// Tiles `loop` of `conv` by `size` (tileFillingTiles) and rewrites the
/// tile's convolution.
static FailureOr<linalg::LinalgOp> tileAndRewrite(RewriterBase &rewriter,
                                                  linalg::Conv2DNchwFchwOp conv,
                                                  unsigned loop, int64_t size) {
  FailureOr<linalg::LinalgOp> tile =
      tileFillingTiles(rewriter, conv, loop, size);
  if (failed(tile))
    return failure();
  return mlir::gs::rewriteConvolutionAsGemm(
      rewriter, cast<linalg::Conv2DNchwFchwOp>(tile->getOperation()));
}

FailureOr<linalg::LinalgOp>
mlir::gs::rewriteConvolutionAsGemm(RewriterBase &rewriter,
                                   linalg::Conv2DNchwFchwOp conv) {
  ConvShape s;
  s.conv = conv;
  s.input = conv.getInputs()[0];
  s.filter = conv.getInputs()[1];
  s.init = conv.getOutputs()[0];
  auto inType = dyn_cast<RankedTensorType>(s.input.getType());
  auto filterType = dyn_cast<RankedTensorType>(s.filter.getType());
  auto outType = dyn_cast<RankedTensorType>(s.init.getType());
  if (!inType || !filterType || !outType || !inType.hasStaticShape() ||
      !filterType.hasStaticShape() || !outType.hasStaticShape() ||
      inType.getNumElements() == 0 || filterType.getNumElements() == 0 ||
      outType.getNumElements() == 0)
    return rewriter.notifyMatchFailure(conv, "needs static, non-empty shapes");
  Type accType = outType.getElementType();
  // Float inputs no wider than the accumulator.
  auto widensTo = [&](Type type) {
    return isa<FloatType>(type) && isa<FloatType>(accType) &&
           type.getIntOrFloatBitWidth() <= accType.getIntOrFloatBitWidth();
  };
  if (!widensTo(inType.getElementType()) ||
      !widensTo(filterType.getElementType()))
    return rewriter.notifyMatchFailure(
        conv, "needs floats widening to the accumulator's type");
  s.outType = outType;
  s.n = outType.getDimSize(0);
  s.f = outType.getDimSize(1);
  s.oh = outType.getDimSize(2);
  s.ow = outType.getDimSize(3);
  s.c = filterType.getDimSize(1);
  s.kh = filterType.getDimSize(2);
  s.kw = filterType.getDimSize(3);
  auto strides = conv.getStrides().getValues<int64_t>();
  auto dilations = conv.getDilations().getValues<int64_t>();
  s.strides.assign(strides.begin(), strides.end());
  s.dilations.assign(dilations.begin(), dilations.end());

  // Columns of many images are built and multiplied a group at a time.
  bool batchImages = s.n > 1 && s.oh * s.ow < gs::kConvBatchImagesBelow;
  int64_t imageBytes = s.c * s.kh * s.kw * s.oh * s.ow *
                       (accType.getIntOrFloatBitWidth() / 8);
  int64_t group = batchImages ? s.n : 1;
  // A batched group spans at least 4 register panels (128 columns).
  int64_t fewestImages = llvm::divideCeil(128, s.oh * s.ow);
  while (group > fewestImages &&
         (s.n % group || group * imageBytes > kMaxBatchedColumnBytes))
    --group;
  while (s.n % group)
    ++group;
  if (group < s.n)
    return tileAndRewrite(rewriter, conv, kImagesLoop, group);

  // Windows wider than the output (weight gradients) copy best along the
  // window's rows, into transposed columns. A dilated window (a strided
  // convolution's weight gradient) is read at a stride either way; there
  // the transposed GEMM paid off for 7x7 outputs (ResNet-18's first layer,
  // 2x), not for 3x3 or 1x1 ones (4-10% slower).
  bool transposedColumns =
      batchImages && s.kw > s.ow && s.kw >= kShortestTransposedRun &&
      (s.dilations[1] == 1 || s.oh * s.ow >= kFewestDilatedPositions);
  int64_t columnBytes = s.n * imageBytes;
  if (columnBytes > kColumnBlockBytes) {
    // Blocks of output rows, or of the reduction for transposed columns,
    // each block's columns within the L2 cache.
    if (transposedColumns) {
      // Whole channels first: a block of window rows of several channels
      // is a filter slice that the filter's transpose cannot read as a
      // matrix (it would be copied first).
      int64_t channels =
          largestDivisorAtMost(s.c, kColumnBlockBytes / (columnBytes / s.c));
      if (channels < s.c)
        return tileAndRewrite(rewriter, conv, kChannelsLoop, channels);
      // At least a panel's reduction steps per block.
      int64_t rows = largestDivisorAtMost(
          s.kh, std::max<int64_t>(kColumnBlockBytes / (columnBytes / s.kh),
                                  llvm::divideCeil(kPanelSteps, s.kw)));
      if (rows < s.kh)
        return tileAndRewrite(rewriter, conv, kWindowRowsLoop, rows);
    } else if (!batchImages) {
      int64_t rows = outputRowsPerBlock(
          s.oh, s.ow, kColumnBlockBytes / (columnBytes / s.oh));
      if (rows < s.oh)
        return tileAndRewrite(rewriter, conv, kOutputRowsLoop, rows);
    }
  }

  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  Value filterMatrix = collapse(rewriter, loc, s.filter, {{0}, {1, 2, 3}});
  if (transposedColumns) {
    Value columnsT = copyWindows(rewriter, s, {N, OH, OW, C, KH, KW},
                                 {{0, 1, 2}, {3, 4, 5}}, accType);
    return gemmImagesBatchedTransposed(rewriter, s, filterMatrix, columnsT);
  }
  if (batchImages) {
    // Blocks of channels whose columns fit the L2 cache, each a panel's
    // reduction steps at most: 32 channels (288 steps, a second panel of
    // 32) ran ResNet-18's 14x14 and 7x7 3x3 layers 4-5% slower than 16.
    int64_t channelBytes = columnBytes / s.c;
    int64_t channels =
        largestDivisorAtMost(s.c, std::min(kColumnBlockBytes / channelBytes,
                                           kPanelSteps / (s.kh * s.kw)));
    if (columnBytes > kColumnBlockBytes && channels < s.c)
      return gemmImagesBatchedByChannels(rewriter, s, filterMatrix, channels);
    Value columns = copyWindows(rewriter, s, {C, KH, KW, N, OH, OW},
                                {{0, 1, 2}, {3, 4, 5}}, accType);
    return gemmImagesBatched(rewriter, s, filterMatrix, columns);
  }
  // A 1x1 kernel at stride 1 reads each image as it is.
  if (s.kh == 1 && s.kw == 1 && s.strides[0] == 1 && s.strides[1] == 1 &&
      inType.getElementType() == accType)
    return gemmPerImage(rewriter, s, filterMatrix,
                        collapse(rewriter, loc, s.input, {{0}, {1}, {2, 3}}));
  Value columns = copyWindows(rewriter, s, {N, C, KH, KW, OH, OW},
                              {{0}, {1, 2, 3}, {4, 5}}, accType);
  return gemmPerImage(rewriter, s, filterMatrix, columns);
}

bool mlir::gs::fillsGroupGemm(linalg::Conv2DNgchwGfchwOp conv) {
  auto filterType = dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
  if (!filterType || !filterType.hasStaticShape() ||
      filterType.getNumElements() == 0)
    return false;
  int64_t filters = filterType.getDimSize(1);
  int64_t steps =
      filterType.getNumElements() / filterType.getDimSize(0) / filters;
  return filters >= kMinGroupFilters && steps >= kMinGroupSteps;
}

FailureOr<linalg::Conv2DNchwFchwOp>
mlir::gs::splitGroupedConvolution(RewriterBase &rewriter,
                                  linalg::Conv2DNgchwGfchwOp conv) {
  auto filterType = dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
  if (!conv.hasPureTensorSemantics() || conv.hasDynamicShape() || !filterType ||
      filterType.getNumElements() == 0)
    return rewriter.notifyMatchFailure(conv, "needs static, non-empty shapes");
  if (!fillsGroupGemm(conv))
    return rewriter.notifyMatchFailure(conv, "too few filters or reduction "
                                             "steps a group for a GEMM");
  Location loc = conv.getLoc();
  // Tiling replaces `conv`: the tile, a grouped convolution of one group,
  // has its strides and dilations.
  FailureOr<linalg::LinalgOp> tiled =
      tileFillingTiles(rewriter, conv, kGroupsLoop, 1);
  if (failed(tiled))
    return failure();
  auto tile = cast<linalg::Conv2DNgchwGfchwOp>(tiled->getOperation());

  // The group's slices without their unit group dimension.
  rewriter.setInsertionPoint(tile);
  Value input =
      collapse(rewriter, loc, tile.getInputs()[0], {{0, 1}, {2}, {3}, {4}});
  Value filter =
      collapse(rewriter, loc, tile.getInputs()[1], {{0, 1}, {2}, {3}, {4}});
  SmallVector<ReassociationIndices> outputGroups = {{0}, {1, 2}, {3}, {4}};
  Value init = tile.getOutputs()[0];
  auto fill = init.getDefiningOp<linalg::FillOp>();
  Value acc;
  if (fill) {
    // Filled as a 4-D tensor, which the GEMM's accumulator recognizes,
    // instead of the group's 5-D slice.
    Value destination =
        collapse(rewriter, loc, fill.getOutputs().front(), outputGroups);
    acc = linalg::FillOp::create(rewriter, loc, fill.getInputs(), destination)
              .getResult(0);
  } else {
    acc = collapse(rewriter, loc, init, outputGroups);
  }
  auto ungrouped = linalg::Conv2DNchwFchwOp::create(
      rewriter, loc, acc.getType(), ValueRange{input, filter}, acc,
      tile.getStrides(), tile.getDilations());
  rewriter.replaceOp(
      tile, tensor::ExpandShapeOp::create(rewriter, loc, init.getType(),
                                          ungrouped.getResult(0), outputGroups)
                .getResult());
  if (fill && fill->use_empty())
    rewriter.eraseOp(fill);
  return ungrouped;
}
